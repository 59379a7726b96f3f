// The option and stage tables of the JS side, in one place: the CPU API
// (options.js) and the WebGPU planner (../gpu/) both read them. Names and
// kinds match the core's option block (src/option_slots.h) and stage ids
// (src/options.h); slot indices are resolved from the wasm module's exports
// by resolveOptionSlots, the one consumer of the module's layout.

// Scalar options: name -> [slot suffix, kind, default, stage]. kind: 'number'
// or 'int'; stage: the stage the option configures (null: the whole call).
export const SCALAR_OPTIONS = {
  temperature: ['TEMPERATURE', 'number', 1, 'temperature'],
  dynatemp_range: ['DYNATEMP_RANGE', 'number', 0, 'temperature'],
  dynatemp_exponent: ['DYNATEMP_EXPONENT', 'number', 1, 'temperature'],
  top_k: ['TOP_K', 'int', 0, 'top_k'],
  top_p: ['TOP_P', 'number', 1, 'top_p'],
  min_p: ['MIN_P', 'number', 0, 'min_p'],
  min_keep: ['MIN_KEEP', 'int', 1, null],
  typical_p: ['TYPICAL_P', 'number', 1, 'typical_p'],
  epsilon_cutoff: ['EPSILON_CUTOFF', 'number', 0, 'epsilon_cutoff'],
  eta_cutoff: ['ETA_CUTOFF', 'number', 0, 'eta_cutoff'],
  top_n_sigma: ['TOP_N_SIGMA', 'number', 0, 'top_n_sigma'],
  xtc_probability: ['XTC_PROBABILITY', 'number', 0, 'xtc'],
  xtc_threshold: ['XTC_THRESHOLD', 'number', 0.1, 'xtc'],
  repetition_penalty: ['REPETITION_PENALTY', 'number', 1, 'penalties'],
  frequency_penalty: ['FREQUENCY_PENALTY', 'number', 0, 'penalties'],
  presence_penalty: ['PRESENCE_PENALTY', 'number', 0, 'penalties'],
  penalty_last_n: ['PENALTY_LAST_N', 'int', 64, 'penalties'],
  dry_multiplier: ['DRY_MULTIPLIER', 'number', 0, 'dry'],
  dry_base: ['DRY_BASE', 'number', 1.75, 'dry'],
  dry_allowed_length: ['DRY_ALLOWED_LENGTH', 'int', 2, 'dry'],
  dry_penalty_last_n: ['DRY_PENALTY_LAST_N', 'int', -1, 'dry'],
  no_repeat_ngram_size: ['NO_REPEAT_NGRAM_SIZE', 'int', 0, 'no_repeat_ngram'],
  mirostat: ['MIROSTAT', 'int', 0, 'mirostat'],
  mirostat_tau: ['MIROSTAT_TAU', 'number', 5, 'mirostat'],
  mirostat_eta: ['MIROSTAT_ETA', 'number', 0.1, 'mirostat'],
  top_logprobs: ['TOP_LOGPROBS', 'int', 0, null],
};
// The lowest value of the integer options whose lowest is not 0 (the core's
// ranges, src/decoder.cc), for values the int32 slots cannot carry.
export const INT_MIN = { penalty_last_n: -1, dry_penalty_last_n: -1 };

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
export const KNOWN_OPTIONS = new Set([...Object.keys(SCALAR_OPTIONS), ...Object.keys(LIST_OPTIONS), ...CALL_OPTIONS]);
export const BREGMAN_KEYS = new Set(['divergence', 'alpha', 'lambda', 'k', 'k_min', 'k_max']);

// The chain's stages in the default order (src/options.h, kDefaultOrder).
export const DEFAULT_ORDER = ['logit_bias', 'penalties', 'dry', 'no_repeat_ngram', 'top_n_sigma', 'top_k',
  'typical_p', 'top_p', 'min_p', 'xtc', 'epsilon_cutoff', 'eta_cutoff', 'temperature', 'mirostat', 'bregman'];
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
  for (const [name, [, , , s]] of Object.entries(SCALAR_OPTIONS)) if (s === stage) names.push(name);
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

/**
 * The tables bound to one wasm module M: scalar options as [name, slot index,
 * kind], the option block of defaults, and the stage ids by name.
 */
export function resolveOptionSlots(M) {
  const scalars = Object.entries(SCALAR_OPTIONS).map(([name, [slot, kind]]) => [name, M[`SLOT_${slot}`], kind]);
  const defaults = new Float64Array(M.NUM_OPTION_SLOTS);
  for (const [name, [slot, , def]] of Object.entries(SCALAR_OPTIONS)) defaults[M[`SLOT_${slot}`]] = def;
  const stageIds = new Map();
  for (let i = 0; i < M.NUM_STAGES; i++) stageIds.set(M.stageName(i), i);
  return { scalars, defaults, stageIds };
}
