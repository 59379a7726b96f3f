// The limits of the wasm build (README "Limits"): the largest vocabulary
// (maxVocab = 2^22) decodes, one past it and a 1 GiB row are RangeErrors
// raised before anything is allocated; V = 2^20 against the float64
// reference; a batch that needs the wasm memory to grow; the memory a decoder
// holds per token; samplers forgotten without dispose() are freed by the
// FinalizationRegistry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { load } from '../../dist/node.mjs';
import { chain, compareDist, llmRow, rng } from './reference.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

test('V = 2^20 decodes and samples; matches the float64 reference', async () => {
  const bd = await load();
  const v = 2 ** 20;
  const logits = llmRow(v, rng(20));
  for (const o of [{ top_k: 40 }, { top_k: 40, top_p: 0.9, temperature: 0.8 }, { min_p: 0.02 }]) {
    assert.equal(compareDist(bd.decode(logits, o), chain(logits, o)), null, JSON.stringify(o));
  }
  const s = bd.sample(logits, { top_k: 40, seed: 1, bregman: { alpha: 1.5, lambda: 1e-3 } });
  assert.ok(s.token >= 0 && s.token < v && Number.isFinite(s.logprob));
  // Memory per decoder: the workspace is about 76 bytes per token (72 here,
  // reported by workspaceBytes(), plus the 4-byte input copy).
  const perToken = bd.workspaceBytes() / v;
  console.log(`# V = 2^20: workspace ${(bd.workspaceBytes() / 2 ** 20).toFixed(1)} MiB ` +
    `(${perToken.toFixed(1)} B/token), wasm memory ${(bd.memoryBytes() / 2 ** 20).toFixed(1)} MiB`);
  assert.ok(perToken <= 80, `${perToken} bytes per token`);
  assert.ok(bd.memoryBytes() <= 100 * v, 'wasm memory within 100 B/token at V = 2^20');
  bd.dispose();
});

test('past the limits: RangeError before any allocation, and the module keeps working', async () => {
  const bd = await load();
  assert.equal(bd.maxVocab, 2 ** 22);
  const small = new Float32Array([0, 1, 2]);
  bd.decode(small);
  const mem = bd.memoryBytes();
  // A 1 GiB row with top_k 40: a RangeError, the module alive (no abort).
  const gib = new Float32Array(2 ** 28);
  for (const fn of [() => bd.decode(gib, { top_k: 40 }), () => bd.sample(gib, { top_k: 40 }),
    () => bd.createSampler({ top_k: 40 }).sample(gib),
    () => bd.decode(new Float32Array(bd.maxVocab + 1))]) {
    assert.throws(fn, (e) => e instanceof RangeError && /largest vocabulary \(4194304\)/.test(e.message));
  }
  assert.equal(bd.memoryBytes(), mem, 'nothing was allocated for the refused rows');
  assert.deepEqual(Array.from(bd.decode(small).ids), [2, 1, 0]);
  // The largest accepted row itself.
  const max = new Float32Array(bd.maxVocab);
  max[12345] = 3;
  max[777] = 2;
  const d = bd.decode(max, { top_k: 2 });
  assert.deepEqual(Array.from(d.ids), [12345, 777]);
  console.log(`# V = 2^22: wasm memory ${(bd.memoryBytes() / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(bd.memoryBytes() <= 2 ** 31);
  bd.dispose();
});

test('a batch that needs the wasm memory to grow: rows equal single calls, B x V past maxVocab', async () => {
  const bd = await load();
  const alone = await load();
  const v = 2 ** 20, b = 6;
  const before = bd.memoryBytes();
  const logits = new Float32Array(v * b);
  const rand = rng(8);
  for (let r = 0; r < b; r++) logits.set(llmRow(v, rand, 0.8 + 0.2 * r), r * v);
  const perRow = Array.from({ length: b }, (_, r) => ({ top_k: 50, seed: r, temperature: 0.7 }));
  const got = bd.sampleBatch(logits, v, perRow);
  assert.ok(bd.memoryBytes() > before, 'the memory grew during the batch');
  for (let r = 0; r < b; r++) {
    assert.deepEqual(got[r], alone.sample(logits.subarray(r * v, (r + 1) * v), perRow[r]));
  }
  // The batch size is not limited by the wasm memory (rows go in one at a
  // time): 8 rows of 2^20 = 2^23 floats, twice maxVocab.
  const big = new Float32Array(8 * v);
  for (let r = 0; r < 8; r++) big[r * v + r] = 1;
  const ids = bd.decodeBatch(big, v, { top_k: 1 }).map((x) => x.ids[0]);
  assert.deepEqual(ids, [0, 1, 2, 3, 4, 5, 6, 7]);
  bd.dispose();
  alone.dispose();
});

async function collect() {
  for (let i = 0; i < 6; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('samplers forgotten without dispose() are freed by the FinalizationRegistry', async () => {
  const bd = await load();
  const logits = llmRow(1000, rng(4));
  const round = () => {
    // Each sampler holds its own history buffer (up to 16 384 ids) and options in the
    // wasm heap: 200 of them are several MiB.
    for (let i = 0; i < 200; i++) {
      const s = bd.createSampler({ seed: i, repetition_penalty: 1.1, history: undefined });
      s.sample(logits);
    }
  };
  round();
  await collect();
  round();
  await collect();
  const mem = bd.memoryBytes();
  for (let r = 0; r < 15; r++) {
    round();
    await collect();
  }
  // Without finalization the heap would grow by about 15 x 200 x 66 KB = 198 MB.
  const grown = bd.memoryBytes() - mem;
  console.log(`# 3000 forgotten samplers: wasm memory grew ${(grown / 2 ** 20).toFixed(1)} MiB`);
  assert.ok(grown <= 8 * 2 ** 20, `memory grew ${grown} bytes`);
  bd.dispose();
});

test('dispose() frees at once; a disposed sampler is not freed twice by the registry', async () => {
  const bd = await load();
  const logits = llmRow(100, rng(5));
  const keep = [];
  for (let i = 0; i < 100; i++) {
    const s = bd.createSampler({ seed: i });
    s.sample(logits);
    s.dispose();
    keep.push(s);
  }
  keep.length = 0;
  await collect();  // the registry must not call delete() on the disposed handles
  const s = bd.createSampler({ seed: 1 });
  assert.equal(typeof s.sample(logits).token, 'number');
  s.dispose();
  bd.dispose();
});
