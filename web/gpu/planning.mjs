// The planner (docs/webgpu.md, "Exactness"): per call, which ids the GPU
// leaves out of its selection for the CPU's edits, at which temperature the
// GPU takes the normaliser, and how the call is answered from the candidates.
// Which stages a call's options switch on is the core's answer
// (configuredStages): a Set of stage names, asked once per call.
import { CONFIGURED_STAGES, EDIT_STAGES, isGreedyTemperature, optionsOfStage } from '../src/stage_table.js';

// logit_bias / banned_tokens that only ban (every bias -Infinity).
const bansOnly = (o) => {
  const b = o.logit_bias;
  if (b == null) return true;
  if (typeof b !== 'object') return false;
  return [...(b instanceof Map ? b.values() : Object.values(b))].every((x) => x === -Infinity);
};

export const isGreedy = (o) => isGreedyTemperature(o.temperature ?? 1);

/**
 * The stages the options `o` ask for (the core's StageSpec::configured), from
 * the CPU API `bd`, which validates them as a call does: options it refuses
 * throw here, before any GPU work, the error the call itself would throw.
 */
export const configuredStages = (bd, o) => bd[CONFIGURED_STAGES](o);

// The GPU's normaliser at the scale 1/T is usable: finite and positive. Two
// temperature stages in a custom order multiply, and 1/T can overflow float
// (then Z is NaN or Infinity).
export const zUsable = (sel) => Number.isFinite(sel.z) && sel.z > 0;

/**
 * Ids the edit stages read or write, for one call, added to `out`: they are
 * left out of the GPU's selection and gathered with their logits, so the CPU
 * applies the edits itself (bit for bit as on the whole row). configured:
 * the stages the options ask for. Returns the stages that act.
 */
export function listedIds(o, history, vocab, order, configured, out) {
  const acting = new Set();
  const add = (v) => {
    // Ill-typed options are left to the CPU call, which throws the package's TypeError.
    if (v === null || typeof v !== 'object') return;
    const it = v instanceof Map ? v.keys() : (typeof v === 'object' && !Array.isArray(v) &&
      !ArrayBuffer.isView(v)) ? Object.keys(v) : v;
    for (const x of it) {
      const id = Number(x);
      if (Number.isInteger(id) && id >= 0 && id < vocab) out.add(id);
    }
  };
  for (const s of order) {
    if (!EDIT_STAGES.has(s) || !configured.has(s)) continue;
    if (s === 'logit_bias') {
      add(o.logit_bias);
      add(o.banned_tokens);
      add(o.allowed_tokens);
      acting.add(s);
    } else if (history && history.length > 0) {
      add(history);
      acting.add(s);
    }
  }
  return acting;
}

/**
 * The temperature at which the GPU takes the normaliser: the one in force
 * where the first stage that needs it (top-p, Bregman) runs, the first one
 * switched on (the default order lists top-p before the temperature,
 * Bregman after).
 */
export function normaliserTemperature(o, chain, greedy, configured) {
  let temp = 1;
  for (const s of chain) {
    if ((s === 'top_p' || s === 'bregman') && configured.has(s)) break;
    if (s === 'temperature' && !greedy && typeof o.temperature === 'number' && o.temperature > 0) temp *= o.temperature;
  }
  return temp;
}

const fallback = (reason) => ({ kind: 'fallback', reason });
// Top-k, top-p and min-p always keep the row's first maximum (they keep the
// sorted head).
const keepsFirstMax = (x) => x === 'top_k' || x === 'top_p' || x === 'min_p';

// The answer at the first truncating stage `s` (index i of the chain), or
// null to walk on. temp: the temperature so far.
function planStage(s, i, cx) {
  const { o, chain, sel, on, minKeep, temp, edited, acting } = cx;
  switch (s) {
    case 'top_k': {
      const k = Math.max(o.top_k, minKeep);
      return k < sel.m ? { kind: 'exact', reason: 'top_k' } : fallback(`top_k ${k} >= maxCandidates`);
    }
    case 'min_p': {
      // Every logit >= t is a candidate when the smallest selected one is
      // below t (the rest of the row is below it). The edits change listed
      // ids only, so they can only raise the max: t >= this bound.
      const t = sel.max + temp * Math.log(Math.fround(o.min_p));
      const fits = minKeep < sel.m && sel.min < t - 1e-6 * (1 + Math.abs(t));
      return fits ? { kind: 'exact', reason: 'min_p' } : fallback('min_p set larger than the candidates');
    }
    case 'top_p':
      if (!zUsable(sel)) return fallback('top_p normaliser not finite (1/T overflows float)');
      // A restated call rewrites top_p for every top-p stage of the chain.
      if (chain.slice(i + 1).some((t) => t === 'top_p' && on(t))) {
        return fallback('top_p listed twice in samplers');
      }
      // Listed ids (an edit stage acting anywhere in the chain, also after
      // top-p in a custom order) are out of the selection and of the GPU's
      // normaliser: only the edited call puts their logits back.
      return { kind: edited || acting.size > 0 ? 'top_p_edited' : 'top_p', temp };
    case 'bregman':
      if (edited) return fallback('bregman after value edits (needs the edited normaliser)');
      if (!zUsable(sel)) return fallback('Bregman normaliser not finite (1/T overflows float)');
      if (chain.slice(i + 1).some(on)) return fallback('stages after bregman over the whole row');
      return { kind: 'bregman', temp };
    default:
      return fallback(`${s} over the whole row`);
  }
}

