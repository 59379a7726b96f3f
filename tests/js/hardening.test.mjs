// A hostile or careless caller: typed arrays whose own properties lie,
// options that answer differently on each read, a wasm memory run out,
// detached buffers, worst-case histories. Each case ends with the instance
// checked against a reference decode (the instance stays exact).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { load } from '../../dist/node.mjs';
import { createLogitsProcessor } from '../../dist/transformers.mjs';
import { BregmanLogitProcessor } from '../../dist/webllm.mjs';
import { llmRow, rng } from './reference.mjs';

const bd = await load();
const V = 5000;
const row = llmRow(V, rng(43));
const probe = { top_k: 3 };
const reference = bd.decode(new Float32Array(V), probe);
const referenceRow = bd.decode(row, { top_k: 40, seed: 1 });
// The instance is exact: the same calls give the same answers as before.
function assertExact(instance = bd) {
  assert.deepEqual(instance.decode(new Float32Array(V), probe), reference);
  assert.deepEqual(instance.decode(row, { top_k: 40, seed: 1 }), referenceRow);
}

class Liar extends Float32Array {
  get length() { return 64; }
}
class Overstater extends Float32Array {
  get length() { return 1 << 20; }
  get byteOffset() { return 1 << 20; }
  get buffer() { return new ArrayBuffer(8); }
  subarray() { return new Float32Array(2); }
  fill() { return this; }
}

test('a Float32Array whose length lies decodes its real row, and the instance stays exact', () => {
  const liar = new Liar(1 << 21).fill(-3e38);
  liar[12345] = 5;
  liar[(1 << 21) - 1] = 4;
  const d = bd.decode(liar, { top_k: 3 });
  assert.deepEqual(Array.from(d.ids.slice(0, 2)), [12345, (1 << 21) - 1]);
  assert.deepEqual(d, bd.decode(new Float32Array(liar), { top_k: 3 }));
  assertExact();
  // Lying upwards, with a lying byteOffset, buffer and subarray: the real row.
  const over = new Overstater(row);
  assert.deepEqual(bd.decode(over, { top_k: 40, seed: 1 }), referenceRow);
  assert.deepEqual(bd.sample(over, { top_k: 40, seed: 1 }), bd.sample(row, { top_k: 40, seed: 1 }));
  // An own property shadowing the getter.
  const shadowed = new Float32Array(row);
  Object.defineProperty(shadowed, 'length', { value: 3 });
  assert.deepEqual(bd.decode(shadowed, { top_k: 40, seed: 1 }), referenceRow);
  assertExact();
});

test('samplers, batches and inputBuffer views read the real length too', () => {
  const over = new Overstater(row);
  const a = bd.createSampler({ top_k: 40, seed: 9 }), b = bd.createSampler({ top_k: 40, seed: 9 });
  for (let i = 0; i < 3; i++) assert.deepEqual(a.sample(over), b.sample(row));
  assert.deepEqual(a.decode(new Liar(row)), b.decode(row));
  a.dispose();
  b.dispose();
  // A batch of two rows whose length and subarray lie.
  const two = new Overstater(2 * V);
  two.set(row);
  two.set(row.map((x) => -x), V);
  const want = [bd.decode(row, { top_k: 5 }), bd.decode(row.map((x) => -x), { top_k: 5 })];
  assert.deepEqual(bd.decodeBatch(two, V, { top_k: 5 }), want);
  assert.deepEqual(bd.sampleBatch(new Liar(two), V, [{ seed: 1 }, { seed: 2 }]),
    bd.sampleBatch(new Float32Array(two), V, [{ seed: 1 }, { seed: 2 }]));
  // The zero-copy view: an own length, byteOffset or buffer on it changes nothing.
  const view = bd.inputBuffer(V);
  view.set(row);
  Object.defineProperty(view, 'length', { value: 7 });
  Object.defineProperty(view, 'byteOffset', { value: 0 });
  assert.deepEqual(bd.decode(view, { top_k: 40, seed: 1 }), referenceRow);
  assert.equal(bd.inputBuffer(V), view, 'the same view comes back');
  assertExact();
});

