// The CPU half of a call on the candidate path: the candidate row (the
// vocabulary-length row with the candidates and listed ids at their logits,
// -Infinity elsewhere), and the calls that answer top-p and Bregman on the
// whole row from it. Each function takes the decoder's host scratch cx:
// { bd, vocab, maxCandidates, candIds, candLogits, listedIds, listedVals,
//   listedSet, row, order, phantomIds }.
import { randomSeed64, uniformDraw } from '../src/rng.js';
import { FLT_MAX, byKey, floatAtMost, floatBelow } from './numbers.mjs';
import { prefixOptions } from './planning.mjs';

// Relative margin on top-p's mass target: the GPU's normaliser and the CPU's
// agree to about 1e-6; a boundary closer than this falls back.
const kMassMargin = 1e-5;

// The options `o` with `extra` over them, keeping o's prototype: the CPU path
// reads options inherited from a defaults object (README), which a spread
// ({ ...o }) drops.
export const withOptions = (o, extra) => Object.assign(Object.create(Object.getPrototypeOf(o)), o, extra);

/** The first m candidates' indices in the CPU's order (logit descending, lower id first). */
export function sortCandidates(cx, m) {
  const { order, candLogits, candIds } = cx;
  for (let i = 0; i < m; i++) order[i] = i;
  return order.subarray(0, m).sort((a, b) => byKey(candLogits[a], candIds[a], candLogits[b], candIds[b]));
}

/** Puts n candidates (in `sorted` order, or as selected) and listedN listed ids into the row. */
export function fillRow(cx, n, listedN, sorted) {
  for (let i = 0; i < n; i++) {
    const j = sorted ? sorted[i] : i;
    cx.row[cx.candIds[j]] = cx.candLogits[j];
  }
  for (let i = 0; i < listedN; i++) cx.row[cx.listedIds[i]] = cx.listedVals[i];
}
/** Undoes fillRow: the row is -Infinity everywhere again. */
export function clearRow(cx, n, listedN, sorted) {
  for (let i = 0; i < n; i++) cx.row[cx.candIds[sorted ? sorted[i] : i]] = -Infinity;
  for (let i = 0; i < listedN; i++) cx.row[cx.listedIds[i]] = -Infinity;
}

// Phantoms: logits below every candidate, in free slots of the row (ids
// that hold no candidate and no listed id), carrying the tail mass `target`
// (relative to exp((max - max) / temp) = 1). They come in levels: n_j copies
// of the float l_j, each level the largest float below the lowest candidate
// whose term fits what is left, so the placed mass, recomputed from the
// rounded logits as the CPU reads them, is the target within
// kPlaceTolerance Z (a float logit near 1e6 is 1/16 apart: one level alone
// can miss by several percent). Returns { levels, n, mass } or { fail }:
// 'slots' (more phantoms than free slots) or 'rounding' (the floats below
// the lowest candidate cannot carry it: an underflowing temperature).
const kPlaceTolerance = 1e-8;
const kMaxLevels = 64;
function phantomsFor(target, { max, lMin, temp, slots, tol }) {
  const levels = [];
  let left = target, n = 0;
  const top = floatBelow(lMin);
  const term = (l) => Math.exp((l - max) / temp);
  for (let i = 0; i < kMaxLevels && left > tol; i++) {
    let l = Math.min(floatAtMost(max + temp * Math.log(left)), top);
    // exp's rounding may put the term a hair above what is left.
    for (let s = 0; s < 4 && l > -FLT_MAX && term(l) > left; s++) l = floatBelow(l);
    const e = term(l);
    if (!(l > -FLT_MAX) || !(e > 0) || e > left) break;
    const copies = Math.floor(left / e);
    if (n + copies > slots) return { fail: 'slots' };
    levels.push({ l, n: copies });
    n += copies;
    left -= copies * e;
  }
  let mass = 0;
  for (const { l, n: copies } of levels) mass += copies * term(l);
  if (!(Math.abs(mass - target) <= tol)) return { fail: 'rounding' };
  return { levels, n, mass };
}
// The phantoms for the tail mass moved by -kMassMargin Z, +kMassMargin Z and
// not at all; { fail } where one of them cannot be placed. The placed masses
// keep their order and bracket the tail by the margin less the tolerance.
function phantomRange(tail, Z, at) {
  const with_ = (target) => phantomsFor(target, { ...at, tol: kPlaceTolerance * Z });
  const lower = with_(Math.max(tail - kMassMargin * Z, 0));
  const upper = with_(tail + kMassMargin * Z);
  const mid = with_(tail);
  const failed = [lower, upper, mid].find((x) => x.fail);
  if (failed) return { fail: failed.fail };
  if (!(lower.mass <= mid.mass && mid.mass <= upper.mass)) return { fail: 'rounding' };
  return { lower, upper, mid };
}
const phantomReason = (what, fail) => (fail === 'slots'
  ? `${what} tail mass does not fit the free slots` : `${what} tail mass not carried by float phantoms`);
