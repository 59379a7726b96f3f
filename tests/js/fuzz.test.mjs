// Random options and rows through the public API: every call either returns a
// valid result or throws a TypeError/RangeError; never a wasm trap, an abort
// or a malformed result, and the heap stays flat. Fixed seed: reproducible.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { rng } from './reference.mjs';

const bd = await load();

function pick(rand, xs) { return xs[Math.floor(rand() * xs.length)]; }

function randomRow(rand) {
  const v = pick(rand, [1, 2, 3, 17, 100, 1000, 5000]);
  const row = new Float32Array(v);
  const kind = pick(rand, ['zipf', 'flat', 'ties', 'bans', 'huge', 'nan']);
  for (let i = 0; i < v; i++) {
    row[i] = kind === 'flat' ? 0.5 : kind === 'ties' ? Math.floor(rand() * 3)
      : kind === 'huge' ? (rand() - 0.5) * 6e38 : -1.2 * Math.log(i + 1) + rand();
    if (kind === 'bans' && rand() < 0.7) row[i] = -Infinity;
  }
  if (kind === 'nan') row[Math.floor(rand() * v)] = NaN;
  return row;
}

function randomOptions(rand, v) {
  const o = {};
  const maybe = (p) => rand() < p;
  // Mostly in-range values, with out-of-range ones mixed in.
  const num = () => (rand() < 0.06 ? pick(rand, [-1, NaN, Infinity])
    : pick(rand, [0, 1e-9, 0.01, 0.1, 0.5, 0.9, 1, 1.5, 2, 10]));
  const int = () => (rand() < 0.06 ? pick(rand, [-1, 1.5]) : pick(rand, [0, 1, 2, 3, 5, 40, v, v + 5]));
  if (maybe(0.4)) o.temperature = num();
  if (maybe(0.3)) o.top_k = int();
  if (maybe(0.3)) o.top_p = num();
  if (maybe(0.3)) o.min_p = num();
  if (maybe(0.2)) o.typical_p = num();
  if (maybe(0.2)) o.top_n_sigma = num();
  if (maybe(0.2)) o.epsilon_cutoff = num();
  if (maybe(0.2)) o.eta_cutoff = num();
  if (maybe(0.2)) o.min_keep = int();
  if (maybe(0.2)) { o.xtc_probability = num(); o.xtc_threshold = num(); }
  if (maybe(0.2)) { o.repetition_penalty = num(); o.presence_penalty = num(); o.frequency_penalty = num(); }
  if (maybe(0.2)) o.penalty_last_n = int();
  if (maybe(0.2)) { o.dry_multiplier = num(); o.dry_base = num(); o.dry_allowed_length = int(); }
  if (maybe(0.2)) o.no_repeat_ngram_size = int();
  // Mostly ids of the vocabulary; now and then one past it (a RangeError).
  if (maybe(0.2)) o.history = Array.from({ length: Math.floor(rand() * 40) }, () => (rand() < 0.01 ? v : Math.floor(rand() * v)));
  if (maybe(0.1)) o.banned_tokens = [Math.floor(rand() * v)];
  if (maybe(0.1)) o.allowed_tokens = [Math.floor(rand() * v), Math.floor(rand() * v)];
  if (maybe(0.1)) o.logit_bias = { [Math.floor(rand() * v)]: pick(rand, [-Infinity, 5, -5, NaN]) };
  if (maybe(0.15)) { o.mirostat = pick(rand, [0, 2, 1]); o.mirostat_tau = num(); }
  if (maybe(0.15)) { o.dynatemp_range = num(); o.dynatemp_exponent = num(); }
  if (maybe(0.35)) {
    o.bregman = { divergence: pick(rand, ['primal', 'dual']), alpha: pick(rand, [0.3, 0.999, 1, 1.5, 2, 3, 5, 0, -1]) };
    if (maybe(0.5)) o.bregman.lambda = pick(rand, [0, 1e-6, 1e-3, 0.1, 1, -1, NaN]);
    else o.bregman.k = int();
  }
  if (maybe(0.5)) o.seed = Math.floor(rand() * 1e9);
  if (maybe(0.1)) o.top_logprobs = int();
  return o;
}

