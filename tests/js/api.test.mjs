// The public contract (docs/api-contract.md) through the built package: shapes,
// the float64 reference chain, golden Bregman vectors, seeds, errors, and a
// flat heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { load } from '../../dist/node.mjs';
import { chain, compareDist, goldenCases, llmRow, rng } from './reference.mjs';

const bd = await load();
const golden = JSON.parse(readFileSync(new URL('../golden/bregman_golden.json', import.meta.url), 'utf8'));

test('load() works through import and require, and reports the WASM target', async () => {
  const require = createRequire(import.meta.url);
  const cjs = require('../../dist/index.cjs');
  const other = await cjs.load();
  assert.equal(other.target, 'WASM');
  assert.equal(bd.target, 'WASM');
  other.dispose();
});

// load() checks its options in both entries, rather than passing them to the
// module unchecked (an opaque abort for a wrong wasmBinary, 'Module.locateFile
// is not a function', typos ignored) or ignoring them.
test('load() options: unknown keys and wrong types are errors naming them, in both entries', async () => {
  const { load: loadBrowser } = await import('../../dist/index.mjs');
  const wasm = readFileSync(new URL('../../dist/bregman_decoders.wasm', import.meta.url));
  for (const entry of [load, loadBrowser]) {
    await assert.rejects(entry({ wasmBinray: wasm }), (e) => e instanceof RangeError && /unknown option wasmBinray/.test(e.message));
    await assert.rejects(entry('str'), (e) => e instanceof TypeError && /options must be an object/.test(e.message));
    await assert.rejects(entry({ wasmBinary: 'abc' }), (e) => e instanceof TypeError && /^wasmBinary/.test(e.message));
    await assert.rejects(entry({ locateFile: 'x' }), (e) => e instanceof TypeError && /^locateFile/.test(e.message));
  }
  // The browser entry in Node: the bytes work; bad bytes or no bytes fail naming where it looked.
  const viaBytes = await loadBrowser({ wasmBinary: wasm });
  assert.equal(viaBytes.sample(new Float32Array([0, 3, 1]), { temperature: 0 }).token, 1);
  viaBytes.dispose();
  const viaBuffer = await loadBrowser({ wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) });
  viaBuffer.dispose();
  await assert.rejects(loadBrowser({ wasmBinary: new Uint8Array([1, 2, 3]) }),
    (e) => /could not instantiate the given wasmBinary/.test(e.message));
  await assert.rejects(loadBrowser(), (e) => /could not instantiate bregman_decoders.wasm/.test(e.message) && /wasmBinary/.test(e.message));
  const ok = await load({ wasmBinary: wasm });  // Node: checked, unused
  ok.dispose();
});

test('decode() and sample() return the contract shapes', () => {
  const logits = new Float32Array([0.1, 2.0, -1.0, 1.5]);
  const d = bd.decode(logits, { top_k: 2 });
  assert.equal(d.k, 2);
  assert.ok(d.ids instanceof Int32Array);
  assert.ok(d.probs instanceof Float32Array);
  assert.deepEqual(Array.from(d.ids), [1, 3]);
  const s = bd.sample(logits, { top_k: 2, seed: 3 });
  assert.equal(typeof s.token, 'number');
  assert.equal(typeof s.logprob, 'number');
  assert.equal(s.k, 2);
  assert.ok(s.token === 1 || s.token === 3);
});

test('greedy: temperature 0 returns the first maximum', () => {
  const logits = new Float32Array([0, 5, 1, 5, -Infinity]);
  assert.equal(bd.sample(logits, { temperature: 0 }).token, 1);
  const d = bd.decode(logits, { temperature: 0 });
  assert.deepEqual([d.k, d.ids[0], d.probs[0]], [1, 1, 1]);
});