// Puts the phantoms ph into the free slots (ids holding -Infinity that are
// not listed); returns false where fewer slots were free than counted.
function placePhantoms(cx, ph) {
  if (cx.phantomIds === null) cx.phantomIds = new Int32Array(cx.vocab);
  let placed = 0, level = 0, inLevel = 0;
  for (let id = 0; id < cx.vocab && level < ph.levels.length; id++) {
    if (cx.row[id] !== -Infinity || cx.listedSet.has(id)) continue;
    cx.row[id] = ph.levels[level].l;
    cx.phantomIds[placed++] = id;
    if (++inLevel === ph.levels[level].n) { level++; inLevel = 0; }
  }
  ph.placed = placed;
  return placed === ph.n;
}
function clearPhantoms(cx, ph) {
  for (let i = 0; i < ph.placed; i++) cx.row[cx.phantomIds[i]] = -Infinity;
}
// fn() on the row with the phantoms ph in place.
function withPhantoms(cx, ph, fn) {
  try {
    if (!placePhantoms(cx, ph)) throw new Error(`GPU decoder: ${ph.n} phantoms, ${ph.placed} free slots`);
    return fn();
  } finally { clearPhantoms(cx, ph); }
}

/**
 * top-p on the untruncated row: finds the nucleus with the whole row's
 * normaliser, with a margin (the GPU's normaliser and the CPU's differ in
 * rounding), then states the same cut on the nucleus plus the next
 * candidate with top_p = p' (the same stage, so the survivors keep the CPU's
 * layout: sorted up to 256, id order beyond). Returns { result, reason } or,
 * to fall back, { reason }.
 */
export function nucleusCall(cx, o, temp, sel, cpu) {
  // Restating replaces the caller's top_p: an invalid one must reach the
  // CPU as it is, to throw its own error (after the full readback).
  if (!(typeof o.top_p === 'number' && o.top_p <= 1 && Math.fround(o.top_p) > 0)) {
    return { reason: 'top_p not a number in (0, 1] (the CPU reports it)' };
  }
  const { candLogits } = cx;
  const m = sel.m, sorted = sortCandidates(cx, m);
  const minKeep = Math.max(typeof o.min_keep === 'number' ? o.min_keep : 1, 1);
  const target = Math.fround(o.top_p) * (1 - 1e-6) * sel.z;
  const lo = target * (1 - kMassMargin), hi = target * (1 + kMassMargin);
  const max = candLogits[sorted[0]];
  let cum = 0, nLo = 0, nHi = 0, cumBefore = 0, cumAt = 0;
  for (let i = 0; i < m - 1; i++) {
    const prev = cum;
    cum += Math.exp((candLogits[sorted[i]] - max) / temp);
    if (i + 1 < minKeep) continue;
    if (nLo === 0 && cum >= lo) { nLo = i + 1; cumBefore = prev; cumAt = cum; }
    if (cum >= hi) { nHi = i + 1; break; }
  }
  if (nHi === 0) return { reason: 'top_p nucleus larger than the candidates' };
  if (nLo !== nHi) return { reason: 'top_p boundary within rounding of the normaliser' };
  const n = nLo;
  // A nucleus of exactly min_keep entries: the CPU keeps them by top-k, in
  // sorted order, where the restated call (whose nucleus by mass is
  // n + 1 or more) keeps them in id order past 256: another draw order.
  if (n === minKeep && minKeep > 256) return { reason: 'top_p nucleus of min_keep (> 256) entries' };
  const zNext = cumAt + Math.exp((candLogits[sorted[n]] - max) / temp);
  const p = Math.fround((cumBefore + cumAt) / 2 / ((1 - 1e-6) * zNext));
  const t2 = p * (1 - 1e-6) * zNext;
  const ok = p > 0 && p < 1 && cumAt >= t2 * (1 + kMassMargin) &&
    (n <= minKeep || cumBefore < t2 * (1 - kMassMargin));
  if (!ok) return { reason: 'top_p nucleus too flat to restate' };
  fillRow(cx, n + 1, 0, sorted);
  try {
    return { result: cpu(cx.row, withOptions(o, { top_p: p })), reason: 'top_p nucleus restated' };
  } finally {
    clearRow(cx, n + 1, 0, sorted);
  }
}

