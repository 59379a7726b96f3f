// Zero copy: a caller writes logits straight into the module's input row
// (bd.inputBuffer(V)) and decode/sample read it in place. Same results as the
// copying path, the view is never modified (even by stages that edit the
// row), a view made stale by memory growth is detected, and the heap stays
// flat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from './reference.mjs';

const bd = await load();

const OPTIONS = [
  { seed: 3 },
  { seed: 4, temperature: 0 },
  { seed: 5, top_k: 40, top_p: 0.9, temperature: 0.8 },
  { seed: 6, min_p: 0.05 },
  { seed: 7, repetition_penalty: 1.5, history: [1, 2, 3, 10, 11], logit_bias: { 4: 3, 5: -Infinity } },
  { seed: 8, xtc_probability: 1, xtc_threshold: 0.01 },
  { seed: 9, allowed_tokens: [7, 9, 200, 3000] },
  { seed: 10, bregman: { divergence: 'primal', alpha: 1.5, lambda: 1e-3 } },
  // A packed mask is applied to a copy, never to the view.
  { seed: 11, allowed_mask: Uint32Array.from({ length: 1000 }, (_, w) => (w % 3 === 0 ? 0xffffffff : 0x00010001)) },
  { seed: 12, temperature: 0, allowed_mask: Uint32Array.from({ length: 1000 }, (_, w) => 1 << (w % 32)) },
];

test('inputBuffer: a view of the module memory; sample/decode of it equal the copying path', () => {
  const V = 32000;
  const row = llmRow(V, rng(5), 1.0);
  for (const o of OPTIONS) {
    const view = bd.inputBuffer(V);
    assert.ok(view instanceof Float32Array);
    assert.equal(view.length, V);
    view.set(row);
    const viaView = bd.sample(view, o);
    assert.deepEqual(Array.from(view), Array.from(row), `view modified by ${JSON.stringify(o)}`);
    const viaCopy = bd.sample(row, o);
    assert.equal(viaView.token, viaCopy.token, JSON.stringify(o));
    assert.equal(viaView.logprob, viaCopy.logprob);
    const view2 = bd.inputBuffer(V);
    assert.equal(view2, view, 'the same view while the memory did not grow');
    // The copying call used the same memory: the row is written again, as
    // after every inputBuffer().
    view2.set(row);
    const dView = bd.decode(view2, o);
    assert.deepEqual(Array.from(view2), Array.from(row));
    const dCopy = bd.decode(row, o);
    assert.deepEqual(dView.ids, dCopy.ids);
    assert.deepEqual(dView.probs, dCopy.probs);
  }
  // A sampler reads the view in place too, and leaves it as written.
  for (const o of [{ top_k: 50, repetition_penalty: 1.3 }, { top_k: 50, allowed_mask: OPTIONS.at(-2).allowed_mask }]) {
    const a = bd.createSampler({ seed: 11, ...o });
    const b = bd.createSampler({ seed: 11, ...o });
    for (let s = 0; s < 50; s++) {
      const view = bd.inputBuffer(V);
      view.set(row);
      const fromView = a.sample(view).token;
      if (s % 10 === 0) assert.deepEqual(Array.from(view), Array.from(row));
      assert.equal(fromView, b.sample(row).token);
    }
    a.dispose();
    b.dispose();
  }
});

test('inputBuffer: memory growth detaches old views; a stale view throws, a fresh one works', () => {
  const V = 1000;
  const row = llmRow(V, rng(6), 1.0);
  const old = bd.inputBuffer(V);
  old.set(row);
  const before = bd.sample(old, { seed: 1 }).token;
  // A much larger row makes the module grow its memory.
  const bytes = bd.memoryBytes();
  const big = new Float32Array(4_000_000);
  big[17] = 1;
  assert.equal(bd.sample(big, { temperature: 0 }).token, 17);
  assert.ok(bd.memoryBytes() > bytes, 'memory grew');
  assert.equal(old.length, 0, 'the old view is detached');
  assert.throws(() => bd.sample(old, { seed: 1 }), (e) => e instanceof RangeError && /inputBuffer/.test(e.message));
  const fresh = bd.inputBuffer(V);
  assert.notEqual(fresh, old);
  fresh.set(row);
  assert.equal(bd.sample(fresh, { seed: 1 }).token, before);
  assert.throws(() => bd.inputBuffer(0), RangeError);
  assert.throws(() => bd.inputBuffer('10'), TypeError);
});

