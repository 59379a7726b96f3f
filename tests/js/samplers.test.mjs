// The sampler suite through the package: stateful samplers (accept / reset /
// clone), batches, top_logprobs and raw log-probabilities, a chosen stage
// order, and the history stages in the stateless calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { chain, compareDist, llmRow, rng } from './reference.mjs';

const bd = await load();

test('a sampler accepts its draws: penalties see them, reset forgets, clone copies', () => {
  const logits = new Float32Array([2, 1.9, 1.8, 0, -1]);
  const o = { seed: 4, repetition_penalty: 1.5, penalty_last_n: -1, temperature: 0 };
  const s = bd.createSampler(o);
  const first = s.sample(logits).token;
  assert.equal(first, 0);
  assert.equal(s.historyLength, 1);
  // Token 0 is now penalised (2 / 1.5 < 1.9): the greedy pick moves on.
  assert.equal(s.sample(logits).token, 1);
  const c = s.clone();
  assert.equal(c.historyLength, 2);
  assert.deepEqual(c.sample(logits), s.sample(logits));
  s.reset();
  assert.equal(s.historyLength, 0);
  assert.equal(s.sample(logits).token, 0);
  // The stateless call with the same history agrees with the sampler.
  assert.equal(bd.sample(logits, { ...o, history: [0, 1] }).token, 2);
  s.dispose();
  c.dispose();
  assert.throws(() => s.sample(logits), /disposed/);
});

test('a seeded sampler replays the stateless stream step by step', () => {
  const logits = llmRow(4000, rng(8));
  const o = { seed: 99, top_k: 50, temperature: 0.9 };
  const s = bd.createSampler(o);
  for (let step = 0; step < 50; step++) {
    assert.equal(s.sample(logits).token, bd.sample(logits, { ...o, step }).token);
  }
  assert.equal(s.step, 50);
  s.dispose();
});

test('accept() feeds prompt tokens; bad tokens throw', () => {
  const s = bd.createSampler({ no_repeat_ngram_size: 2, temperature: 0 });
  const logits = new Float32Array([5, 4, 3]);
  s.accept(0); s.accept(0);   // the bigram (0, 0) exists now
  assert.equal(s.sample(logits).token, 1);  // 0 would repeat (0, 0)
  assert.throws(() => s.accept(-1), RangeError);
  assert.throws(() => s.accept('a'), TypeError);
  assert.throws(() => bd.createSampler({ history: [1] }), /accept/);
  s.dispose();
});

test('batches: one options object or per-row options and samplers', () => {
  const v = 1000, rows = 4;
  const rand = rng(12);
  const logits = new Float32Array(v * rows);
  for (let r = 0; r < rows; r++) logits.set(llmRow(v, rand), r * v);
  const perRow = [{ top_k: 5 }, { top_p: 0.5 }, { min_p: 0.1 }, { temperature: 0.5, top_k: 3 }];
  const dists = bd.decodeBatch(logits, v, perRow);
  dists.forEach((d, r) => {
    const row = logits.subarray(r * v, (r + 1) * v);
    assert.equal(compareDist(d, chain(row, perRow[r])), null, `row ${r}`);
  });
  const samplers = perRow.map((o, r) => bd.createSampler({ ...o, seed: r }));
  const a = bd.sampleBatch(logits, v, samplers);
  assert.equal(a.length, rows);
  assert.ok(samplers.every((s) => s.historyLength === 1));
  const same = bd.sampleBatch(logits, v, { top_k: 1 });
  for (let r = 0; r < rows; r++) assert.equal(same[r].token, dists[r].ids[0]);
  assert.throws(() => bd.decodeBatch(logits, 999), /multiple/);
  assert.throws(() => bd.decodeBatch(logits, v, [{}, {}]), /rows/);
  samplers.forEach((s) => s.dispose());
});