test('a Proxy is not a Float32Array; a Float32Array of another realm is one', () => {
  const proxy = new Proxy(new Float32Array(row), {});
  assert.throws(() => bd.decode(proxy), (e) => e instanceof TypeError && /^logits must be a Float32Array/.test(e.message));
  assert.throws(() => bd.decodeBatch(proxy, V, {}), TypeError);
  const foreign = runInNewContext(`new Float32Array(${V})`);
  foreign.set(row);
  assert.deepEqual(bd.decode(foreign, { top_k: 40, seed: 1 }), referenceRow);
});

test('the adapters measure and write rows through the intrinsic getters', () => {
  // transformers.js: a Tensor-like whose data lies about its length.
  const data = new Liar(2 * V);
  data.set(row);
  data.set(row, V);
  const proc = createLogitsProcessor(bd, { top_k: 40, seed: 3 });
  const out = proc([[1n, 2n], [1n, 2n]], { data, dims: [2, V] });
  const s = bd.createSampler({ top_k: 40, seed: 3 });
  s.accept(1);
  s.accept(2);
  const token = s.sample(row).token;
  s.dispose();
  for (const r of [0, 1]) {
    const got = new Float32Array(out.data.buffer, r * V * 4, V);
    assert.equal(got[token], 0);
    assert.equal(got.filter((x) => x === 0).length, 1);
    assert.equal(got.filter((x) => x === -Infinity).length, V - 1);
  }
  proc.dispose?.();
  // WebLLM: a row whose length and fill lie.
  const webllm = new BregmanLogitProcessor(bd, { top_k: 40, seed: 3 });
  const lying = new Overstater(row);
  webllm.processLogits(lying);
  const plain = bd.createSampler({ top_k: 40, seed: 3 });
  const want = plain.sample(row).token;
  plain.dispose();
  assert.equal(lying[want], 0);
  assert.equal(new Float32Array(lying).filter((x) => x === -Infinity).length, V - 1);
  assertExact();
});

test('a detached buffer is a TypeError that names logits (or the list)', () => {
  const buf = new ArrayBuffer(4 * V);
  const a = new Float32Array(buf);
  structuredClone(buf, { transfer: [buf] });
  const named = (e) => e instanceof TypeError && /^logits: its ArrayBuffer is detached/.test(e.message);
  assert.throws(() => bd.decode(a), named);
  assert.throws(() => bd.sample(a), named);
  assert.throws(() => bd.decodeBatch(a, V, {}), named);
  const s = bd.createSampler({ seed: 1 });
  assert.throws(() => s.sample(a), named);
  s.dispose();
  const ids = new Int32Array([1, 2, 3]);
  structuredClone(ids.buffer, { transfer: [ids.buffer] });
  assert.throws(() => bd.decode(row, { history: ids, repetition_penalty: 1.2 }),
    (e) => e instanceof TypeError && /^history: its ArrayBuffer is detached/.test(e.message));
  assertExact();
});

// Options: each read once, at the call's entry.
function countingProxy(target) {
  const reads = new Map();
  const proxy = new Proxy(target, {
    get(t, k, r) {
      if (typeof k === 'string') reads.set(k, (reads.get(k) ?? 0) + 1);
      return Reflect.get(t, k, r);
    },
  });
  return { proxy, reads };
}

test('options are read once per call: each option exactly once, and that value is the one checked and used', () => {
  const o = { top_k: 40, top_p: 0.9, seed: 4, history: [1, 2, 3], repetition_penalty: 1.1, bregman: { alpha: 1.5, lambda: 1e-3 } };
  const calls = [
    ['decode', (p) => bd.decode(row, p)],
    ['sample', (p) => bd.sample(row, p)],
    ['decodeBatch', (p) => bd.decodeBatch(new Float32Array([...row, ...row]), V, p)],
    ['sampleBatch (per row)', (p) => bd.sampleBatch(new Float32Array([...row, ...row]), V, [p, { seed: 1 }])],
  ];
  for (const [name, run] of calls) {
    const { proxy, reads } = countingProxy(o);
    run(proxy);
    for (const key of Object.keys(o)) assert.equal(reads.get(key), 1, `${name}: ${key} read ${reads.get(key)} times`);
  }
  // A getter that answers 0.5 first and 1 afterwards is checked against
  // samplers with the value it gave: top_p 0.5 is not listed.
  for (const run of [(p) => bd.decode(row, p), (p) => bd.createSampler(p)]) {
    let n = 0;
    const flip = { samplers: ['top_k'], top_k: 3, get top_p() { n += 1; return n === 1 ? 0.5 : 1; } };
    assert.throws(() => run(flip), (e) => e instanceof RangeError && /samplers does not list 'top_p'/.test(e.message));
    assert.equal(n, 1);
  }
  // mirostat and bregman.k_min likewise.
  let m = 0;
  assert.throws(() => bd.decode(row, { samplers: ['top_k'], get mirostat() { m += 1; return m === 1 ? 2 : 0; } }), RangeError);
  assert.equal(m, 1);
  let kmin = 0;
  const b = { alpha: 1.5, k_max: 3, lambda: 1e-3, get k_min() { kmin += 1; return kmin === 1 ? 5 : 1; } };
  assert.throws(() => bd.decode(row, { bregman: b }), /k_min \(5\) must be <= bregman.k_max \(3\)/);
  assert.equal(kmin, 1);
  assertExact();
});