test('3000 random calls: valid results or TypeError/RangeError, and a flat heap', () => {
  const rand = rng(2026);
  let ok = 0, rejected = 0;
  // Warm the workspace to the largest row first, so growth is not counted.
  bd.decode(new Float32Array(5000 + 5));
  const before = bd.memoryBytes();
  for (let i = 0; i < 3000; i++) {
    const row = randomRow(rand);
    const o = randomOptions(rand, row.length);
    const call = rand() < 0.5 ? 'decode' : 'sample';
    let r;
    try {
      r = bd[call](row, o);
    } catch (e) {
      assert.ok(e instanceof RangeError || e instanceof TypeError,
        `${call}(${JSON.stringify(o)}) threw ${e?.constructor?.name}: ${e?.message}`);
      assert.ok(e.message.length > 0);
      rejected++;
      continue;
    }
    if (call === 'decode') {
      assert.ok(r.k >= 1 && r.k <= row.length && r.ids.length === r.k);
      let sum = 0;
      for (let j = 0; j < r.k; j++) {
        assert.ok(r.ids[j] >= 0 && r.ids[j] < row.length);
        assert.ok(row[r.ids[j]] > -Infinity, 'a banned token survived');
        assert.ok(r.probs[j] >= 0);
        sum += r.probs[j];
      }
      assert.ok(Math.abs(sum - 1) < 1e-5, `probs sum to ${sum} for ${JSON.stringify(o)}`);
    } else {
      assert.ok(Number.isInteger(r.token) && r.token >= 0 && r.token < row.length);
      assert.ok(row[r.token] > -Infinity, 'a banned token was drawn');
      assert.ok(r.logprob <= 1e-6 && !Number.isNaN(r.logprob), `logprob ${r.logprob}`);
    }
    ok++;
  }
  console.log(`# fuzz: ${ok} valid results, ${rejected} rejected with TypeError/RangeError`);
  assert.ok(ok > 500 && rejected > 300);
  assert.equal(bd.memoryBytes(), before, 'the heap grew');
  // Still healthy.
  assert.deepEqual(Array.from(bd.decode(new Float32Array([1, 3, 2]), { top_k: 2 }).ids), [1, 2]);
});

// Hostile shapes of the same random calls: the row as a subclass whose
// length, byteOffset, buffer, subarray or fill lie (or an own length
// property), and options whose every option is a getter answering something
// else from its second read on. Each call must give exactly what the plain
// call gives (or the same error), and the heap stays flat.
class ShortLiar extends Float32Array { get length() { return 1; } }
class LongLiar extends Float32Array {
  get length() { return 1 << 22; }
  get byteOffset() { return 64; }
  get buffer() { return new ArrayBuffer(4); }
  subarray() { return new Float32Array(1); }
}
function lyingRow(rand, row) {
  const kind = pick(rand, ['short', 'long', 'own']);
  if (kind === 'short') return new ShortLiar(row);
  if (kind === 'long') return new LongLiar(row);
  const copy = new Float32Array(row);
  Object.defineProperty(copy, 'length', { value: row.length + 7 });
  return copy;
}
// Every option a getter: the given value on the first read, a wrong one after.
function flippingOptions(o) {
  const out = {};
  for (const [key, value] of Object.entries(o)) {
    let reads = 0;
    Object.defineProperty(out, key, {
      enumerable: true,
      get() { reads += 1; return reads === 1 ? value : 'second read'; },
    });
  }
  return out;
}
const outcome = (fn) => {
  try {
    return fn();
  } catch (e) {
    assert.ok(e instanceof RangeError || e instanceof TypeError, `${e?.constructor?.name}: ${e?.message}`);
    return `${e.constructor.name}: ${e.message}`;
  }
};

test('1000 random calls through lying arrays and options that change on a second read: the plain calls\' results', () => {
  const rand = rng(4343);
  bd.decode(new Float32Array(5000 + 5));
  const before = bd.memoryBytes();
  for (let i = 0; i < 1000; i++) {
    const row = randomRow(rand);
    const o = randomOptions(rand, row.length);
    if (o.seed === undefined) o.seed = i;
    const call = pick(rand, ['decode', 'sample', 'decodeBatch', 'sampler']);
    const run = (r, opts) => (call === 'decodeBatch' ? bd.decodeBatch(r, row.length, opts)
      : call === 'sampler' ? outcome(() => {
        const s = bd.createSampler(opts);
        try { return [s.sample(r), s.sample(r)]; } finally { s.dispose(); }
      }) : bd[call](r, opts));
    const want = outcome(() => run(row, o));
    const got = outcome(() => run(lyingRow(rand, row), flippingOptions(o)));
    assert.deepEqual(got, want, `${call}(${JSON.stringify(o)})`);
  }
  assert.equal(bd.memoryBytes(), before, 'the heap grew');
});
