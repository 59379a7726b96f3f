// The JS side of the core's stage registry, in one place: the CPU API
// (options.js, sampler.js) and the WebGPU planner (../gpu/) read it. The
// stages, their default order and the scalar options (slot, kind, off value,
// stage) come from the wasm module (registryOf: src/stages/registry.h,
// src/option_slots.h); only the list options, the call-level options and the
// planner's edit stages are stated here.

// Token-id and bias options: name -> [aux block label, stage]. Their order is
// the aux block's order: [history | bias ids | banned | allowed | breakers].
export const LIST_OPTIONS = {
  history: ['HISTORY', null],
  logit_bias: ['BIAS', 'logit_bias'],
  banned_tokens: ['BANNED', 'logit_bias'],
  allowed_tokens: ['ALLOWED', 'logit_bias'],
  dry_sequence_breakers: ['BREAKERS', 'dry'],
};
// The packed allowed set (XGrammar's token bitmask): name -> [aux block
// label, stage]. Its 32-bit words follow the lists in the int32 aux block.
export const MASK_OPTIONS = {
  allowed_mask: ['ALLOWED_MASK', 'logit_bias'],
};
// The other options of a call.
const CALL_OPTIONS = ['seed', 'step', 'bregman', 'samplers', 'logprobs', 'return_distribution', 'sorted'];
export const BREGMAN_KEYS = new Set(['divergence', 'alpha', 'lambda', 'k', 'k_min', 'k_max']);

// The stages that edit logits of listed ids (bias lists, the history).
export const EDIT_STAGES = new Set(['logit_bias', 'penalties', 'dry', 'no_repeat_ngram']);

// The CPU API's internal method (not enumerable, not in the typings):
// api[CONFIGURED_STAGES](options) validates and writes `options` as a call
// does and returns the Set of names of the stages they ask for (the core's
// StageSpec::configured). The WebGPU planner asks it rather than restating
// the core's rules. A registered symbol: Node's ES module entry bundles the
// planner apart from the API it wraps (dist/node.mjs over dist/index.cjs).
export const CONFIGURED_STAGES = Symbol.for('bregman-decoders configuredStages');

// api[CHECK_OPTIONS](options, vocab): every check a call with `options` on a
// row of `vocab` tokens makes before it reads the row (the JS checks, then
// the core's Decoder::CheckForRow), throwing that call's error; no row is
// read. The WebGPU decoder asks it before any GPU work.
export const CHECK_OPTIONS = Symbol.for('bregman-decoders checkOptions');

/** The names of the stages in `mask` (bit i for stage id i). */
export function stagesOfMask(stages, mask) {
  return new Set(stages.filter((_, id) => (mask & (1 << id)) !== 0));
}

/** The names of the options that configure `stage`, in table order. */
export function optionsOfStage(stage) {
  const names = [];
  for (const [name, , , , , s] of boundRegistry().scalars) if (s === stage) names.push(name);
  for (const [name, [, s]] of Object.entries(LIST_OPTIONS)) if (s === stage) names.push(name);
  for (const [name, [, s]] of Object.entries(MASK_OPTIONS)) if (s === stage) names.push(name);
  return names;
}

/**
 * The decoder's greedy rule (src/decoder.cc): temperature 0, or one whose
 * 1/T overflows float. The API and the WebGPU planner both ask it.
 */
export function isGreedyTemperature(t) {
  if (typeof t !== 'number') return false;
  const f = Math.fround(t);
  return f === 0 || !Number.isFinite(Math.fround(1 / f));
}

// The core's stage registry (src/stages/registry.h, src/option_slots.h), as
// the module exports it: every build of this package has the same one, so
// the last module read serves the functions that take no module.
let bound = null;
const byModule = new WeakMap();

/**
 * The registry of wasm module M: stages (names by id), defaultOrder, scalars
 * as [name, slot index, kind, off value, lowest integer, stage name or null],
 * known (every option name a call takes).
 */
export function registryOf(M) {
  let r = byModule.get(M);
  if (r === undefined) {
    const j = JSON.parse(M.registryJson());
    const scalars = j.options.map(([name, slot, kind, off, lowest, stage]) =>
      [name, slot, kind, off, lowest, stage < 0 ? null : j.stages[stage]]);
    r = {
      stages: j.stages,
      defaultOrder: j.defaultOrder,
      scalars,
      known: new Set([...scalars.map(([name]) => name), ...Object.keys(LIST_OPTIONS), ...CALL_OPTIONS,
        ...Object.keys(MASK_OPTIONS)]),
    };
    byModule.set(M, r);
  }
  bound = r;
  return r;
}
function boundRegistry() {
  if (bound === null) throw new Error('bregman-decoders: no module loaded yet (call load() first)');
  return bound;
}

/**
 * The tables bound to one wasm module M: scalar options as [name, slot index,
 * kind, lowest], the option block of defaults, the stage ids by name, and the
 * registry itself.
 */
export function resolveOptionSlots(M) {
  const registry = registryOf(M);
  const scalars = registry.scalars.map(([name, slot, kind, , lowest]) => [name, slot, kind, lowest]);
  const defaults = new Float64Array(M.NUM_OPTION_SLOTS);
  for (const [, slot, , off] of registry.scalars) defaults[slot] = off;
  const stageIds = new Map(registry.stages.map((name, id) => [name, id]));
  return { scalars, defaults, stageIds, registry };
}