test('inputBuffer: steady state leaves the heap flat', () => {
  const V = 131072;
  const row = llmRow(V, rng(7), 1.0);
  const run = (n) => {
    for (let i = 0; i < n; i++) {
      const view = bd.inputBuffer(V);
      view.set(row);
      bd.sample(view, { seed: i, top_k: 40, top_p: 0.9 });
    }
  };
  run(20);
  const mem = bd.memoryBytes();
  const ws = bd.workspaceBytes();
  run(500);
  assert.equal(bd.memoryBytes(), mem);
  assert.equal(bd.workspaceBytes(), ws);
});

// A call with another array copies its row into the same input: a view
// written before such a call must not decode the other row (silently); a
// longer row must not move the input under a view; a call whose own options
// grow the memory (a long history) takes a fresh view, not refusing it as
// stale; a batch given the view decodes it (no detached-buffer error).
test('inputBuffer: a row overwritten or moved since inputBuffer() is refused, never decoded', () => {
  const V = 2000;
  const row = llmRow(V, rng(8), 1.0), other = llmRow(V, rng(9), 1.0);
  const argmax = (r) => r.reduce((best, x, i) => (x > r[best] ? i : best), 0);
  assert.notEqual(argmax(row), argmax(other));
  let view = bd.inputBuffer(V);
  view.set(row);
  assert.equal(bd.sample(view, { temperature: 0 }).token, argmax(row));
  assert.equal(bd.sample(other, { temperature: 0 }).token, argmax(other));  // copies into the input
  assert.throws(() => bd.sample(view, { temperature: 0 }),
    (e) => e instanceof RangeError && /overwritten/.test(e.message));
  view = bd.inputBuffer(V);  // the protocol: ask again, write again
  view.set(row);
  assert.equal(bd.decode(view, { temperature: 0 }).ids[0], argmax(row));
  // A longer input row moves the input: the earlier view is refused.
  view = bd.inputBuffer(V);
  view.set(row);
  bd.inputBuffer(50 * V);
  assert.throws(() => bd.sample(view, { temperature: 0 }),
    (e) => e instanceof RangeError && /stale/.test(e.message));
  // So is a longer row copied in (it moves the input too).
  view = bd.inputBuffer(V);
  view.set(row);
  bd.sample(llmRow(200 * V, rng(10), 1.0), { temperature: 0 });
  assert.throws(() => bd.sample(view, { temperature: 0 }), RangeError);
});

test('inputBuffer: memory the call itself grows (a long history) keeps the fresh view valid', () => {
  const V = 1000;
  const row = llmRow(V, rng(11), 1.0);
  const history = new Array(3_000_000).fill(3);
  const want = bd.decode(row, { repetition_penalty: 1.3, penalty_last_n: 16, history });
  const bytes = bd.memoryBytes();
  const history2 = new Array(8_000_000).fill(3);
  const view = bd.inputBuffer(V);
  view.set(row);
  const got = bd.decode(view, { repetition_penalty: 1.3, penalty_last_n: 16, history: history2 });
  assert.ok(bd.memoryBytes() > bytes, 'the call grew the memory');
  assert.deepEqual(Array.from(got.ids), Array.from(want.ids));
  assert.deepEqual(Array.from(got.probs), Array.from(want.probs));
});

test('inputBuffer: a batch is refused with a RangeError naming logits', () => {
  const view = bd.inputBuffer(3000);
  assert.throws(() => bd.decodeBatch(view, 1000, {}), (e) => e instanceof RangeError && /^logits/.test(e.message));
  assert.throws(() => bd.sampleBatch(view, 1000, {}), (e) => e instanceof RangeError && /^logits/.test(e.message));
});

// A view detached by memory growth and then replaced by a fresh
// inputBuffer() is refused with a RangeError everywhere, neither reaching the
// heap copy (the engine's detached-buffer TypeError) nor giving a batch [].
test('inputBuffer: a detached view replaced since is a RangeError everywhere', async () => {
  const own = await load();
  const V = 8;
  const old = own.inputBuffer(V);
  own.decode(new Float32Array(4_000_000));  // grows the memory: `old` is detached
  assert.equal(old.length, 0);
  const fresh = own.inputBuffer(V);
  assert.notEqual(fresh, old);
  const stale = (e) => e instanceof RangeError && /stale inputBuffer/.test(e.message);
  assert.throws(() => own.decode(old), stale);
  assert.throws(() => own.sample(old, { seed: 1 }), stale);
  const s = own.createSampler({ seed: 1 });
  assert.throws(() => s.sample(old), stale);
  assert.throws(() => own.decodeBatch(old, V, {}), (e) => e instanceof RangeError && /^logits/.test(e.message));
  fresh.set([3, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(own.sample(fresh, { temperature: 0 }).token, 0, 'the fresh view still works');
  s.dispose();
  own.dispose();
});
