// The Bregman stage against the bench's floor in Node on the wasm build, side
// by side in one run: `node bench/tools/bregman_speed.mjs [V] [reps]` (after
// the build). The floor is bench/floor's copy + max + sum of exp
// (build-wasm/bench/floor.wasm), the one `npm run bench` and its targets use.
// For each (divergence, alpha) the lambda is calibrated on the same row to
// give k ~ 10, ~1000 and >= V/2. Machines here are shared: read the ratios.
import { readFileSync } from 'node:fs';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from '../../tests/js/reference.mjs';
import { loadFloor } from '../suite.mjs';

const bd = await load();
const floorModule = await loadFloor(readFileSync(new URL('../../build-wasm/bench/floor.wasm', import.meta.url)));
const V = Number(process.argv[2] ?? 262144);
const REPS = Number(process.argv[3] ?? 15);
const logits = llmRow(V, rng(V), 1.1);

function median(fn, reps = REPS) {
  const t = [];
  for (let i = 0; i < 3; i++) fn();
  for (let i = 0; i < reps; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1];
}

const floor = median(() => floorModule.maxSumExp(logits), REPS * 4);
console.log(`node ${process.version}, kernels ${bd.target}, V=${V}, floor (copy + max + sum exp) ${floor.toFixed(3)} ms`);
const modes = (process.env.MODES ?? 'primal:0.5,primal:1.5,primal:2,dual:1.5').split(',');
const targets = (process.env.TARGETS ?? `10,1000,${V / 2}`).split(',').map(Number);
for (const m of modes) {
  const [divergence, a] = m.split(':');
  const alpha = Number(a);
  const opts = (lambda) => ({ bregman: { divergence, alpha, lambda }, seed: 1 });
  const kAt = (lambda) => bd.decode(logits, opts(lambda)).k;
  for (const target of targets) {
    let lo = 1e-300, hi = 10;
    for (let it = 0; it < 60 && hi / lo > 1.0001; it++) {
      const mid = Math.sqrt(lo * hi);
      if (kAt(mid) >= target) lo = mid; else hi = mid;
    }
    const k = kAt(lo);
    const ms = median(() => bd.sample(logits, opts(lo)));
    console.log(`${divergence.padEnd(6)} alpha=${String(alpha).padEnd(4)} lambda=${lo.toPrecision(4).padEnd(10)} k=${String(k).padEnd(7)} ${ms.toFixed(3).padStart(9)} ms ${(ms / floor).toFixed(1).padStart(8)}x floor`);
  }
}
