// allowed_mask, the packed allowed set (XGrammar's token bitmask), through
// the package: the same draws and distributions as allowed_tokens with the
// same set, bit for bit, over many random masks and option mixes (decode,
// sample, samplers, batches, the adapters); the checks of its type and word
// count; the intersection with allowed_tokens; the WebGPU planner's CPU
// fallback for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { load } from '../../dist/node.mjs';
import { createLogitsProcessor } from '../../web/adapters/transformers.mjs';
import { BregmanLogitProcessor } from '../../web/adapters/webllm.mjs';
import { plan } from '../../web/gpu/planning.mjs';
import { llmRow, rng } from './reference.mjs';

const bd = await load();

const pick = (rand, xs) => xs[Math.floor(rand() * xs.length)];

// A mask over v tokens allowing about `share` of them; bits past v set at
// random (they are ignored). kind: 'u32' or 'i32'.
function randomMask(rand, v, share, kind = 'u32') {
  const words = Math.ceil(v / 32);
  const m = new Uint32Array(words);
  for (let t = 0; t < 32 * words; t++) {
    if (t >= v ? rand() < 0.5 : rand() < share) m[t >>> 5] |= 1 << (t & 31);
  }
  return kind === 'i32' ? new Int32Array(m.buffer) : m;
}

const allows = (mask, t) => ((mask[t >>> 5] >>> (t & 31)) & 1) === 1;

function idsOf(mask, v) {
  const ids = [];
  for (let t = 0; t < v; t++) if (allows(mask, t)) ids.push(t);
  return ids;
}

function randomOptions(rand, v) {
  const o = { seed: Math.floor(rand() * 1e9), step: Math.floor(rand() * 100) };
  switch (pick(rand, [0, 1, 2, 3, 4, 5, 6, 7, 8])) {
    case 1: o.top_k = 1 + Math.floor(rand() * 50); break;
    case 2: o.top_p = 0.5 + 0.5 * rand(); break;
    case 3: o.min_p = 0.05; break;
    case 4: o.temperature = 0; break;
    case 5: Object.assign(o, { top_k: 40, top_p: 0.95, min_p: 0.05, temperature: 0.8 }); break;
    case 6: o.bregman = { alpha: pick(rand, [0.5, 1.5, 2]), lambda: pick(rand, [1e-4, 1e-2]) }; break;
    case 7: o.typical_p = 0.9; break;
    case 8:
      o.history = Array.from({ length: 20 }, () => Math.floor(rand() * v));
      o.repetition_penalty = 1.3;
      o.dry_multiplier = 0.5;
      break;
    default: break;
  }
  if (rand() < 0.3) o.temperature = pick(rand, [0.7, 1.5]);
  if (rand() < 0.3) o.logprobs = true;
  if (rand() < 0.2) o.top_logprobs = 3;
  if (rand() < 0.3) o.return_distribution = true;
  if (rand() < 0.2) o.sorted = false;
  if (rand() < 0.2) o.banned_tokens = [Math.floor(rand() * v)];
  if (rand() < 0.2) o.logit_bias = { [Math.floor(rand() * v)]: 2.5 };
  return o;
}

// The outcome of a call, or its error, as comparable data.
function outcome(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { error: e.constructor.name, message: e.message };
  }
}

test('decode and sample with allowed_mask equal allowed_tokens with the same set, bit for bit', () => {
  const rand = rng(4242);
  let calls = 0, emptied = 0;
  for (const v of [1, 7, 31, 32, 33, 100, 1000, 4099, 32000]) {
    for (let rep = 0; rep < 14; rep++) {
      const row = llmRow(v, rand, 0.5 + 2 * rand());
      const share = pick(rand, [0, 0.001, 0.05, 0.5, 0.95, 1]);
      const mask = randomMask(rand, v, share, pick(rand, ['u32', 'i32']));
      const o = randomOptions(rand, v);
      const withMask = { ...o, allowed_mask: mask };
      const withList = { ...o, allowed_tokens: idsOf(mask, v) };
      for (const call of ['decode', 'sample']) {
        const a = outcome(() => bd[call](row, withMask));
        const b = outcome(() => bd[call](row, withList));
        assert.deepEqual(a, b, `v ${v} share ${share} ${call} ${JSON.stringify(o)}`);
        if (a.error) {
          emptied += 1;
          assert.match(a.message, /every token was removed/);
        } else if (call === 'sample') {
          assert.ok(allows(mask, a.ok.token));
        }
        calls += 1;
      }
    }
  }
  assert.ok(emptied > 0 && emptied < calls / 2, `${emptied} of ${calls} calls emptied`);
});

