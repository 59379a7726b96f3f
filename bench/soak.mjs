// Soak: N calls (default 10^6) through a stateful mixed chain, a stateless
// Bregman call, a general-alpha dual Bregman call (five alphas in turn, so
// the four per-thread start tables are rebuilt as they rotate) and decodes (min-p, and Bregman
// with its objective), checking that the wasm heap and the workspace
// stay flat and every result stays valid. `npm run soak` (after a build);
// SOAK_CALLS=100000 for a shorter run.
import { load } from '../dist/node.mjs';
import { llmRow, rng } from '../tests/js/reference.mjs';

const N = Number(process.env.SOAK_CALLS ?? 1e6);
const V = Number(process.env.SOAK_VOCAB ?? 32000);
const bd = await load();
const rows = Array.from({ length: 8 }, (_, i) => llmRow(V, rng(100 + i), 0.8 + 0.1 * i));
const sampler = bd.createSampler({ seed: 1, repetition_penalty: 1.2, dry_multiplier: 0.5, no_repeat_ngram_size: 4,
  top_k: 100, top_p: 0.95, mirostat: 2, temperature: 0.9 });
const DUAL_ALPHAS = [1.25, 1.7, 2.5, 3.5, 4.5];
const dual = (i) => ({ bregman: { divergence: 'dual', alpha: DUAL_ALPHAS[i % 5], lambda: 1e-4 }, seed: i });
// Warm-up: every row in every mode once (the workspace's buffers grow to the
// largest need seen: the Bregman sketch's node arrays follow each row's
// block count, not only V), then the steady state must not allocate.
const warm = (row) => {
  sampler.sample(row);
  bd.sample(row, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: 1 });
  for (let j = 0; j < 5; j++) bd.sample(row, dual(j));
  bd.decode(row, { min_p: 0.05, top_logprobs: 5 });
  bd.decode(row, dual(2));  // with the objective (its tail pass)
};
for (let i = 0; i < 100; i++) warm(rows[i & 7]);
const mem0 = bd.memoryBytes(), ws0 = bd.workspaceBytes();
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const row = rows[i & 7];
  let token;
  switch (i % 4) {
    case 0: token = sampler.sample(row).token; break;
    case 1: token = bd.sample(row, { bregman: { alpha: 1.5, lambda: 1e-3 }, seed: i }).token; break;
    case 2: token = bd.sample(row, dual(i >> 2)).token; break;
    // Every other one a Bregman decode(): the objective's tail pass too.
    default: token = (i & 4 ? bd.decode(row, dual(i >> 3)) : bd.decode(row, { min_p: 0.05 })).ids[0];
  }
  if (!(token >= 0 && token < V)) throw new Error(`call ${i}: invalid token ${token}`);
  if (i % 100000 === 99999) {
    console.log(`${i + 1} calls, heap ${bd.memoryBytes()} B, workspace ${bd.workspaceBytes()} B, ` +
      `${((performance.now() - t0) / (i + 1) * 1000).toFixed(1)} us/call`);
  }
}
const ok = bd.memoryBytes() === mem0 && bd.workspaceBytes() === ws0;
console.log(`${N} calls at V = ${V}: heap ${mem0} -> ${bd.memoryBytes()} B, workspace ${ws0} -> ${bd.workspaceBytes()} B: ${ok ? 'flat' : 'GREW'}`);
sampler.dispose();
process.exit(ok ? 0 : 1);
