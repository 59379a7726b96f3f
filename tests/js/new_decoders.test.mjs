// The decoders after the Bregman paper through the package: p-less and
// p-less-norm, Top-H, llama.cpp's adaptive-p and mirostat 1.0, in decode, sample, samplers
// (adaptive-p's EMA through reset and clone) and batches, against a float64
// reference written here from each rule (docs/samplers_adaptive.md); and their
// checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../dist/node.mjs';
import { compareDist, llmRow, rng, softmaxOf, sortedIds } from './reference.mjs';

const bd = await load();

// p-less: keep p >= sum p^2 (norm: (V sum p^2 - 1)/(V - 1), V the vocabulary
// size), p at temperature t.
function pLessRef(logits, norm, t = 1) {
  const ids = sortedIds(logits);
  const p = softmaxOf(logits, ids, t);
  const s = p.reduce((a, x) => a + x * x, 0);
  const v = logits.length;
  const cut = norm ? (v * s - 1) / (v - 1) : s;
  const kept = ids.filter((_, i) => p[i] >= cut);
  return { ids: kept, probs: softmaxOf(logits, kept, t), margin: Math.min(...p.map((x) => Math.abs(x - cut) / cut)) };
}

// Top-H: the longest prefix with renormalised entropy <= alpha H(p).
function topHRef(logits, alpha, t = 1) {
  const ids = sortedIds(logits);
  const p = softmaxOf(logits, ids, t);
  const h = -p.reduce((a, x) => a + (x > 0 ? x * Math.log(x) : 0), 0);
  let mass = 0;
  let moment = 0;  // sum p log p over the prefix
  let k = 0;
  for (; k < ids.length; k++) {
    const m = mass + p[k];
    const q = moment + (p[k] > 0 ? p[k] * Math.log(p[k]) : 0);
    if (k > 0 && Math.log(m) - q / m > alpha * h) break;
    mass = m;
    moment = q;
  }
  const kept = ids.slice(0, k);
  return { ids: kept, probs: softmaxOf(logits, kept, t) };
}

// adaptive-p's distribution, by id, for the candidates' p and target a.
function adaptiveRef(p, a) {
  const l = p.map((x) => { const d = Math.abs(x - a) / 0.3; return 5 - (10 * d * d) / (1 + d); });
  const max = Math.max(...l);
  const e = l.map((x) => Math.exp(x - max));
  const z = e.reduce((s, x) => s + x, 0);
  return e.map((x) => x / z);
}

function assertByIdClose(got, wantById, tol) {
  assert.equal(got.k, wantById.length);
  for (let i = 0; i < got.k; i++) {
    const want = wantById[got.ids[i]];
    assert.ok(Math.abs(got.probs[i] - want) <= tol * Math.max(want, 1e-3), `id ${got.ids[i]}: ${got.probs[i]} != ${want}`);
  }
}

test('p_less and p_less: "norm" match the float64 rule (decode, tempered order, sample)', () => {
  let checked = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const logits = llmRow(3000, rng(seed), 0.7 + 0.1 * (seed % 5));
    for (const norm of [false, true]) {
      const want = pLessRef(logits, norm);
      if (want.margin < 1e-6) continue;
      assert.equal(compareDist(bd.decode(logits, { p_less: norm ? 'norm' : true }), want), null);
      // After temperature (the papers' setting): p at T.
      const t = 1.5;
      const wantT = pLessRef(logits, norm, t);
      if (wantT.margin < 1e-6) continue;
      const o = { p_less: norm ? 'norm' : true, temperature: t, samplers: ['temperature', 'p_less'] };
      assert.equal(compareDist(bd.decode(logits, o), wantT), null);
      const s = bd.sample(logits, { ...o, seed: seed, return_distribution: true });
      assert.ok(wantT.ids.includes(s.token));
      checked++;
    }
  }
  assert.ok(checked >= 18);
  // A worked example (float64 Python): p = (0.35, 0.3, 0.2, 0.15) keeps 2 / all 4.
  const small = Float32Array.from([0.35, 0.3, 0.2, 0.15], Math.log);
  assert.equal(bd.decode(small, { p_less: true }).k, 2);
  assert.equal(bd.decode(small, { p_less: 'norm' }).k, 4);
  assert.equal(bd.decode(small, { p_less: false }).k, 4);
});