test('raw_logprob and top_logprobs describe softmax(logits)', () => {
  const logits = llmRow(3000, rng(13));
  const s = bd.sample(logits, { seed: 1, top_k: 10, top_logprobs: 5 });
  assert.equal(bd.sample(logits, { seed: 1 }).raw_logprob, undefined);
  const s2 = bd.sample(logits, { seed: 1, logprobs: true });
  assert.equal(typeof s2.raw_logprob, 'number');
  const ids = Array.from(logits.keys()).sort((a, b) => (logits[b] - logits[a]) || (a - b));
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x);
  let z = 0;
  for (const x of logits) z += Math.exp(x - max);
  const lp = (i) => logits[i] - max - Math.log(z);
  assert.ok(Math.abs(s.raw_logprob - lp(s.token)) < 1e-5);
  assert.equal(s.top_logprobs.length, 5);
  s.top_logprobs.forEach((t, i) => {
    assert.equal(t.token, ids[i]);
    assert.ok(Math.abs(t.logprob - lp(ids[i])) < 1e-5);
  });
});

test('samplers: a chosen order changes the result as documented', () => {
  // p = [0.5, 0.3, 0.15, 0.05].
  const logits = Float32Array.from([0.5, 0.3, 0.15, 0.05], Math.log);
  const a = bd.decode(logits, { samplers: ['top_k', 'top_p'], top_k: 2, top_p: 0.6 });
  // top-k 2 renormalises to [0.625, 0.375]: top-p 0.6 then keeps 1.
  assert.deepEqual(Array.from(a.ids), [0]);
  const b = bd.decode(logits, { samplers: ['top_p', 'top_k'], top_k: 2, top_p: 0.6 });
  // top-p 0.6 on the original keeps 2 (0.5 + 0.3 >= 0.6); top-k 2 keeps both.
  assert.deepEqual(Array.from(b.ids), [0, 1]);
  const c = bd.decode(logits, { samplers: ['temperature', 'min_p'], temperature: 2, min_p: 0.5 });
  // min-p after temperature 2: p ∝ sqrt(p): ratios sqrt(0.3/0.5) = 0.77 kept, sqrt(0.15/0.5) = 0.55 kept, sqrt(0.1) = 0.32 not.
  assert.deepEqual(Array.from(c.ids), [0, 1, 2]);
  const d = bd.decode(logits, { min_p: 0.5, temperature: 2 });  // default order: min-p first
  assert.deepEqual(Array.from(d.ids), [0, 1]);
  assert.ok(bd.stages.includes('bregman'));
});

test('temperature 0 in a custom order: the stages after it see its first maximum alone (llama.cpp temp 0)', () => {
  // p = [0.4, 0.1 x 6]: typical 0.15 keeps two 0.1 tokens (the most typical).
  const logits = Float32Array.from([0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], Math.log);
  const typ = { temperature: 0, typical_p: 0.15 };
  assert.notEqual(bd.sample(logits, { ...typ, samplers: ['typical_p', 'temperature'] }).token, 0);
  // llama.cpp's temp 0 sets every logit but the first maximum to -inf first.
  assert.equal(bd.sample(logits, { ...typ, samplers: ['temperature', 'typical_p'] }).token, 0);
  assert.deepEqual(Array.from(bd.decode(logits, { ...typ, samplers: ['temperature', 'typical_p'] }).ids), [0]);
  const pen = { temperature: 0, repetition_penalty: 10, history: [0] };
  const two = new Float32Array([2, 1]);
  assert.equal(bd.sample(two, { ...pen, samplers: ['penalties', 'temperature'] }).token, 1);
  assert.equal(bd.sample(two, { ...pen, samplers: ['temperature', 'penalties'] }).token, 0);
});

test('history stages in the stateless calls: bias, bans, allowed set', () => {
  const logits = new Float32Array([1, 2, 3, 4]);
  assert.deepEqual(Array.from(bd.decode(logits, { banned_tokens: [3], top_k: 1 }).ids), [2]);
  assert.deepEqual(Array.from(bd.decode(logits, { allowed_tokens: [0, 1], top_k: 5 }).ids), [1, 0]);
  assert.deepEqual(Array.from(bd.decode(logits, { logit_bias: { 0: 10 }, top_k: 1 }).ids), [0]);
  assert.deepEqual(Array.from(bd.decode(logits, { logit_bias: new Map([[3, -Infinity]]), top_k: 1 }).ids), [2]);
  const pen = bd.decode(logits, { presence_penalty: 1.5, history: [3], penalty_last_n: 1 });
  // logits become [1, 2, 3, 2.5]: order 2, 3, 1, 0.
  assert.deepEqual(Array.from(pen.ids), [2, 3, 1, 0]);
});

