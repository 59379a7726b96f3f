// The whole option surface swept for bad input: every option's wrong types,
// NaN, out-of-range values and ids; aux arrays; a sampler used with another
// vocabulary; disposed objects; samplers of another instance; re-entrant calls
// from an options getter or Proxy. Each case must throw the named class with a
// message naming the option, and afterwards the instance must draw exactly
// what it drew before, with its memory flat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';

const bd = await load();
const V = 8;
const row = new Float32Array(Array.from({ length: V }, (_, i) => -0.5 * i));

// [option, a value out of its range] for every scalar option.
const OUT_OF_RANGE = {
  temperature: [-0.1, Infinity, 1e31, 3e38],
  dynatemp_range: [-1, Infinity, 1e31],
  dynatemp_exponent: [0, -1],
  top_k: [-1, 2.5],
  top_p: [0, 1.01, -0.5],
  min_p: [-0.1, 1.5],
  min_keep: [-1, 0.5],
  typical_p: [0, 2],
  epsilon_cutoff: [-0.1, 1],
  eta_cutoff: [-0.1, 1],
  top_n_sigma: [-1, Infinity],
  xtc_probability: [-0.1, 1.1],
  xtc_threshold: [-0.1, 1.1],
  repetition_penalty: [0, -1, Infinity],
  frequency_penalty: [Infinity, -Infinity],
  presence_penalty: [Infinity],
  penalty_last_n: [-2, 1.5],
  dry_multiplier: [-1, Infinity],
  dry_base: [0.5, Infinity],
  dry_allowed_length: [-1, 0.5],
  dry_penalty_last_n: [-2],
  no_repeat_ngram_size: [-1, 1.5],
  mirostat: [3, -1, 1.5],
  top_logprobs: [-1, 1.5],
};
const ID_LISTS = ['history', 'banned_tokens', 'allowed_tokens', 'dry_sequence_breakers'];