test('temperature / top_k / top_p / min_p match the float64 reference', () => {
  const rand = rng(7);
  let n = 0;
  for (const v of [1, 2, 5, 33, 1000, 50257]) {
    for (let rep = 0; rep < 4; rep++) {
      const logits = llmRow(v, rand, 0.7 + 0.3 * rep);
      if (rep === 2 && v > 3) { logits[0] = -Infinity; logits[1] = logits[2]; }
      for (const o of [{}, { temperature: 0.7 }, { top_k: 1 + Math.floor(rand() * (v + 1)) },
        { top_p: 0.9 }, { min_p: 0.05 }, { top_k: 40, top_p: 0.8, min_p: 0.02, temperature: 1.3 },
        { top_p: 0.5, min_keep: 3 }]) {
        const err = compareDist(bd.decode(logits, o), chain(logits, o));
        assert.equal(err, null, `V=${v} ${JSON.stringify(o)}: ${err}`);
        n++;
      }
    }
  }
  assert.ok(n > 100);
});

test('Bregman golden vectors through decode(): k exact, q within 1e-6', () => {
  const cases = goldenCases(golden);
  assert.ok(cases.length >= 300, `only ${cases.length} golden cases`);
  for (const c of cases) {
    const d = bd.decode(c.logits, c.options);
    assert.equal(d.k, c.k, c.name);
    assert.equal(compareDist(d, c, 1e-6), null, c.name);
    assert.ok(Math.abs(d.objective - c.objective) <= 1e-5 * Math.max(1, Math.abs(c.objective)), `${c.name}: objective ${d.objective} != ${c.objective}`);
  }
});

test('Bregman alpha = 1 primal with fixed k is plain top-k', () => {
  const rand = rng(9);
  const logits = llmRow(5000, rand);
  for (const k of [1, 7, 100]) {
    const got = bd.decode(logits, { bregman: { alpha: 1, k } });
    assert.equal(compareDist(got, chain(logits, { top_k: k })), null);
  }
});

test('seeded sample: same seed, same token; step walks the stream', () => {
  const logits = llmRow(32000, rng(1));
  const o = { seed: 1234, top_p: 0.95, bregman: { alpha: 1.5, lambda: 1e-4 } };
  const a = bd.sample(logits, o), b = bd.sample(logits, o);
  assert.deepEqual(a, b);
  const tokens = new Set();
  for (let step = 0; step < 50; step++) tokens.add(bd.sample(logits, { ...o, step }).token);
  assert.ok(tokens.size > 1, 'the stream should not be constant');
  // 64-bit seeds as bigint.
  assert.deepEqual(bd.sample(logits, { seed: 2n ** 63n + 5n }), bd.sample(logits, { seed: 2n ** 63n + 5n }));
});

test('the logprob of a draw is the log of its processed probability', () => {
  const logits = llmRow(2000, rng(2));
  const o = { top_k: 50, temperature: 0.8, seed: 5 };
  const d = bd.decode(logits, o);
  for (let step = 0; step < 20; step++) {
    const s = bd.sample(logits, { ...o, step });
    const i = Array.from(d.ids).indexOf(s.token);
    assert.ok(i >= 0);
    assert.ok(Math.abs(s.logprob - Math.log(d.probs[i])) < 1e-5);
  }
});

