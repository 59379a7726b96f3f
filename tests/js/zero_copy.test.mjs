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
    const dView = bd.decode(view2, o);
    assert.deepEqual(Array.from(view2), Array.from(row));
    const dCopy = bd.decode(row, o);
    assert.deepEqual(dView.ids, dCopy.ids);
    assert.deepEqual(dView.probs, dCopy.probs);
  }
  // A sampler reads the view in place too.
  const a = bd.createSampler({ seed: 11, top_k: 50, repetition_penalty: 1.3 });
  const b = bd.createSampler({ seed: 11, top_k: 50, repetition_penalty: 1.3 });
  for (let s = 0; s < 50; s++) {
    const view = bd.inputBuffer(V);
    view.set(row);
    assert.equal(a.sample(view).token, b.sample(row).token);
  }
  a.dispose();
  b.dispose();
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
