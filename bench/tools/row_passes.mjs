// Pass-count check for the row kernels: each decoder path at V = 262144 (or
// ROW_PASSES_V), timed side by side in one run with the bench's floors
// (bench/floor, build-wasm/bench/floor.wasm), as ratios:
//   floor 1 = copy into the floor module's memory + one plain SIMD max,
//   floor 2 = floor 1 + one SIMD sum of exp.
// Cheap decoders (greedy, min-p, top-k, top-n-sigma) are compared with
// floor 1, the ones that need the normaliser (softmax + draw, top-p, typical,
// epsilon) with floor 2. Rounds interleave every case so machine noise hits
// all of them alike; the medians are reported. The published numbers are
// `npm run bench`'s; this is the kernels' own check.
//   node bench/tools/row_passes.mjs            (after npm run build)
import { readFileSync } from 'node:fs';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from '../../tests/js/reference.mjs';
import { loadFloor } from '../suite.mjs';

const V = Number(process.env.ROW_PASSES_V ?? 262144);
const ROUNDS = Number(process.env.ROW_PASSES_ROUNDS ?? 41);
const INNER = Number(process.env.ROW_PASSES_INNER ?? 10);

const bd = await load();
const floor = await loadFloor(readFileSync(new URL('../../build-wasm/bench/floor.wasm', import.meta.url)));
const llm = llmRow(V, rng(1), 1.1);    // Zipf 1.1: a large nucleus (the "flat" case)
const peaked = llmRow(V, rng(2), 2.5); // a small nucleus

let step = 0;
const CASES = [
  ['floor 1: copy + max', null, () => floor.max(llm)],
  ['floor 2: copy + max + sum exp', null, () => floor.maxSumExp(llm)],
  ['greedy', 1, () => bd.sample(llm, { temperature: 0 })],
  ['greedy, zero copy', 1, () => bd.sample(bd.inputBuffer(V), { temperature: 0 })],
  ['min_p 0.05', 1, () => bd.sample(llm, { min_p: 0.05, seed: 1, step: step++ })],
  ['top_k 40', 1, () => bd.sample(llm, { top_k: 40, seed: 1, step: step++ })],
  ['top_k 40 + top_p 0.9', 1, () => bd.sample(llm, { top_k: 40, top_p: 0.9, seed: 1, step: step++ })],
  ['top_n_sigma 1', 1, () => bd.sample(llm, { top_n_sigma: 1, seed: 1, step: step++ })],
  ['epsilon 3e-4', 2, () => bd.sample(llm, { epsilon_cutoff: 3e-4, seed: 1, step: step++ })],
  ['softmax + draw', 2, () => bd.sample(llm, { seed: 1, step: step++ })],
  ['softmax + draw, zero copy', 2, () => bd.sample(bd.inputBuffer(V), { seed: 1, step: step++ })],
  ['top_p 0.9 (large nucleus) sample', 2, () => bd.sample(llm, { top_p: 0.9, seed: 1, step: step++ })],
  ['top_p 0.9 (small nucleus) sample', 2, () => bd.sample(peaked, { top_p: 0.9, seed: 1, step: step++ })],
  ['top_p 0.9 (large nucleus) decode', 2, () => bd.decode(llm, { top_p: 0.9 })],
  ['top_p 0.9 (large) decode unsorted', 2, () => bd.decode(llm, { top_p: 0.9, sorted: false })],
  ['typical_p 0.9', 2, () => bd.sample(llm, { typical_p: 0.9, seed: 1, step: step++ })],
];

bd.inputBuffer(V).set(llm);
const times = CASES.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  CASES.forEach(([, , fn], c) => {
    if (c === 3 || c === 10) bd.inputBuffer(V).set(llm);  // the model writes the row here
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < INNER; i++) fn();
    times[c].push(Number(process.hrtime.bigint() - t0) / 1e6 / INNER);
  });
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const m = times.map(med);
console.log(`V = ${V}, ${ROUNDS} rounds x ${INNER} calls, medians (ms), target ${bd.target}`);
CASES.forEach(([name, floor], c) => {
  const ratio = floor ? ` ${(m[c] / m[floor - 1]).toFixed(2)}x floor ${floor}` : '';
  console.log(`${name.padEnd(36)} ${m[c].toFixed(4)}${ratio}`);
});