function cases() {
  const c = [];
  const add = (name, fn, cls, re) => c.push({ name, fn, cls, re });
  for (const [opt, bad] of Object.entries(OUT_OF_RANGE)) {
    const re = new RegExp(opt);
    for (const call of ['decode', 'sample']) {
      add(`${call} ${opt}: string`, () => bd[call](row, { [opt]: '1' }), TypeError, re);
      add(`${call} ${opt}: null`, () => bd[call](row, { [opt]: null }), TypeError, re);
      add(`${call} ${opt}: NaN`, () => bd[call](row, { [opt]: NaN }), RangeError, re);
      for (const v of bad) add(`${call} ${opt}: ${v}`, () => bd[call](row, { [opt]: v }), RangeError, re);
    }
    add(`createSampler ${opt}: string`, () => bd.createSampler({ [opt]: '1' }), TypeError, re);
    for (const v of bad) add(`createSampler ${opt}: ${v}`, () => bd.createSampler({ [opt]: v }), RangeError, re);
  }
  // Mirostat's own parameters, with mirostat on and off (as every other
  // stage's: checked whether the stage runs or not).
  for (const opt of ['mirostat_tau', 'mirostat_eta']) {
    for (const v of [0, -1, Infinity, NaN]) {
      add(`${opt}: ${v}`, () => bd.createSampler({ mirostat: 2, [opt]: v }), RangeError, new RegExp(opt));
      add(`${opt}: ${v} without mirostat`, () => bd.decode(row, { [opt]: v }), RangeError, new RegExp(opt));
      add(`createSampler ${opt}: ${v} without mirostat`, () => bd.createSampler({ [opt]: v }), RangeError, new RegExp(opt));
    }
  }
  for (const opt of ['logprobs', 'return_distribution']) {
    add(`${opt}: 1`, () => bd.sample(row, { [opt]: 1 }), TypeError, new RegExp(opt));
  }
  // Token-id lists: type, element type, element range, and against V.
  for (const opt of ID_LISTS) {
    const re = new RegExp(opt);
    const on = opt === 'dry_sequence_breakers' ? { dry_multiplier: 0.8 } : {};
    add(`${opt}: a string`, () => bd.decode(row, { ...on, [opt]: '1,2' }), TypeError, re);
    add(`${opt}: a Float32Array`, () => bd.decode(row, { ...on, [opt]: new Float32Array([1]) }), TypeError, re);
    add(`${opt}: ['1']`, () => bd.decode(row, { ...on, [opt]: ['1'] }), TypeError, re);
    for (const v of [-1, 1.5, NaN, 2 ** 31, V, V + 100]) {
      add(`${opt}: [${v}]`, () => bd.decode(row, { ...on, [opt]: [0, v] }), RangeError, re);
    }
    add(`${opt}: Int32Array [V]`, () => bd.sample(row, { ...on, seed: 1, [opt]: new Int32Array([V]) }),
      RangeError, re);
  }
  // An empty row with ids in the options: the row's error, not the ids'
  // ("history: token id 1 is outside the vocabulary [0, 0)").
  for (const opt of ID_LISTS) {
    add(`empty logits with ${opt}`, () => bd.decode(new Float32Array(0), { [opt]: [1] }), RangeError, /^logits must not be empty/);
  }
  add('empty logits with logit_bias', () => bd.sample(new Float32Array(0), { logit_bias: { 1: 1 } }), RangeError, /^logits must not be empty/);
  // A history id outside [0, V) with a penalty on.
  add('history id V with repetition_penalty',
    () => bd.sample(row, { history: [1, V], repetition_penalty: 1.3, seed: 1 }), RangeError, /history.*8/);
  add('logit_bias: key V', () => bd.decode(row, { logit_bias: { [V]: 1 } }), RangeError, /logit_bias/);
  add('logit_bias: key -1', () => bd.decode(row, { logit_bias: { '-1': 1 } }), RangeError, /logit_bias/);
  add('logit_bias: key "x"', () => bd.decode(row, { logit_bias: { x: 1 } }), RangeError, /logit_bias/);
  add('logit_bias: Map key 2.5', () => bd.decode(row, { logit_bias: new Map([[2.5, 1]]) }), RangeError, /logit_bias/);
  add('logit_bias: value "1"', () => bd.decode(row, { logit_bias: { 1: '1' } }), TypeError, /logit_bias/);
  add('logit_bias: value NaN', () => bd.decode(row, { logit_bias: { 1: NaN } }), RangeError, /logit_bias/);
  add('logit_bias: value +Infinity', () => bd.decode(row, { logit_bias: { 1: Infinity } }), RangeError, /logit_bias/);
  add('logit_bias: null', () => bd.decode(row, { logit_bias: null }), TypeError, /logit_bias/);
  // Bregman: every field.
  const br = (b) => () => bd.sample(row, { seed: 1, bregman: b });
  add('bregman: fixed k = V + 1 (the issue)', br({ alpha: 1.5, k: V + 1 }), RangeError, /bregman\.k/);
  add('bregman: fixed k = 2^31', br({ alpha: 1.5, k: 2 ** 31 }), RangeError, /bregman\.k/);
  add('bregman: k 1.5', br({ alpha: 1.5, k: 1.5 }), RangeError, /bregman\.k/);
  add('bregman: k "2"', br({ alpha: 1.5, k: '2' }), TypeError, /bregman\.k/);
  add('bregman: alpha NaN', br({ alpha: NaN, lambda: 0.1 }), RangeError, /bregman\.alpha/);
  add('bregman: alpha Infinity', br({ alpha: Infinity, lambda: 0.1 }), RangeError, /bregman\.alpha/);
  add('bregman: alpha "2"', br({ alpha: '2', lambda: 0.1 }), TypeError, /bregman\.alpha/);
  add('bregman: lambda Infinity', br({ alpha: 2, lambda: Infinity }), RangeError, /bregman\.lambda/);
  add('bregman: lambda NaN', br({ alpha: 2, lambda: NaN }), RangeError, /bregman\.lambda/);
  add('bregman: divergence 1', br({ divergence: 1, lambda: 0.1 }), TypeError, /bregman\.divergence/);
  add('bregman: k_min 0', br({ alpha: 2, lambda: 0.1, k_min: 0 }), RangeError, /bregman\.k_min/);
  add('bregman: k_max 0', br({ alpha: 2, lambda: 0.1, k_max: 0 }), RangeError, /bregman\.k_max/);
  add('bregman: k_min > k_max', br({ alpha: 2, lambda: 0.1, k_min: 3, k_max: 2 }), RangeError, /k_min/);
  add('bregman: unknown field', br({ alpha: 2, lambda: 0.1, beta: 1 }), RangeError, /bregman\.beta/);
  add('bregman: dual alpha 0.5', br({ divergence: 'dual', alpha: 0.5, k: 2 }), RangeError, /bregman\.alpha/);
  // samplers
  add('samplers: a string', () => bd.decode(row, { samplers: 'top_k' }), TypeError, /samplers/);
  add('samplers: [1]', () => bd.decode(row, { samplers: [1] }), TypeError, /samplers\[0\]/);
  add('samplers: too long', () => bd.decode(row, { samplers: Array(100).fill('top_k') }), RangeError, /samplers/);
  // seed / step
  for (const opt of ['seed', 'step']) {
    const base = opt === 'step' ? { seed: 1 } : {};
    add(`${opt}: -1`, () => bd.sample(row, { ...base, [opt]: -1 }), RangeError, new RegExp(opt));
    add(`${opt}: 2^53`, () => bd.sample(row, { ...base, [opt]: 2 ** 53 }), RangeError, new RegExp(opt));
    add(`${opt}: 2n^64`, () => bd.sample(row, { ...base, [opt]: 2n ** 64n }), RangeError, new RegExp(opt));
    add(`${opt}: -1n`, () => bd.sample(row, { ...base, [opt]: -1n }), RangeError, new RegExp(opt));
    add(`${opt}: "1"`, () => bd.sample(row, { ...base, [opt]: '1' }), TypeError, new RegExp(opt));
  }
  // options and logits themselves
  add('options: a number', () => bd.decode(row, 3), TypeError, /options/);
  add('options: a string', () => bd.sample(row, 'greedy'), TypeError, /options/);
  add('unknown option', () => bd.sample(row, { top_K: 3 }), RangeError, /unknown option top_K/);
  add('logits: null', () => bd.decode(null), TypeError, /logits/);
  add('logits: Float64Array', () => bd.sample(new Float64Array(4)), TypeError, /logits/);
  add('logits: Uint8Array', () => bd.sample(new Uint8Array(4)), TypeError, /logits/);
  add('logits: +Infinity', () => bd.sample(new Float32Array([0, Infinity])), RangeError, /Infinity/);
  add('logits: longer than maxVocab', () => bd.decode(new Float32Array(bd.maxVocab + 1)), RangeError,
    /largest vocabulary/);
  // batches
  const two = new Float32Array([...row, ...row]);
  add('batch: vocab 0', () => bd.decodeBatch(two, 0, {}), RangeError, /vocab/);
  add('batch: vocab 3', () => bd.decodeBatch(two, 3, {}), RangeError, /multiple of vocab/);
  add('batch: vocab "8"', () => bd.sampleBatch(two, '8', {}), TypeError, /vocab/);
  add('batch: vocab past maxVocab', () => bd.sampleBatch(two, bd.maxVocab + 1, {}), RangeError, /vocab/);
  add('batch: 3 options for 2 rows', () => bd.sampleBatch(two, V, [{}, {}, {}]), RangeError, /per-row/);
  add('batch: a bad row option', () => bd.sampleBatch(two, V, [{}, { top_p: 2 }]), RangeError, /top_p/);
  add('batch: logits array', () => bd.sampleBatch([1, 2], 1, {}), TypeError, /logits/);
  // Options given as a Map (as logit_bias may be) have no own keys, so every
  // option in it would be silently ignored (top_k 1 decoding the whole row),
  // and bregman as a Map would read 'needs exactly one of lambda or k': both
  // are TypeErrors.
  const asMap = new Map([['top_k', 1], ['seed', 3]]);
  add('options: a Map (decode)', () => bd.decode(row, asMap), TypeError, /options must be a plain object, got a Map/);
  add('options: a Map (sample)', () => bd.sample(row, asMap), TypeError, /options must be a plain object, got a Map/);
  add('options: a Map (createSampler)', () => bd.createSampler(asMap), TypeError, /options must be a plain object, got a Map/);
  add('options: a Map (batch)', () => bd.decodeBatch(two, V, [{}, asMap]), TypeError, /options must be a plain object, got a Map/);
  add('bregman: a Map', () => bd.decode(row, { bregman: new Map([['alpha', 1.5], ['lambda', 1e-3]]) }), TypeError, /bregman must be a plain object, got a Map/);
  return c;
}

