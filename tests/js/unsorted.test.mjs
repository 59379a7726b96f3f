// decode(..., { sorted: false }): the same survivors and probabilities as the
// sorted default, in an unspecified order (no sort of a large nucleus); the
// default stays most probable first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { llmRow, rng } from './reference.mjs';

const bd = await load();

test('sorted: false returns the sorted distribution as a set; the default is sorted', () => {
  const V = 50000;
  const row = llmRow(V, rng(9), 1.1);
  const cases = [
    { top_p: 0.9 },                   // a large nucleus
    { top_p: 0.9, temperature: 0.5 },
    {},                               // no truncation: the whole row
    { top_k: 40 },
    { min_p: 0.01 },
    { typical_p: 0.8, repetition_penalty: 1.3, history: [1, 2, 3] },
    { bregman: { divergence: 'primal', alpha: 1.5, lambda: 1e-4 } },
  ];
  for (const o of cases) {
    const s = bd.decode(row, o);
    for (let i = 1; i < s.k; i++) {
      assert.ok(s.probs[i - 1] >= s.probs[i], `default sorted: ${JSON.stringify(o)}`);
    }
    const u = bd.decode(row, { ...o, sorted: false });
    assert.equal(u.k, s.k, JSON.stringify(o));
    const want = new Map(Array.from(s.ids, (id, i) => [id, s.probs[i]]));
    let sum = 0;
    for (let i = 0; i < u.k; i++) {
      assert.ok(want.has(u.ids[i]), `${JSON.stringify(o)}: id ${u.ids[i]} not in the sorted result`);
      const p = want.get(u.ids[i]);
      assert.ok(Math.abs(u.probs[i] - p) <= 1e-7 * p + 1e-12, `${JSON.stringify(o)}: prob of ${u.ids[i]}`);
      want.delete(u.ids[i]);
      sum += u.probs[i];
    }
    assert.equal(want.size, 0);
    assert.ok(Math.abs(sum - 1) <= 1e-6);
    // sample() with return_distribution honours it too; the token is the same.
    const a = bd.sample(row, { ...o, seed: 5, return_distribution: true });
    const b = bd.sample(row, { ...o, seed: 5, return_distribution: true, sorted: false });
    assert.equal(a.token, b.token);
    assert.equal(b.distribution.ids.length, s.k);
  }
  assert.throws(() => bd.decode(row, { sorted: 'no' }), TypeError);
});