/**
 * top-p after edits that change values: the edited normaliser is the
 * candidates' and listed ids' (edited by the CPU on the candidate row) plus
 * the tail's mass, which the GPU knows. Phantoms carry the tail mass; the
 * nucleus (the chain up to top-p alone) must come out the same with that
 * mass moved by -+kMassMargin Z and must not reach the lowest selected
 * candidate (then every member ranks above the whole tail). The nucleus
 * grows with Z, so the CPU's own nucleus on the row is that one too, and
 * the rest of the chain and the draw run on the same list: identical.
 */
export function editedTopPCall(cx, o, temp, sel, cpu, plan) {
  const { candLogits, candIds } = cx;
  const m = sel.m, nListed = plan.nListed;
  let zSel = 0, last = 0;
  for (let i = 0; i < m; i++) {
    zSel += Math.exp((candLogits[i] - sel.max) / temp);
    if (byKey(candLogits[i], candIds[i], candLogits[last], candIds[last]) > 0) last = i;
  }
  const Z = sel.z, tail = Math.max(Z - zSel, 0);
  const ph = phantomRange(tail, Z, { max: sel.max, lMin: sel.min, temp, slots: cx.vocab - m - nListed });
  if (ph.fail) return { reason: phantomReason('top_p', ph.fail) };
  const prefix = prefixOptions(o, plan.chain, 'top_p', plan.greedy, plan.history);
  const lowest = candIds[last];
  fillRow(cx, m, nListed, null);
  try {
    const nucleusWith = (p) => withPhantoms(cx, p, () => cx.bd.decode(cx.row, prefix).ids);
    const a = nucleusWith(ph.lower), b = nucleusWith(ph.upper);
    if (b.includes(lowest)) return { reason: 'top_p nucleus larger than the candidates' };
    if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
      return { reason: 'top_p boundary within rounding of the normaliser' };
    }
    return withPhantoms(cx, ph.mid, () => ({ result: cpu(cx.row, o), reason: 'top_p with the tail mass' }));
  } finally {
    clearRow(cx, m, nListed, null);
  }
}

// decode(): Bregman's objective prices the dropped tokens with the phantoms'
// own sum of p^alpha: replaced with the row's tail, which the GPU summed from
// the tokens below the candidates themselves (relative to the threshold's
// logit, so it keeps its precision however small).
function tailObjective(result, b, at) {
  const { alpha, sel, temp, max, zU, mid } = at;
  if (result.objective === undefined || alpha === 1) return;
  const Z = sel.z;
  const zP = zU + mid.mass;
  const tailPow = sel.tailPow * Math.exp((alpha * (sel.threshold - max)) / temp) / Z ** alpha;
  let phantomPow = 0;
  for (const { l, n } of mid.levels) phantomPow += n * Math.exp((alpha * (l - max)) / temp);
  phantomPow /= zP ** alpha;
  const c = b.divergence === 'dual' ? 1 / (alpha * (alpha - 1)) : 1 / alpha;
  result.objective += c * (tailPow - phantomPow);
}

