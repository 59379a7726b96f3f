// Side-by-side timing of the package against plain-JS samplers, in one run on
// the same rows: `npm run bench` (after `npm run build`). Reports the median
// time per call and the ratio plain JS / wasm. Machines here are small and
// shared: read the ratios, not the absolute numbers, and rerun to compare.
//
// The plain-JS baselines are the straightforward implementations a JS runtime
// ships (a softmax loop; top-k / top-p by sorting an index array, as the usual
// JS samplers do), written here so both sides run on the same rows.
import { load } from '../dist/node.mjs';
import { llmRow, rng } from '../tests/js/reference.mjs';

const bd = await load();
const SIZES = (process.env.BENCH_SIZES ?? '32000,131072,262144').split(',').map(Number);
const REPS = Number(process.env.BENCH_REPS ?? 30);

function median(fn) {
  const times = [];
  for (let i = 0; i < 3; i++) fn();  // warm-up (JIT, workspace growth)
  for (let i = 0; i < REPS; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// Plain JS: softmax + inverse-CDF draw.
function jsSample(logits, u) {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  const e = new Float32Array(logits.length);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += (e[i] = Math.exp(logits[i] - max));
  let cum = 0;
  const target = u * z;
  for (let i = 0; i < e.length; i++) { cum += e[i]; if (cum > target) return i; }
  return e.length - 1;
}
function jsArgmax(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}
// Plain JS: sort all ids by logit, keep a prefix, renormalise.
function jsSortedPrefix(logits, keep) {
  const ids = Array.from({ length: logits.length }, (_, i) => i);
  ids.sort((a, b) => logits[b] - logits[a] || a - b);
  return keep(ids);
}
function jsTopK(logits, k) {
  return jsSortedPrefix(logits, (ids) => ids.slice(0, k));
}
function jsTopP(logits, p) {
  return jsSortedPrefix(logits, (ids) => {
    const max = logits[ids[0]];
    let z = 0;
    for (const i of ids) z += Math.exp(logits[i] - max);
    let cum = 0;
    for (let j = 0; j < ids.length; j++) {
      cum += Math.exp(logits[ids[j]] - max) / z;
      if (cum >= p) return ids.slice(0, j + 1);
    }
    return ids;
  });
}

const rows = [];
const cases = [
  ['greedy (argmax)', (l) => jsArgmax(l), (l) => bd.sample(l, { temperature: 0 })],
  ['softmax + draw', (l) => jsSample(l, 0.5), (l) => bd.sample(l, { seed: 1 })],
  ['top_k 50 + draw', (l) => jsTopK(l, 50), (l) => bd.sample(l, { top_k: 50, seed: 1 })],
  ['top_p 0.9 + draw', (l) => jsTopP(l, 0.9), (l) => bd.sample(l, { top_p: 0.9, seed: 1 })],
  ['bregman a=1.5 (adaptive) + draw', null, (l) => bd.sample(l, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 1 })],
  ['min_p 0.05 + draw', null, (l) => bd.sample(l, { min_p: 0.05, seed: 1 })],
  ['penalties (64 history) + top_k 40', null, (l) => bd.sample(l, { top_k: 40, repetition_penalty: 1.2, history: HISTORY, seed: 1 })],
];
const HISTORY = Array.from({ length: 64 }, (_, i) => (i * 7919) % 30000);
console.log(`bregman-decoders bench: node ${process.version}, kernels ${bd.target}, median of ${REPS} calls`);
for (const v of SIZES) {
  const logits = llmRow(v, rng(v), 1.1);
  for (const [name, js, wasm] of cases) {
    const tw = median(() => wasm(logits));
    const tj = js ? median(() => js(logits)) : NaN;
    rows.push({ V: v, case: name, 'wasm ms': tw.toFixed(3), 'plain JS ms': js ? tj.toFixed(3) : '-',
      'JS / wasm': js ? (tj / tw).toFixed(1) + 'x' : '-' });
  }
}
console.table(rows);