/**
 * Decides how a call is answered: walks the chain as the CPU does while the
 * row is still untruncated, up to the first stage whose answer needs more
 * than the candidates.
 *   exact:   the candidate row gives the whole row's answer bit for bit
 *   top_p:   top-p on the whole row: restated on the nucleus (nucleusCall)
 *   top_p_edited: top-p after edits: the tail mass carried by phantoms
 *   bregman: Bregman on the whole row: tail mass carried by phantoms (bregmanCall)
 *   fallback: full readback
 * configured: the stages the options ask for; acting: the edit stages that
 * act (listedIds).
 */
export function plan(o, chain, configured, acting, greedy, sel, isSample, maxCandidates) {
  if (sel.flags & 3) return fallback('NaN or +Infinity in the row (the CPU reports it)');
  if (sel.nSel <= maxCandidates) return { kind: 'exact', reason: 'every finite logit is a candidate', complete: true };
  // (decode() reports no log-probabilities: its top_logprobs reads nothing.)
  const topLogprobs = isSample && typeof o.top_logprobs === 'number' ? o.top_logprobs : 0;
  if (topLogprobs >= sel.m) return fallback('top_logprobs larger than the candidates');
  const minKeep = Math.max(typeof o.min_keep === 'number' ? o.min_keep : 1, 1);
  const on = (s) => ((s === 'temperature' || s === 'mirostat' || s === 'bregman') && greedy ? false
    : configured.has(s));
  const cx = { o, chain, sel, on, minKeep, temp: 1, edited: false, acting };
  for (let i = 0; i < chain.length; i++) {
    const s = chain[i];
    if (!on(s)) continue;
    // Greedy answers the first maximum of what survives the chain: where
    // only stages that keep it follow, they cannot change a greedy answer
    // and the candidate row's greedy answer is the row's (an edit, typical
    // or XTC after them could: they are planned as without greedy).
    if (greedy && keepsFirstMax(s) && chain.slice(i + 1).every((x) => !on(x) || keepsFirstMax(x))) continue;
    if (EDIT_STAGES.has(s)) {
      if (!acting.has(s)) continue;
      if (s === 'logit_bias' && o.allowed_mask != null) return fallback('allowed_mask (the CPU applies the packed mask over the whole row)');
      // The allowed set bans every other id: every finite logit left is listed.
      if (s === 'logit_bias' && o.allowed_tokens != null) return { kind: 'exact', reason: 'allowed_tokens' };
      // Bans only remove listed ids, which are out of the selection and of
      // the GPU's normaliser already: the values that remain are the row's.
      if (!(s === 'logit_bias' && bansOnly(o))) cx.edited = true;
      continue;
    }
    if (s === 'temperature') {
      if ((o.dynatemp_range ?? 0) > 0) return fallback('dynamic temperature over the whole row');
      cx.temp *= o.temperature;
      continue;
    }
    return planStage(s, i, cx);
  }
  return greedy ? { kind: 'exact', reason: 'greedy' } : fallback('no truncation: the draw walks the whole row');
}

// The stages whose options a prefix call of the chain carries: the edits,
// the temperature and top-p itself.
const PREFIX_STAGES = new Set([...EDIT_STAGES, 'temperature', 'top_p']);

/**
 * The options of the chain up to and including `last` (the nucleus alone).
 * history: the penalties' history (a mirostat sampler's own, which its
 * options do not carry).
 */
export function prefixOptions(o, chain, last, greedy, history) {
  const samplers = chain.slice(0, chain.indexOf(last) + 1);
  const p = { samplers };
  for (const k of ['min_keep', 'history', 'seed', 'step']) if (o[k] !== undefined) p[k] = o[k];
  if (history !== undefined && history.length > 0) p.history = history;
  for (const s of samplers) {
    if (greedy && s === 'temperature') continue;  // greedy skips it on the whole row too
    if (!PREFIX_STAGES.has(s)) continue;
    for (const k of optionsOfStage(s)) if (o[k] !== undefined) p[k] = o[k];
  }
  return p;
}