// sample(): the draw on the candidate row, checked against the package's
// uniform: it must fall in the distribution's interval of the token drawn,
// not within 1e-5 of a boundary of the cumulative q.
function bregmanSample(cx, o, cpu) {
  const seeded = o.seed !== undefined;
  const oo = withOptions(o, { return_distribution: true });
  if (!seeded) {
    if (o.step !== undefined) throw new RangeError('step needs a seed');  // as the CPU path
    oo.seed = randomSeed64();
    oo.step = 0;
  }
  const result = cpu(cx.row, oo);
  const u = uniformDraw(BigInt(oo.seed), BigInt(oo.step ?? 0));
  const { ids: dIds, probs } = result.distribution;
  let cum = 0, j = 0;
  for (; j < probs.length; j++) {
    const before = cum;
    cum += probs[j];
    if (cum > u) {
      if (u - before < 1e-5 || cum - u < 1e-5) return { reason: 'Bregman draw within rounding of a boundary' };
      break;
    }
  }
  if (dIds[Math.min(j, probs.length - 1)] !== result.token) return { reason: 'Bregman draw off the distribution' };
  if (!o.return_distribution) delete result.distribution;
  return { result, reason: 'bregman with the tail mass' };
}

/**
 * Bregman on the untruncated row. Its k and q depend on the head's
 * probabilities p_i = e_i / Z, i.e. on the whole row's normaliser: the
 * candidate row gets "phantom" logits in free slots, all below every
 * candidate, carrying the tail's mass, so its normaliser is the row's. The
 * k must come out the same with the tail mass moved by +-kMassMargin Z (the
 * rounding of Z cannot move it), k + 1 must stay among the candidates, and a
 * draw must not fall within 1e-5 of a boundary of the cumulative q.
 */
export function bregmanCall(cx, o, temp, sel, cpu, isSample) {
  const b = o.bregman;
  const alpha = typeof b.alpha === 'number' ? b.alpha : 1;
  const { candLogits } = cx;
  const m = sel.m, sorted = sortCandidates(cx, m);
  const max = candLogits[sorted[0]];
  let zU = 0;
  for (let i = 0; i < m; i++) zU += Math.exp((candLogits[sorted[i]] - max) / temp);
  const tail = Math.max(sel.z - zU, 0);
  // The free slots: neither a candidate nor a listed id (a banned one).
  const slots = cx.vocab - m - cx.listedSet.size;
  const ph = phantomRange(tail, sel.z, { max, lMin: candLogits[sorted[m - 1]], temp, slots });
  if (ph.fail) return { reason: phantomReason('Bregman', ph.fail) };
  fillRow(cx, m, 0, null);
  try {
    const kWith = (p) => withPhantoms(cx, p, () => cx.bd.decode(cx.row, o).k);
    const k = kWith(ph.lower);
    if (kWith(ph.upper) !== k) return { reason: 'Bregman k within rounding of lambda' };
    if (k >= m - 1) return { reason: 'Bregman k reaches the candidates' };
    return withPhantoms(cx, ph.mid, () => {
      if (isSample) return bregmanSample(cx, o, cpu);
      const result = cpu(cx.row, o);
      tailObjective(result, b, { alpha, sel, temp, max, zU, mid: ph.mid });
      return { result, reason: 'bregman with the tail mass' };
    });
  } finally {
    clearRow(cx, m, 0, null);
  }
}

/**
 * log p under softmax(logits) (logprobs, top_logprobs) on a path whose
 * candidate row lacks the tail: from the GPU's raw sum plus the listed ids.
 */
export function patchRaw(cx, result, sel, nListed, topLogprobs) {
  const { candIds, candLogits, listedIds, listedVals } = cx;
  let rawMax = sel.max;
  for (let i = 0; i < nListed; i++) if (listedVals[i] > rawMax) rawMax = listedVals[i];
  let z = sel.zRaw * Math.exp(sel.max - rawMax);
  for (let i = 0; i < nListed; i++) if (listedVals[i] > -Infinity) z += Math.exp(listedVals[i] - rawMax);
  const logZ = Math.log(z);
  const entries = [];
  for (let i = 0; i < sel.m; i++) entries.push([candIds[i], candLogits[i]]);
  for (let i = 0; i < nListed; i++) entries.push([listedIds[i], listedVals[i]]);
  if (result.raw_logprob !== undefined) {
    const e = entries.find(([id]) => id === result.token);
    result.raw_logprob = e[1] - rawMax - logZ;
  }
  if (result.top_logprobs) {
    entries.sort((a, b) => byKey(a[1], a[0], b[1], b[0]));
    // The count asked for: a restated call ran on a shorter candidate row
    // (a nucleus and one more token), whose own list may be shorter.
    result.top_logprobs = entries.slice(0, topLogprobs)
      .map(([token, v]) => ({ token, logprob: Math.fround(v - rawMax - logZ) }));
  }
}