test('a sampler reads its options once, at createSampler: never again (an unseeded reset() included)', () => {
  const { proxy, reads } = countingProxy({ top_k: 40, samplers: ['top_k', 'temperature'], history: undefined });
  const s = bd.createSampler(proxy);
  const after = new Map(reads);
  assert.equal(after.get('top_k'), 1);
  assert.equal(after.get('samplers'), 1);
  s.sample(row);
  s.reset();
  s.sample(row);
  void s.name;
  s.clone().dispose();
  assert.deepEqual(reads, after, 'nothing read after createSampler');
  s.dispose();
});

test('options must be a plain object: arrays and other objects are a TypeError; inherited options count as own ones', () => {
  const plain = (e) => e instanceof TypeError && /^options must be a plain object/.test(e.message);
  for (const bad of [[], [1, 2], new Date(0), new Float32Array(2), /x/, new Set(), new Number(3)]) {
    assert.throws(() => bd.decode(row, bad), plain, String(bad));
    assert.throws(() => bd.sample(row, bad), plain);
    assert.throws(() => bd.createSampler(bad), plain);
    // (An array as a batch's perRow is its per-row list.)
    if (!Array.isArray(bad)) assert.throws(() => bd.decodeBatch(row, V, bad), plain);
    assert.throws(() => bd.sampleBatch(row, V, [bad]), plain);
  }
  assert.throws(() => bd.decode(row, { bregman: [] }), (e) => e instanceof TypeError && /^bregman must be a plain object/.test(e.message));
  // A null prototype, a defaults object as the prototype and a class
  // instance are plain: their enumerable options, own or inherited, each read once.
  const bare = Object.assign(Object.create(null), { top_k: 40, seed: 1 });
  assert.deepEqual(bd.decode(row, bare), referenceRow);
  const { proxy: defaults, reads } = countingProxy({ top_k: 40 });
  assert.deepEqual(bd.decode(row, Object.assign(Object.create(defaults), { seed: 1 })), referenceRow);
  assert.equal(reads.get('top_k'), 1);
  class Options { constructor() { this.top_k = 40; this.seed = 1; } get ignored() { return 1; } }
  assert.deepEqual(bd.decode(row, new Options()), referenceRow);
  // An unknown option is refused whether own or inherited.
  assert.throws(() => bd.decode(row, Object.create({ no_such_option: 1 })),
    (e) => e instanceof RangeError && /unknown option no_such_option/.test(e.message));
  assert.throws(() => bd.createSampler(Object.create({ top_K: 1 })), RangeError);
  // Non-enumerable own properties are not options either.
  const hidden = Object.defineProperty({ seed: 1, top_k: 40 }, 'top_p', { value: 0.1, enumerable: false });
  assert.deepEqual(bd.decode(row, hidden), referenceRow);
  assertExact();
});

test('options changed after a call or after createSampler change nothing', () => {
  const list = [5, 6];
  const o = { seed: 2, banned_tokens: list, samplers: ['logit_bias', 'top_k', 'temperature'], top_k: 40 };
  const s = bd.createSampler(o);
  const twin = bd.createSampler({ seed: 2, banned_tokens: [5, 6], samplers: ['logit_bias', 'top_k', 'temperature'], top_k: 40 });
  list.push(7);
  o.samplers.push('top_p');
  o.top_k = 1;
  for (let i = 0; i < 3; i++) assert.deepEqual(s.sample(row), twin.sample(row));
  s.dispose();
  twin.dispose();
});