test('every bad option, id, list and input: the named error, and the module keeps working', () => {
  const all = cases();
  const want = bd.sample(row, { top_k: 5, seed: 9, bregman: { alpha: 1.5, lambda: 1e-3 } });
  bd.decode(new Float32Array(4096));  // warm the workspace past every case's size
  const mem = bd.memoryBytes(), ws = bd.workspaceBytes();
  for (let round = 0; round < 3; round++) {
    for (const { name, fn, cls, re } of all) {
      let thrown = null;
      try { fn(); } catch (e) { thrown = e; }
      assert.ok(thrown !== null, `${name}: accepted silently`);
      assert.ok(thrown instanceof cls, `${name}: threw ${thrown?.constructor?.name}: ${thrown?.message}`);
      assert.match(thrown.message, re, `${name}: message does not name the option`);
      assert.deepEqual(bd.sample(row, { top_k: 5, seed: 9, bregman: { alpha: 1.5, lambda: 1e-3 } }), want,
        `${name}: the next call drew differently`);
    }
  }
  assert.equal(bd.memoryBytes(), mem, 'errors grew the wasm memory');
  assert.equal(bd.workspaceBytes(), ws);
  console.log(`# ${all.length} bad inputs, each rejected with the named error`);
});

test('fixed bregman.k = V is accepted; k above the survivors of a truncation is clamped (documented)', () => {
  const d = bd.decode(row, { bregman: { alpha: 1.5, k: V } });
  assert.equal(d.k, V);
  const t = bd.decode(row, { top_k: 3, bregman: { alpha: 1.5, k: V } });
  assert.equal(t.k, 3);
});

