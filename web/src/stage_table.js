// The option and stage tables of the JS side, in one place: the CPU API
// (options.js) and the WebGPU planner (../gpu/) both read them. Names and
// kinds match the core's option block (src/option_slots.h) and stage ids
// (src/options.h); slot indices are resolved from the wasm module's exports
// by resolveOptionSlots, the one consumer of the module's layout.

// Token-id and bias options: name -> [aux block label, stage]. Their order is
// the aux block's order: [history | bias ids | banned | allowed | breakers].
export const LIST_OPTIONS = {
  history: ['HISTORY', null],
  logit_bias: ['BIAS', 'logit_bias'],
  banned_tokens: ['BANNED', 'logit_bias'],
  allowed_tokens: ['ALLOWED', 'logit_bias'],
  dry_sequence_breakers: ['BREAKERS', 'dry'],
};
// The other options of a call.
const CALL_OPTIONS = ['seed', 'step', 'bregman', 'samplers', 'logprobs', 'return_distribution', 'sorted'];
export const BREGMAN_KEYS = new Set(['divergence', 'alpha', 'lambda', 'k', 'k_min', 'k_max']);

// The stages that edit logits of listed ids (bias lists, the history).
export const EDIT_STAGES = new Set(['logit_bias', 'penalties', 'dry', 'no_repeat_ngram']);

// Whether the options `o` switch stage `stage` on (a non-default value).
const STAGE_SWITCHES = {
  temperature: (o) => (o.temperature !== undefined && o.temperature !== 1) ||
    (o.dynatemp_range !== undefined && o.dynatemp_range !== 0),
  top_k: (o) => (o.top_k ?? 0) > 0,
  top_p: (o) => (o.top_p ?? 1) < 1,
  min_p: (o) => (o.min_p ?? 0) > 0,
  typical_p: (o) => (o.typical_p ?? 1) < 1,
  epsilon_cutoff: (o) => (o.epsilon_cutoff ?? 0) > 0,
  eta_cutoff: (o) => (o.eta_cutoff ?? 0) > 0,
  top_n_sigma: (o) => (o.top_n_sigma ?? 0) > 0,
  xtc: (o) => (o.xtc_probability ?? 0) > 0,
  penalties: (o) => (o.repetition_penalty ?? 1) !== 1 || (o.frequency_penalty ?? 0) !== 0 ||
    (o.presence_penalty ?? 0) !== 0,
  dry: (o) => (o.dry_multiplier ?? 0) > 0,
  no_repeat_ngram: (o) => (o.no_repeat_ngram_size ?? 0) > 0,
  mirostat: (o) => (o.mirostat ?? 0) !== 0,
  logit_bias: (o) => o.logit_bias !== undefined || o.banned_tokens !== undefined ||
    o.allowed_tokens !== undefined,
  bregman: (o) => o.bregman !== undefined && o.bregman !== null,
};
export const SWITCHED_STAGES = Object.keys(STAGE_SWITCHES);
/** Whether `o` switches `stage` on (a name that is no stage: false). */
export function stageOn(stage, o) {
  return Boolean(STAGE_SWITCHES[stage]?.(o));
}

/** The names of the options that configure `stage`, in table order. */
export function optionsOfStage(stage) {
  const names = [];
  for (const [name, , , , , s] of boundRegistry().scalars) if (s === stage) names.push(name);
  for (const [name, [, s]] of Object.entries(LIST_OPTIONS)) if (s === stage) names.push(name);
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
      known: new Set([...scalars.map(([name]) => name), ...Object.keys(LIST_OPTIONS), ...CALL_OPTIONS]),
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