// A plain twin of the rule (Hugging Face's _get_ngrams / _calc_banned_ngram_tokens).
function bannedByNgrams(history, n) {
  if (history.length + 1 < n) return new Set();
  const prefix = history.slice(history.length - (n - 1)).join(',');
  const banned = new Set();
  for (let i = 0; i + n <= history.length; i++) {
    if (history.slice(i, i + n - 1).join(',') === prefix) banned.add(history[i + n - 1]);
  }
  return banned;
}

test('no_repeat_ngram_size: random histories against the plain rule, every size', () => {
  const rand = rng(4343);
  const v = 50;
  const logits = llmRow(v, rand);
  for (let trial = 0; trial < 60; trial++) {
    const len = Math.floor(rand() * 200);
    const alphabet = 1 + Math.floor(rand() * 4);
    const history = Array.from({ length: len }, () => Math.floor(rand() * alphabet));
    for (const n of [1, 2, 3, 5, Math.floor(len / 2) + 1, len, len + 1]) {
      if (n < 1) continue;
      const banned = bannedByNgrams(history, n);
      const d = bd.decode(logits, { history, no_repeat_ngram_size: n });
      const kept = new Set(d.ids);
      for (let t = 0; t < v; t++) assert.equal(kept.has(t), !banned.has(t), `len ${len} n ${n} token ${t}`);
    }
  }
});

test('no_repeat_ngram_size 50000 over a 100000-token history at V = 262144: linear, and right', () => {
  const v = 262144;
  const logits = llmRow(v, rng(7));
  for (const period of [1, 3, 1000]) {
    const history = new Int32Array(100000).map((_, i) => i % period);
    const o = { history, no_repeat_ngram_size: 50000, top_k: v };
    bd.decode(logits, o);
    const t0 = performance.now();
    const d = bd.decode(logits, o);
    const ms = performance.now() - t0;
    console.log(`# no_repeat_ngram_size 50000, 100000 tokens, period ${period}, V = 262144: ${ms.toFixed(1)} ms`);
    assert.equal(d.k, v - 1);
    assert.ok(!Array.from(d.ids).includes(100000 % period));
    assert.ok(ms < 400, `${ms} ms per call`);
  }
});

test('decode() lists survivors whose probability is 0; k counts them; the draw never picks them', () => {
  const FLT_MAX = 3.4028234663852886e38;
  const x = new Float32Array([FLT_MAX, -FLT_MAX, 0, FLT_MAX]);
  const d = bd.decode(x);
  assert.equal(d.k, 4);
  assert.deepEqual(Array.from(d.ids), [0, 3, 2, 1]);
  assert.deepEqual(Array.from(d.probs), [0.5, 0.5, 0, 0]);
  for (let seed = 0; seed < 200; seed++) {
    const { token } = bd.sample(x, { seed });
    assert.ok(token === 0 || token === 3, `drew ${token}`);
  }
});

// In a child process: it takes the module's memory to its 2 GiB ceiling.
test('running out of wasm memory is a RangeError from every allocating call; the instance stays usable; nothing prints Aborted()', () => {
  const script = fileURLToPath(new URL('./hardening_oom.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.doesNotMatch(r.stdout + r.stderr, /Aborted/);
  assert.match(r.stdout, /^ok /m);
  console.log(r.stdout.trim().split('\n').map((l) => `# ${l}`).join('\n'));
});

test('Bregman past its log-scale budget (alpha 40, lambda 1e-300, V = 262144) is a RangeError naming k_max, in bounded time', () => {
  const rand = rng(4343);
  const v = 262144;
  const wide = new Float32Array(v);
  for (let i = 0; i < v; i++) wide[i] = 3 * Math.sqrt(-2 * Math.log(rand() + 1e-300)) * Math.cos(2 * Math.PI * rand());
  const t0 = performance.now();
  assert.throws(() => bd.decode(wide, { bregman: { alpha: 40, lambda: 1e-300 } }),
    (e) => e instanceof RangeError && /^bregman: .*log-scale solver.*bregman\.k_max/.test(e.message));
  const ms = performance.now() - t0;
  console.log(`# refused after ${ms.toFixed(0)} ms`);
  assert.ok(ms < 10000, `${ms} ms`);
  const capped = bd.decode(wide, { bregman: { alpha: 40, lambda: 1e-300, k_max: 4096 } });
  assert.ok(capped.k >= 1 && capped.k <= 4096);
  assertExact();
});