test('a sampler is bound to the vocabulary of its first row; reset() forgets it', () => {
  const s = bd.createSampler({ repetition_penalty: 1.2, seed: 4 });
  s.sample(row);
  const big = new Float32Array(2 * V);
  assert.throws(() => s.sample(big), (e) => e instanceof RangeError && /sampler.*vocabulary size 8/.test(e.message));
  assert.throws(() => s.decode(big), RangeError);
  assert.throws(() => bd.sampleBatch(big, 2 * V, [s]), RangeError);
  assert.throws(() => s.accept(V), (e) => e instanceof RangeError && /token 8.*\[0, 8\)/.test(e.message));
  assert.throws(() => s.accept(-1), (e) => e instanceof RangeError && /token/.test(e.message));
  assert.throws(() => s.accept(1.5), RangeError);
  assert.throws(() => s.accept('1'), TypeError);
  const c = s.clone();
  assert.throws(() => c.sample(big), RangeError, 'a clone keeps the binding');
  assert.equal(s.historyLength, 1, 'failed calls accepted nothing');
  s.reset();
  s.accept(2 * V - 1);
  assert.equal(s.sample(big).k > 0, true);
  // A fresh sampler accepts ids below 2^31 before its first row, and then
  // refuses a row that does not contain them (the native state check).
  const f = bd.createSampler({ repetition_penalty: 1.2, seed: 4 });
  f.accept(100);
  assert.throws(() => f.sample(row), (e) => e instanceof RangeError && /sampler.*100.*\[0, 8\)/.test(e.message));
  assert.throws(() => f.accept(2 ** 31), RangeError);
  [s, c, f].forEach((x) => x.dispose());
});

test('disposed samplers and instances: TypeError naming what was disposed, never a trap', async () => {
  const other = await load();
  const s = other.createSampler({ seed: 1 });
  s.sample(row);
  s.dispose();
  s.dispose();  // idempotent
  for (const fn of [() => s.sample(row), () => s.decode(row), () => s.accept(1), () => s.reset(),
    () => s.clone(), () => s.step, () => s.historyLength, () => s.name,
    () => other.sampleBatch(row, V, [s])]) {
    assert.throws(fn, (e) => e instanceof TypeError && /sampler was disposed/.test(e.message));
  }
  const live = other.createSampler({ seed: 1 });
  other.dispose();
  other.dispose();
  for (const fn of [() => other.decode(row), () => other.sample(row), () => other.createSampler({}),
    () => other.decodeBatch(row, V, {}), () => other.workspaceBytes(), () => other.memoryBytes(),
    () => other.inputBuffer(V), () => live.sample(row)]) {
    assert.throws(fn, (e) => e instanceof TypeError && /instance was disposed/.test(e.message));
  }
  live.dispose();  // still allowed: frees the sampler's memory
});

test('a sampler of another instance in a batch is a TypeError (its pointer belongs to another module)', async () => {
  const other = await load();
  const foreign = other.createSampler({ seed: 1 });
  assert.throws(() => bd.sampleBatch(row, V, [foreign]),
    (e) => e instanceof TypeError && /another bregman-decoders instance/.test(e.message));
  assert.throws(() => bd.decodeBatch(row, V, [foreign]), TypeError);
  foreign.dispose();
  other.dispose();
});