test('allowed_mask with allowed_tokens: both apply (the intersection)', () => {
  const rand = rng(7);
  const v = 500;
  const row = llmRow(v, rand);
  const mask = randomMask(rand, v, 0.5);
  const list = [];
  for (let t = 0; t < v; t += 3) list.push(t);
  const both = list.filter((t) => allows(mask, t));
  const o = { seed: 3 };
  assert.deepEqual(bd.decode(row, { ...o, allowed_mask: mask, allowed_tokens: list }),
    bd.decode(row, { ...o, allowed_tokens: both }));
  assert.deepEqual(bd.sample(row, { ...o, allowed_mask: mask, allowed_tokens: list }),
    bd.sample(row, { ...o, allowed_tokens: both }));
});

test('allowed_mask: type and word count are checked, naming the option', () => {
  const row = new Float32Array(100).fill(0.5);  // ceil(100 / 32) = 4 words
  for (const words of [0, 1, 3, 5, 8]) {
    assert.throws(() => bd.sample(row, { allowed_mask: new Uint32Array(words).fill(-1 >>> 0) }),
      (e) => e instanceof RangeError && /allowed_mask/.test(e.message) && (words === 0 || /= 4/.test(e.message)));
  }
  const notMasks = [[1, 2, 3, 4], new Float32Array(4), new Uint8Array(16), new Int16Array(8),
    new BigInt64Array(2), new Proxy(new Uint32Array(4), {}), { length: 4, 0: 1 }, 'mask', 7, null,
    new DataView(new ArrayBuffer(16))];
  for (const [i, bad] of notMasks.entries()) {
    assert.throws(() => bd.decode(row, { allowed_mask: bad }),
      (e) => e instanceof TypeError && /allowed_mask/.test(e.message), `notMasks[${i}]`);
    assert.throws(() => bd.createSampler({ allowed_mask: bad }), TypeError);
  }
  // A typed array of another realm (an iframe, a worker's transfer, vm) is one.
  const foreign = vm.runInNewContext('new Uint32Array(4).fill(4294967295)');
  assert.equal(bd.decode(row, { allowed_mask: foreign }).k, 100);
  // A subclass whose own length lies: the real length is read.
  class Liar extends Uint32Array { get length() { return 4; } }
  assert.throws(() => bd.decode(row, { allowed_mask: new Liar(3) }), RangeError);
  // The mask is read once per call (a getter runs once).
  let reads = 0;
  const o = { get allowed_mask() { reads += 1; return new Uint32Array(4).fill(-1 >>> 0); } };
  bd.sample(row, o);
  assert.equal(reads, 1);
});

test('allowed_mask: no token allowed behaves as an empty allowed_tokens; bits past vocab are ignored', () => {
  const row = new Float32Array(100).map((_, i) => Math.sin(i));
  const none = new Uint32Array(4);
  none[3] = 0xfffffff0;  // only bits at t >= 100
  const a = outcome(() => bd.sample(row, { allowed_mask: none }));
  const b = outcome(() => bd.sample(row, { allowed_tokens: [] }));
  assert.equal(a.error, 'RangeError');
  assert.deepEqual(a, b);
  const all = new Uint32Array(4).fill(-1 >>> 0);
  const clean = all.slice();
  clean[3] = 0xf;
  assert.deepEqual(bd.decode(row, { allowed_mask: all }), bd.decode(row, { allowed_mask: clean }));
  assert.deepEqual(bd.decode(row, { allowed_mask: all }), bd.decode(row, {}));
});