test('top_h matches the float64 greedy of the paper (decode, tempered order, sample)', () => {
  for (let seed = 1; seed <= 8; seed++) {
    const logits = llmRow(4000, rng(100 + seed), 0.8 + 0.1 * (seed % 4));
    for (const alpha of [0.2, 0.4, 0.7]) {
      assert.equal(compareDist(bd.decode(logits, { top_h: alpha }), topHRef(logits, alpha)), null);
      const o = { top_h: alpha, temperature: 1.5, samplers: ['temperature', 'top_h'] };
      const want = topHRef(logits, alpha, 1.5);
      assert.equal(compareDist(bd.decode(logits, o), want), null);
      assert.ok(want.ids.includes(bd.sample(logits, { ...o, seed }).token));
    }
  }
  // The worked example (float64 Python): alpha 0.5 keeps 2 of 6, 0.8 keeps 3.
  const small = Float32Array.from([0.4, 0.25, 0.15, 0.1, 0.06, 0.04], Math.log);
  assert.equal(bd.decode(small, { top_h: 0.5 }).k, 2);
  assert.equal(bd.decode(small, { top_h: 0.8 }).k, 3);
  assert.equal(bd.decode(small, { top_h: 1 }).k, 6);
});

test('adaptive-p: decode is the transform at the target; a sampler steers it by its EMA; reset and clone', () => {
  const logits = llmRow(2000, rng(7), 1.0);
  const ids = Array.from(logits, (_, i) => i);
  const p = softmaxOf(logits, ids, 1);
  const target = 0.25;
  const decay = 0.8;
  assertByIdClose(bd.decode(logits, { adaptive_target: target, adaptive_decay: decay }), adaptiveRef(p, target), 1e-4);
  const s = bd.createSampler({ adaptive_target: target, adaptive_decay: decay, seed: 11 });
  // The EMA in float64: converged at the target after reset.
  let ws = target / (1 - Math.fround(decay));
  let tw = 1 / (1 - Math.fround(decay));
  const tokens = [];
  for (let step = 0; step < 30; step++) {
    const a = Math.min(1, Math.max(0, 2 * target - ws / tw));
    assertByIdClose(s.decode(logits), adaptiveRef(p, a), 1e-4);
    const token = s.sample(logits).token;
    tokens.push(token);
    ws = p[token] + Math.fround(decay) * ws;
    tw = 1 + Math.fround(decay) * tw;
  }
  const c = s.clone();
  for (let i = 0; i < 5; i++) assert.equal(c.sample(logits).token, s.sample(logits).token);
  s.reset();
  const replay = [];
  for (let i = 0; i < 30; i++) replay.push(s.sample(logits).token);
  assert.deepEqual(replay, tokens);
  // The stateless sample draws from the reset state at its step.
  assert.equal(bd.sample(logits, { adaptive_target: target, adaptive_decay: decay, seed: 11 }).token, tokens[0]);
  assert.match(s.name, /adaptive_p/);
  s.dispose();
  c.dispose();
});

// Mirostat 1.0's kept set at mu: Zipf's exponent fitted on the 100 most
// probable p (at temperature t), k = ((s-1) 2^mu / (1 - V^(1-s)))^(1/s), the
// top max(floor(k), 1) (all when k is not below their count).
function mirostatV1Ref(logits, mu, t = 1) {
  const ids = sortedIds(logits);
  const p = softmaxOf(logits, ids, t);
  let num = 0, den = 0;
  for (let i = 0; i + 1 < Math.min(100, ids.length); i++) {
    const x = Math.log((i + 2) / (i + 1));
    num += x * Math.log(p[i] / p[i + 1]);
    den += x * x;
  }
  const s = num / den, v = logits.length;
  const k = (((s - 1) * 2 ** mu) / (1 - v ** (1 - s))) ** (1 / s);
  const kept = k < ids.length ? ids.slice(0, Math.max(1, Math.floor(k))) : ids;
  return { ids: kept, probs: softmaxOf(logits, kept, t), margin: Math.abs(k - Math.round(k)) / Math.max(1, k) };
}

