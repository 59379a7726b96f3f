// Batch invariance: row r of decodeBatch / sampleBatch is exactly (bit for
// bit) what decode / sample give for that row alone, on a fresh instance,
// whatever the batch size, the row's position and the other rows (flat, peaked,
// huge, mostly banned, another vocabulary seen before). The failure vLLM users
// hit: a token that depends on what else was batched with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from './reference.mjs';

const alone = await load();   // single calls, nothing else ever run on it first
const batched = await load(); // batches, after unrelated work

function pick(rand, xs) { return xs[Math.floor(rand() * xs.length)]; }

function otherRow(rand, v) {
  const kind = pick(rand, ['llm', 'flat', 'peaked', 'huge', 'banned', 'ties']);
  const r = kind === 'llm' ? llmRow(v, rand, 0.5 + 2 * rand()) : new Float32Array(v);
  for (let i = 0; i < v && kind !== 'llm'; i++) {
    r[i] = kind === 'flat' ? 0 : kind === 'peaked' ? (i === 3 % v ? 50 : 0)
      : kind === 'huge' ? (rand() - 0.5) * 6e38 : kind === 'ties' ? Math.floor(rand() * 2)
        : (rand() < 0.9 ? -Infinity : rand());
  }
  if (kind === 'banned') r[Math.floor(rand() * v)] = 1;
  return r;
}

function options(rand, v, step) {
  const o = { seed: Math.floor(rand() * 1e6), step };
  const k = pick(rand, [0, 1, 2, 3, 4, 5]);
  if (k === 1) o.top_k = 1 + Math.floor(rand() * v);
  if (k === 2) { o.top_p = 0.5 + 0.5 * rand(); o.temperature = 0.5 + rand(); }
  if (k === 3) o.bregman = { alpha: pick(rand, [0.5, 1, 1.5, 3]), lambda: pick(rand, [1e-4, 1e-2]) };
  if (k === 4) { o.min_p = 0.05; o.history = [0, 1 % v, 1 % v, Math.floor(rand() * v)]; o.repetition_penalty = 1.3; }
  if (k === 5) o.temperature = 0;
  if (rand() < 0.3) o.return_distribution = true;
  if (rand() < 0.2) o.top_logprobs = 3;
  return o;
}

test('decodeBatch / sampleBatch rows equal the single calls, for every batch size and neighbours', () => {
  const rand = rng(77);
  let rows = 0;
  for (const v of [1, 2, 7, 300, 32000]) {
    for (const b of [1, 2, 3, 8, 17]) {
      if (v * b > 600000) continue;
      // Unrelated work first: another vocabulary, an error.
      batched.decode(llmRow(4096, rand), { top_p: 0.3 });
      try { batched.sample(new Float32Array([NaN])); } catch { /* expected */ }
      const logits = new Float32Array(v * b);
      const perRow = [];
      for (let r = 0; r < b; r++) {
        logits.set(rand() < 0.5 ? llmRow(v, rand) : otherRow(rand, v), r * v);
        perRow.push(options(rand, v, r));
      }
      const sampled = batched.sampleBatch(logits, v, perRow);
      const decoded = batched.decodeBatch(logits, v, perRow);
      for (let r = 0; r < b; r++) {
        const row = logits.slice(r * v, (r + 1) * v);
        assert.deepEqual(sampled[r], alone.sample(row, perRow[r]), `sample v=${v} b=${b} row ${r}`);
        assert.deepEqual(decoded[r], alone.decode(row, perRow[r]), `decode v=${v} b=${b} row ${r}`);
        rows++;
      }
      // One options object for every row: the same as each row alone with it.
      const one = perRow[0];
      const same = batched.sampleBatch(logits, v, one);
      for (let r = 0; r < b; r++) {
        assert.deepEqual(same[r], alone.sample(logits.slice(r * v, (r + 1) * v), one));
      }
      // Reversing the batch reverses the results.
      const rev = new Float32Array(v * b);
      for (let r = 0; r < b; r++) rev.set(logits.subarray(r * v, (r + 1) * v), (b - 1 - r) * v);
      const back = batched.sampleBatch(rev, v, perRow.slice().reverse());
      assert.deepEqual(back.reverse(), sampled);
    }
  }
  console.log(`# ${rows} rows compared bit for bit`);
});

test('a batch of samplers advances each exactly like the same sampler used alone', () => {
  const rand = rng(5);
  const v = 500, b = 6, steps = 40;
  const configs = Array.from({ length: b }, (_, r) => ({
    seed: 100 + r,
    repetition_penalty: 1.1 + 0.1 * r,
    ...(r % 2 ? { mirostat: 2 } : { top_k: 20 + r, bregman: { alpha: 1.5, lambda: 1e-3 } }),
    ...(r % 3 === 0 ? { dry_multiplier: 0.8 } : {}),
  }));
  const inBatch = configs.map((o) => batched.createSampler(o));
  const solo = configs.map((o) => alone.createSampler(o));
  for (let t = 0; t < steps; t++) {
    const logits = new Float32Array(v * b);
    for (let r = 0; r < b; r++) logits.set(llmRow(v, rand, 0.8 + rand()), r * v);
    const got = batched.sampleBatch(logits, v, inBatch);
    const dist = batched.decodeBatch(logits, v, inBatch);
    for (let r = 0; r < b; r++) {
      const row = logits.slice(r * v, (r + 1) * v);
      // Same order as the batches: draw (and accept), then the distribution after it.
      assert.deepEqual(got[r], solo[r].sample(row), `step ${t} row ${r} sample`);
      assert.deepEqual(dist[r], solo[r].decode(row), `step ${t} row ${r} decode`);
    }
  }
  for (let r = 0; r < b; r++) assert.equal(inBatch[r].step, solo[r].step);
  [...inBatch, ...solo].forEach((s) => s.dispose());
});

test('a bad row stops the batch with the error of that row, naming it as the single call does', () => {
  const v = 4;
  const logits = new Float32Array([0, 1, 2, 3, 0, NaN, 1, 1]);
  assert.throws(() => batched.decodeBatch(logits, v, {}), (e) => e instanceof RangeError && /NaN/.test(e.message));
  const ok = batched.decodeBatch(logits.subarray(0, 4), v, {});
  assert.deepEqual(ok[0], alone.decode(logits.slice(0, 4)));
});