test('return_distribution: sample() also returns what decode() returns, and the token is in it', () => {
  const logits = llmRow(5000, rng(31));
  for (const o of [{ seed: 5 }, { seed: 6, top_k: 30, temperature: 0.7 }, { seed: 7, min_p: 0.05 },
    { seed: 8, top_p: 0.97 }, { seed: 9, bregman: { alpha: 2, lambda: 1e-4 } }, { seed: 1, temperature: 0 },
    { seed: 10, xtc_probability: 1, xtc_threshold: 0.01 }]) {
    const s = bd.sample(logits, { ...o, return_distribution: true });
    const d = bd.decode(logits, o);
    assert.equal(s.k, d.k);
    assert.deepEqual(Array.from(s.distribution.ids), Array.from(d.ids), JSON.stringify(o));
    assert.deepEqual(Array.from(s.distribution.probs), Array.from(d.probs));
    const i = Array.from(d.ids).indexOf(s.token);
    assert.ok(i >= 0);
    assert.ok(Math.abs(Math.log(d.probs[i]) - s.logprob) < 1e-4);
  }
  assert.equal(bd.sample(logits, { seed: 1 }).distribution, undefined);
  assert.throws(() => bd.sample(logits, { return_distribution: 1 }), TypeError);
});

// An unseeded sampler draws a new sequence after reset() (the transformers.js
// and WebLLM adapters reset at every new sequence, so unseeded generate()
// calls differ); Sampler.name lists bregman only with Bregman options;
// dynatemp_range with `samplers` leaving out 'temperature' is refused;
// logit_bias keys that Number() reads as ids ('', '0x7', true, null) are not
// ids.
test('reset(): an unseeded sampler draws a fresh sequence, a seeded one its own again', () => {
  const logits = llmRow(1000, rng(31), 0.8);
  const draw = (s) => Array.from({ length: 12 }, () => s.sample(logits).token);
  const unseeded = bd.createSampler({ top_k: 100, temperature: 1.2 });
  const a = draw(unseeded);
  unseeded.reset();
  const b = draw(unseeded);
  assert.notDeepEqual(a, b, 'an unseeded sampler repeated its sequence after reset()');
  assert.equal(unseeded.step, 12);
  const clone = unseeded.clone();
  assert.deepEqual(draw(clone), draw(unseeded), 'a clone shares the stream and state');
  const seeded = bd.createSampler({ top_k: 100, temperature: 1.2, seed: 9 });
  const c = draw(seeded);
  seeded.reset();
  assert.deepEqual(draw(seeded), c, 'a seeded sampler replays after reset()');
  for (const s of [unseeded, clone, seeded]) s.dispose();
});

test('Sampler.name lists the stages the options switch on', () => {
  assert.equal(bd.createSampler({ top_k: 8 }).name, 'top_k -> temperature -> dist');
  assert.equal(bd.createSampler({ bregman: { alpha: 1.5, lambda: 1e-3 } }).name, 'temperature -> bregman -> dist');
});

test('dynatemp_range needs the temperature stage in `samplers`', () => {
  const logits = llmRow(100, rng(32), 0.8);
  assert.throws(() => bd.decode(logits, { samplers: ['top_k'], top_k: 8, dynatemp_range: 0.9 }),
    (e) => e instanceof RangeError && /temperature/.test(e.message));
  const d = bd.decode(logits, { samplers: ['top_k', 'temperature'], top_k: 8, dynatemp_range: 0.9 });
  assert.equal(d.k, 8);
});

test('logit_bias keys are token ids: integers or their canonical decimal strings', () => {
  const logits = new Float32Array(16);
  for (const bias of [{ '': 100 }, { '0x7': 100 }, { ' 7': 100 }, { '07': 100 }, { '7.0': 100 },
    new Map([[true, 100]]), new Map([[null, 100]]), new Map([['0x7', 100]]), new Map([[7.5, 100]])]) {
    assert.throws(() => bd.decode(logits, { logit_bias: bias, temperature: 0 }),
      (e) => e instanceof RangeError && /logit_bias: key/.test(e.message), String([...Object.entries(bias)]));
  }
  assert.deepEqual(Array.from(bd.decode(logits, { logit_bias: { 7: 100 }, temperature: 0 }).ids), [7]);
  assert.deepEqual(Array.from(bd.decode(logits, { logit_bias: new Map([[9, 100]]), temperature: 0 }).ids), [9]);
  assert.deepEqual(Array.from(bd.decode(logits, { logit_bias: new Map([['11', 100]]), temperature: 0 }).ids), [11]);
});