test('re-entrant calls from an options getter or Proxy are refused; the outer call is unharmed', () => {
  const inner = [];
  const attempt = (fn) => { try { fn(); inner.push('none'); } catch (e) { inner.push(e); } };
  const reenter = () => {
    attempt(() => bd.sample(row, { seed: 1 }));
    attempt(() => bd.decode(row));
    attempt(() => bd.createSampler({}));
    attempt(() => bd.sampleBatch(row, V, {}));
    attempt(() => bd.dispose());
  };
  const want = bd.sample(row, { top_k: 3, seed: 5 });
  // A getter on an option.
  const got = bd.sample(row, { seed: 5, get top_k() { reenter(); return 3; } });
  assert.deepEqual(got, want);
  // A Proxy over the options object and over a token list.
  const proxied = new Proxy({ top_k: 3, seed: 5 }, { get(t, k) { if (k === 'top_k') reenter(); return t[k]; } });
  assert.deepEqual(bd.sample(row, proxied), want);
  const hist = new Proxy([1, 2], { get(t, k) { if (k === '0') reenter(); return t[k]; } });
  bd.sample(row, { history: hist, repetition_penalty: 1.5, seed: 5 });
  // A getter in a batch's per-row options and in createSampler's options.
  bd.sampleBatch(row, V, [{ seed: 5, get top_k() { reenter(); return 3; } }]);
  bd.createSampler({ seed: 5, get top_k() { reenter(); return 3; } }).dispose();
  assert.ok(inner.length >= 25);
  for (const e of inner) {
    assert.ok(e instanceof TypeError && /called from inside/.test(e.message), String(e));
  }
  // Still alive and unchanged.
  assert.deepEqual(bd.sample(row, { top_k: 3, seed: 5 }), want);
});

test('a getter that throws leaves the instance usable', () => {
  const boom = { get top_k() { throw new Error('boom'); } };
  assert.throws(() => bd.sample(row, boom), /boom/);
  assert.equal(bd.decode(row, { top_k: 2 }).k, 2);
});

// A ban list of hundreds of millions of ids ended in a wasm abort (the
// allocation failed inside the module): the arrays' total is bounded first.
test('token id arrays: more than 2^23 ids in one call is a RangeError, before anything is allocated', () => {
  const logits = new Float32Array(100);
  const huge = new Array(2 ** 23 + 1).fill(0);
  assert.throws(() => bd.decode(logits, { banned_tokens: huge }),
    (e) => e instanceof RangeError && /^banned_tokens: 8388609 token ids/.test(e.message));
  assert.throws(() => bd.decode(logits, { history: huge.slice(0, 2 ** 22), banned_tokens: huge.slice(0, 2 ** 22 + 1), repetition_penalty: 1.1 }),
    (e) => e instanceof RangeError && /^history \+ banned_tokens: 8388609/.test(e.message));
  assert.equal(bd.decode(logits, { temperature: 0 }).k, 1, 'the instance keeps working');
});

// bregman.k beyond 32 bits is reported as given, not as 4294967295 (the
// decoder's message would show the value it is handed, cut to 32 bits).
test('bregman.k: a huge k is reported as given', () => {
  for (const k of [2 ** 32 + 1, 2 ** 40]) {
    assert.throws(() => bd.decode(new Float32Array(4), { bregman: { alpha: 1.5, k } }),
      (e) => e instanceof RangeError && e.message.includes(`got ${k}`));
  }
  assert.throws(() => bd.decode(new Float32Array(4), { bregman: { alpha: 1.5, k: 5 } }),
    (e) => e instanceof RangeError && /bregman\.k/.test(e.message));
});

// The integer options below the int32 range are reported as given, not
// clamped ('penalty_last_n must be >= -1, got -2147483648' for -2^40).
test('integer options: a value below the int32 range is reported as given', () => {
  const ints = { top_k: 0, min_keep: 0, penalty_last_n: -1, dry_allowed_length: 0, dry_penalty_last_n: -1,
    no_repeat_ngram_size: 0, top_logprobs: 0 };
  for (const [name, min] of Object.entries(ints)) {
    for (const v of [-(2 ** 31) - 1, -(2 ** 40), -(2 ** 53) + 1]) {
      for (const call of [() => bd.sample(new Float32Array(4), { [name]: v }), () => bd.createSampler({ [name]: v })]) {
        assert.throws(call, (e) => e instanceof RangeError && e.message === `${name} must be >= ${min}, got ${v}`, `${name} ${v}`);
      }
    }
    // At the edge of int32, the core's own message.
    assert.throws(() => bd.sample(new Float32Array(4), { [name]: -(2 ** 31) }),
      (e) => e instanceof RangeError && e.message.startsWith(`${name} must be >= ${min}`) && e.message.endsWith(`got ${-(2 ** 31)}`));
  }
});