test('mirostat 1.0: decode keeps the top k of the Zipf estimate at mu = 2 tau; a sampler steers mu', () => {
  let checked = 0;
  const ks = new Set();
  for (let seed = 1; seed <= 10; seed++) {
    const logits = llmRow(5000, rng(200 + seed), 0.7 + 0.1 * (seed % 5));
    for (const tau of [1.5, 2.5, 4, 6]) {
      const want = mirostatV1Ref(logits, 2 * tau, 1.2);
      if (want.margin < 1e-6) continue;
      const o = { mirostat: 1, mirostat_tau: tau, temperature: 1.2 };
      assert.equal(compareDist(bd.decode(logits, o), want), null, `seed ${seed}, tau ${tau}`);
      ks.add(want.ids.length);
      checked++;
    }
  }
  assert.ok(checked >= 36 && ks.size >= 8, `${checked} cases, ${ks.size} distinct k`);
  // A sampler: mu moves with the draws, so later steps keep other k than the first.
  const logits = llmRow(5000, rng(9), 1);
  const a = bd.createSampler({ mirostat: 1, mirostat_tau: 3, mirostat_eta: 0.5, seed: 4, return_distribution: true });
  const b = a.clone();
  const seen = new Set();
  for (let i = 0; i < 30; i++) {
    const x = a.sample(logits);
    assert.equal(b.sample(logits).token, x.token);
    seen.add(x.k);
  }
  assert.ok(seen.size >= 3, `k took ${seen.size} values`);
  a.reset();
  a.dispose();
  b.dispose();
});

test('batches: each row as its own call', () => {
  const v = 1500;
  const rows = 4;
  const logits = new Float32Array(v * rows);
  for (let r = 0; r < rows; r++) logits.set(llmRow(v, rng(300 + r)), r * v);
  const per = [{ p_less: true }, { p_less: 'norm' }, { top_h: 0.4 }, { adaptive_target: 0.3 }];
  const ds = bd.decodeBatch(logits, v, per);
  const ss = bd.sampleBatch(logits, v, per.map((o) => ({ ...o, seed: 5 })));
  for (let r = 0; r < rows; r++) {
    const row = logits.subarray(r * v, (r + 1) * v);
    const one = bd.decode(row, per[r]);
    assert.deepEqual(Array.from(ds[r].ids), Array.from(one.ids));
    assert.deepEqual(Array.from(ds[r].probs), Array.from(one.probs));
    assert.equal(ss[r].token, bd.sample(row, { ...per[r], seed: 5 }).token);
  }
});

test('checks name the option', () => {
  const logits = llmRow(100, rng(1));
  assert.throws(() => bd.decode(logits, { p_less: 'nrm' }), (e) => e instanceof RangeError && /p_less/.test(e.message));
  assert.throws(() => bd.decode(logits, { p_less: 1 }), (e) => e instanceof TypeError && /p_less/.test(e.message));
  assert.throws(() => bd.decode(logits, { top_h: 1.5 }), (e) => e instanceof RangeError && /top_h/.test(e.message));
  assert.throws(() => bd.decode(logits, { top_h: -0.1 }), (e) => e instanceof RangeError && /top_h/.test(e.message));
  assert.throws(() => bd.decode(logits, { top_h: '0.4' }), TypeError);
  assert.throws(() => bd.decode(logits, { adaptive_target: 1.2 }), (e) => e instanceof RangeError && /adaptive_target/.test(e.message));
  assert.throws(() => bd.decode(logits, { adaptive_target: 0.3, adaptive_decay: 1 }), (e) => e instanceof RangeError && /adaptive_decay/.test(e.message));
  assert.throws(() => bd.decode(logits, { adaptive_target: 0.3, mirostat: 2 }), (e) => e instanceof RangeError && /mirostat/.test(e.message));
  // A custom order that leaves a configured stage out is refused.
  assert.throws(() => bd.decode(logits, { top_h: 0.4, samplers: ['temperature'] }), /top_h/);
  assert.ok(bd.stages.includes('p_less') && bd.stages.includes('top_h') && bd.stages.includes('adaptive_p'));
});
