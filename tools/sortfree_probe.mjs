// What a sort-free large-k Bregman path would cost natively and in wasm
// (tools/sortfree_probe.cc), next to the library's sample() at the same k, on
// the bench's rows (V = 262144; lambdas from bench/results.json's
// calibration, k ~ V/2). For each: ms (min over rounds), the ratio to the
// floor of its own build, and the ratio of ratios native / wasm that issue 9
// wants within 1.5. Run after `npm run build` (build/, build-wasm/, dist/):
//   node tools/sortfree_probe.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as suite from '../bench/suite.mjs';
import { load } from '../dist/node.mjs';

const root = new URL('..', import.meta.url).pathname;
const V = 262144;
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 200);
const CONFIGS = (process.env.PROBE_CONFIGS ?? 'bregman_dual_1.5_khalf,bregman_primal_2_khalf').split(',');
const calibration = JSON.parse(readFileSync(join(root, 'bench/results.json'), 'utf8')).calibration;
const bd = await load();
const dir = mkdtempSync(join(tmpdir(), 'bd-probe-'));

const { instance } = await WebAssembly.instantiate(readFileSync(join(root, 'build-wasm/tools/sortfree_probe.wasm')), {
  wasi_snapshot_preview1: new Proxy({}, { get: () => () => 0 }),
  env: new Proxy({}, { get: () => () => 0 }),
});
const probe = instance.exports;
probe._initialize?.();

const min = (f) => {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    f();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
};
const fmt = (x) => x.toFixed(3);

for (const kind of ['llm', 'flat']) {
  const row = suite.makeRow(kind, V, V * 7 + (kind === 'flat' ? 1 : 0));
  const file = join(dir, `${kind}.f32`);
  writeFileSync(file, Buffer.from(row.buffer));
  for (const id of CONFIGS) {
    const c = suite.configs().find((x) => x.id === id);
    const lambda = calibration[`${kind}-${V}`][id].lambda;
    const opts = { ...suite.optionsFor(c, lambda), seed: suite.SEED, step: suite.STEP };
    const k = bd.decode(row, suite.optionsFor(c, lambda)).k;
    // wasm: the probe's stages and the library's sample(), interleaved warm-up.
    new Float32Array(probe.memory.buffer, probe.probe_buffer(), V).set(row);
    probe.probe_setup(V, k);
    for (let w = 0; w < 20; w++) { for (let s = 0; s <= 6; s++) probe.probe_run(V, s); bd.sample(row, opts); }
    const wasm = [];
    for (let s = 0; s <= 6; s++) wasm.push(min(() => probe.probe_run(V, s)));
    const wasmSample = min(() => bd.sample(row, opts));
    // native: the probe and bd_native_bench (the library's Decoder::Sample).
    const native = execFileSync(join(root, 'build/bd_sortfree_probe'), [file, String(k), String(ROUNDS)], { encoding: 'utf8' })
      .trim().split('\n').map((l) => JSON.parse(l).ms);
    const jobs = join(dir, 'jobs.tsv');
    const b = opts.bregman;
    writeFileSync(jobs, [file, id, `bregman_divergence=${b.divergence}`, `bregman_alpha=${b.alpha}`,
      `bregman_lambda=${b.lambda}`, `seed=${opts.seed}`, `step=${opts.step}`].join('\t') + '\n');
    const nativeSample = JSON.parse(execFileSync(join(root, 'build/bd_native_bench'), [jobs, String(ROUNDS), '4000'],
      { encoding: 'utf8' }).trim()).ms;
    const [nf, wf] = [native[0], wasm[0]];
    console.log(`\n${kind} row, ${c.label} (k = ${k}); floor native ${fmt(nf)} ms, wasm ${fmt(wf)} ms (${fmt(wf / nf)}x)`);
    console.log('| | native ms | wasm ms | wasm / native | native ratio / wasm ratio |');
    console.log('|---|---|---|---|---|');
    const line = (label, n, w) => console.log(`| ${label} | ${fmt(n)} | ${fmt(w)} | ${fmt(w / n)} | ${fmt((n / nf) / (w / wf))} |`);
    const names = ['floor', '+ gather', '+ cells', '+ scatter', '+ float64 p', '+ moments', '+ increments'];
    for (let s = 1; s <= 6; s++) line(`probe ${s}: ${names[s]}`, native[s], wasm[s]);
    line('library sample() today', nativeSample, wasmSample);
  }
}