test('samplers: allowed_mask fixed at creation equals allowed_tokens, step by step; its length is checked per row', () => {
  const rand = rng(99);
  const v = 3001;
  const mask = randomMask(rand, v, 0.3);
  const base = { seed: 5, repetition_penalty: 1.5, mirostat: 2 };
  const a = bd.createSampler({ ...base, allowed_mask: mask });
  const b = bd.createSampler({ ...base, allowed_tokens: idsOf(mask, v) });
  const kept = mask.slice();
  mask.fill(0);  // the sampler holds its own copy
  for (let i = 0; i < 30; i++) {
    const row = llmRow(v, rand);
    const x = a.sample(row), y = b.sample(row);
    assert.deepEqual(x, y);
    assert.ok(allows(kept, x.token));
  }
  assert.equal(a.name, b.name);
  assert.throws(() => a.sample(llmRow(v + 40, rand)), RangeError);
  const c = bd.createSampler({ allowed_mask: kept });
  c.reset();
  assert.throws(() => c.sample(llmRow(v + 40, rand)), (e) => e instanceof RangeError && /allowed_mask/.test(e.message));
  assert.throws(() => bd.createSampler({ allowed_mask: new Uint32Array(0) }), RangeError);
  for (const s of [a, b, c]) s.dispose();
});

test('batches: per-row allowed_mask equals the single calls and allowed_tokens', () => {
  const rand = rng(11);
  const v = 777, rows = 5;
  const logits = new Float32Array(v * rows);
  for (let r = 0; r < rows; r++) logits.set(llmRow(v, rand), r * v);
  const perRow = Array.from({ length: rows }, (_, r) => ({ seed: r, top_k: 20, allowed_mask: randomMask(rand, v, 0.2) }));
  const listed = perRow.map((o) => ({ seed: o.seed, top_k: 20, allowed_tokens: idsOf(o.allowed_mask, v) }));
  const got = bd.sampleBatch(logits, v, perRow);
  const want = bd.sampleBatch(logits, v, listed);
  assert.deepEqual(got, want);
  for (let r = 0; r < rows; r++) {
    assert.deepEqual(got[r], bd.sample(logits.subarray(r * v, (r + 1) * v), perRow[r]));
  }
  assert.deepEqual(bd.decodeBatch(logits, v, perRow), bd.decodeBatch(logits, v, listed));
  // One options object for every row.
  assert.deepEqual(bd.decodeBatch(logits, v, perRow[0]), bd.decodeBatch(logits, v, listed[0]));
});

test('adapters: allowed_mask in the options of the transformers.js and WebLLM processors', () => {
  const rand = rng(21);
  const v = 300;
  const mask = randomMask(rand, v, 0.1);
  const o = { seed: 9, top_p: 0.9 };
  const processor = createLogitsProcessor(bd, { ...o, allowed_mask: mask });
  const reference = bd.createSampler({ ...o, allowed_tokens: idsOf(mask, v) });
  const ids = [[1n, 2n]];
  for (let i = 0; i < 10; i++) {
    const row = llmRow(v, rand);
    const want = reference.sample(row).token;
    processor(ids, { data: row.slice(), dims: [1, v] });
    const got = processor.steps[0].at(-1).token;
    assert.equal(got, want);
    assert.ok(allows(mask, got));
    ids[0] = [...ids[0], BigInt(got)];
  }
  processor.dispose();
  assert.throws(() => createLogitsProcessor(bd, { allowed_mask: [1] }), TypeError);

  const lp = new BregmanLogitProcessor(bd, { ...o, allowed_mask: mask });
  const ref2 = bd.createSampler({ ...o, allowed_tokens: idsOf(mask, v) });
  for (let i = 0; i < 10; i++) {
    const row = llmRow(v, rand);
    const want = ref2.sample(row).token;
    const out = lp.processLogits(row.slice());
    assert.equal(out[want], 0);
    lp.processSampledToken(want);
  }
  lp.dispose();
  reference.dispose();
  ref2.dispose();
});

test('WebGPU planner: allowed_mask is an explicit CPU fallback', () => {
  const sel = { flags: 0, nSel: 100000, m: 256, z: 1 };
  const chain = bd.stages;
  const on = new Set(['logit_bias']);
  const p = plan({ allowed_mask: new Uint32Array(8) }, chain, on, on, false, sel, true, 256);
  assert.equal(p.kind, 'fallback');
  assert.match(p.reason, /allowed_mask/);
  // allowed_tokens alone keeps its exact path.
  assert.equal(plan({ allowed_tokens: [1] }, chain, on, on, false, sel, true, 256).kind, 'exact');
});