// A sampler's stages see its latest 8192 tokens, always (the buffer drops its
// oldest half when full: a window of 6000 still sees 6000 tokens).
test('a sampler sees its latest 8192 tokens; a longer window is refused at createSampler', () => {
  assert.equal(bd.maxHistory, 8192);
  const V = 64, logits = llmRow(V, rng(33), 0.5);
  const history = Array.from({ length: 9001 }, (_, i) => (i * 37 + (i >> 3)) % V);
  const o = { repetition_penalty: 1.3, presence_penalty: 0.4, penalty_last_n: 8192 };
  const s = bd.createSampler(o);
  for (const t of history) s.accept(t);
  assert.equal(s.historyLength, 8192);
  const want = bd.decode(logits, { ...o, history });
  const got = s.decode(logits);
  assert.deepEqual(Array.from(got.ids), Array.from(want.ids));
  assert.deepEqual(Array.from(got.probs), Array.from(want.probs));
  s.dispose();
  assert.throws(() => bd.createSampler({ repetition_penalty: 1.1, penalty_last_n: 8193 }),
    (e) => e instanceof RangeError && /^penalty_last_n 8193/.test(e.message));
  assert.throws(() => bd.createSampler({ dry_multiplier: 0.8, dry_penalty_last_n: 10000 }),
    (e) => e instanceof RangeError && /^dry_penalty_last_n 10000/.test(e.message));
  bd.createSampler({ repetition_penalty: 1.1, penalty_last_n: -1, dry_multiplier: 0.8, dry_penalty_last_n: 8192 }).dispose();
});

// decode() at temperature 0 with Bregman reports no objective (the stage
// does not run when greedy), rather than objective: NaN.
test('decode(): no objective where Bregman does not run (greedy)', () => {
  const logits = llmRow(500, rng(34), 0.8);
  const greedy = bd.decode(logits, { temperature: 0, bregman: { alpha: 1.5, lambda: 1e-3 } });
  assert.equal(greedy.k, 1);
  assert.equal('objective' in greedy, false);
  const d = bd.decode(logits, { bregman: { alpha: 1.5, lambda: 1e-3 } });
  assert.ok(Number.isFinite(d.objective) && d.objective > 0);
});

// decode() without a seed runs XTC on the module's unseeded stream (as
// sample() does), not at a fixed seed 0, step 0 where its coin would fall the
// same way on every call. Both ways must show up over 64 calls at probability 1/2
// (all alike has probability 2^-63); a seeded decode() stays fixed.
test('decode() without a seed: XTC draws its coin from the unseeded stream', () => {
  const logits = new Float32Array([3, 2.9, 2.8, 0, -1, -2]);
  const o = { xtc_probability: 0.5, xtc_threshold: 0.05 };
  const kept = new Set();
  for (let i = 0; i < 64; i++) kept.add(bd.decode(logits, o).k);
  assert.deepEqual([...kept].sort((a, b) => a - b), [4, 6]);
  const seeded = new Set();
  for (let i = 0; i < 16; i++) seeded.add(bd.decode(logits, { ...o, seed: 3 }).k);
  assert.equal(seeded.size, 1);
});

// A sampler keeps its own copy of the options: changing the caller's object
// (or an array or object inside it) after createSampler changes neither
// `name` nor what an unseeded sampler runs after reset().
test('a sampler\'s options are fixed at creation: later changes to the object do not reach it', () => {
  const logits = new Float32Array([2, 1.9, 1.8, 0, -1]);
  const o = { top_k: 3, banned_tokens: [4], bregman: { alpha: 1.5, k: 3 } };
  const s = bd.createSampler(o);
  const name = s.name;
  const want = s.decode(logits);
  o.top_k = 1;
  o.min_p = 0.5;
  o.banned_tokens.push(0);
  o.bregman.k = 1;
  assert.equal(s.name, name);
  s.reset();  // unseeded: a new wasm sampler, from the options it was created with
  assert.deepEqual(s.decode(logits), want);
  const c = s.clone();
  c.reset();
  assert.deepEqual(c.decode(logits), want);
  [s, c].forEach((x) => x.dispose());
});