test('bad input throws TypeError/RangeError naming the option, and the module keeps working', () => {
  const logits = new Float32Array([1, 2, 3]);
  const cases = [
    [() => bd.decode([1, 2, 3]), TypeError, /logits/],
    [() => bd.decode(new Float64Array(3)), TypeError, /logits/],
    [() => bd.decode(new Float32Array([1, NaN])), RangeError, /NaN/],
    [() => bd.decode(new Float32Array(0)), RangeError, /empty/],
    [() => bd.sample(new Float32Array([-Infinity, -Infinity])), RangeError, /banned/],
    [() => bd.decode(logits, { top_p: 0 }), RangeError, /top_p/],
    [() => bd.decode(logits, { top_p: 1.5 }), RangeError, /top_p/],
    [() => bd.decode(logits, { top_p: '0.5' }), TypeError, /top_p/],
    [() => bd.decode(logits, { top_k: 1.5 }), RangeError, /top_k/],
    [() => bd.decode(logits, { top_k: -1 }), RangeError, /top_k/],
    [() => bd.decode(logits, { min_p: 2 }), RangeError, /min_p/],
    [() => bd.decode(logits, { temperature: -1 }), RangeError, /temperature/],
    [() => bd.decode(logits, { temperature: NaN }), RangeError, /temperature/],
    [() => bd.decode(logits, { topk: 3 }), RangeError, /unknown option topk/],
    [() => bd.decode(logits, { bregman: { alpha: 0, lambda: 0.1 } }), RangeError, /alpha/],
    [() => bd.decode(logits, { bregman: { alpha: 1.5, lambda: -1 } }), RangeError, /lambda/],
    [() => bd.decode(logits, { bregman: { alpha: 1.5, k: 0 } }), RangeError, /bregman\.k/],
    [() => bd.decode(logits, { bregman: { alpha: 1.5 } }), RangeError, /lambda/],
    [() => bd.decode(logits, { bregman: { alpha: 1.5, k: 2, lambda: 1 } }), RangeError, /lambda/],
    [() => bd.decode(logits, { bregman: { divergence: 'dual', alpha: 1, lambda: 0.1 } }), RangeError, /alpha/],
    [() => bd.decode(logits, { bregman: { divergence: 'sideways', lambda: 0.1 } }), RangeError, /divergence/],
    [() => bd.decode(logits, { bregman: 'yes' }), TypeError, /bregman/],
    [() => bd.decode(logits, { seed: -1 }), RangeError, /seed/],
    [() => bd.decode(logits, { seed: 1.5 }), RangeError, /seed/],
    [() => bd.decode(logits, { typical_p: 0 }), RangeError, /typical_p/],
    [() => bd.decode(logits, { logit_bias: { 7: 2 } }), RangeError, /logit_bias.*7/],
    [() => bd.decode(logits, { logit_bias: [1, 2] }), TypeError, /logit_bias/],
    [() => bd.decode(logits, { banned_tokens: [1.5] }), RangeError, /banned_tokens/],
    [() => bd.decode(logits, { allowed_tokens: 'x' }), TypeError, /allowed_tokens/],
    [() => bd.decode(logits, { history: [-1] }), RangeError, /history/],
    [() => bd.decode(logits, { mirostat: 3 }), RangeError, /mirostat/],
    [() => bd.decode(logits, { repetition_penalty: 0 }), RangeError, /repetition_penalty/],
    [() => bd.decode(logits, { samplers: ['top_q'] }), RangeError, /unknown stage 'top_q'/],
    [() => bd.decode(logits, { samplers: ['top_k'], top_p: 0.5 }), RangeError, /samplers does not list 'top_p'/],
    [() => bd.sample(logits, { step: 3 }), RangeError, /step needs a seed/],
    [() => bd.sample(logits, { banned_tokens: [0, 1, 2] }), RangeError, /every token was removed/],
    // Penalties that overflow every logit to -Infinity are named as a cause too.
    [() => bd.sample(new Float32Array([-3e38, -3e38, -3e38]), { presence_penalty: 1e38, history: [0, 1, 2] }),
      RangeError, /every token was removed.*penalties/],
  ];
  const before = bd.memoryBytes();
  for (let round = 0; round < 50; round++) {
    for (const [fn, cls, re] of cases) assert.throws(fn, (e) => e instanceof cls && re.test(e.message));
  }
  assert.equal(bd.memoryBytes(), before, 'errors must not grow memory');
  assert.deepEqual(Array.from(bd.decode(logits).ids), [2, 1, 0]);
  // Options at their "off" values are accepted.
  assert.equal(bd.decode(logits, { typical_p: 1, repetition_penalty: 1, top_p: 1, top_k: 0 }).k, 3);
});

test('steady state: 20000 calls at V = 131072 leave the heap flat', () => {
  const logits = llmRow(131072, rng(3));
  const o = { top_k: 64, bregman: { alpha: 1.5, lambda: 1e-4 }, seed: 1 };
  bd.sample(logits, o);
  bd.decode(logits, o);
  const mem = bd.memoryBytes(), ws = bd.workspaceBytes();
  for (let i = 0; i < 20000; i++) bd.sample(logits, { ...o, step: i });
  assert.equal(bd.memoryBytes(), mem);
  assert.equal(bd.workspaceBytes(), ws);
});
