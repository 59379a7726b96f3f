// bregman-decoders/transformers: a logits processor for transformers.js's
// generate() that runs this library's whole chain (penalties, DRY, top-k/p,
// min-p, typical, epsilon/eta, mirostat, Bregman, ...) on each row and draws
// the token with this library's seeded draw.
//
// transformers.js (4.x) calls every processor as `processor(input_ids, logits)`
// after its own processors, with `input_ids: bigint[][]` (one row per sequence,
// the prompt and all tokens so far) and `logits` a float32 Tensor of dims
// [batch, vocab]; then its sampler picks the token. Its sampler cannot be
// replaced and ignores top_p/typical_p/epsilon/eta, so this processor decides
// the token itself and leaves a row that every transformers.js sampler maps to
// that token: 0 at the drawn token, -Infinity elsewhere (use do_sample: false).
//
// No import of transformers.js (or of this package): the caller passes the
// loaded decoder instance, and logits only need the Tensor-like {data, dims}.

// Whether ids starts with prefix (ids as transformers.js gives them: bigint,
// or numbers in a hand-made call).
function samePrefix(ids, prefix) {
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

function checkDecoder(bd) {
  if (bd === null || typeof bd !== 'object' || typeof bd.createSampler !== 'function') {
    throw new TypeError('bd must be a loaded bregman-decoders instance (await load())');
  }
}

// The processor's options: one options object, or one per row. Each is
// tried on a probe sampler, so a bad option fails now rather than inside
// generate(); every probe is freed, also those made before a refused entry
// (each holds wasm memory).
function checkProcessorOptions(bd, options, acceptPrompt) {
  checkDecoder(bd);
  if (typeof acceptPrompt !== 'boolean') throw new TypeError('acceptPrompt must be a boolean');
  const perRow = Array.isArray(options);
  if (!perRow && (options === null || typeof options !== 'object')) {
    throw new TypeError('options must be an options object or an array of them');
  }
  const probe = [];
  try {
    for (const o of perRow ? options : [options]) probe.push(bd.createSampler(o));
  } finally {
    for (const s of probe) s.dispose();
  }
  return perRow;
}

// A call's arguments: logits a float32 Tensor-like of dims [batch, vocab],
// input_ids one row per batch row. Returns { batch, vocab }.
function checkCall(input_ids, logits) {
  if (logits === null || typeof logits !== 'object' || !(logits.data instanceof Float32Array)
      || !Array.isArray(logits.dims) && !ArrayBuffer.isView(logits.dims)) {
    throw new TypeError('logits must be a float32 Tensor-like {data: Float32Array, dims: [batch, vocab]}');
  }
  const dims = Array.from(logits.dims);
  if (dims.length !== 2 || !dims.every((d) => Number.isInteger(d) && d >= 0)
      || dims[0] * dims[1] !== logits.data.length) {
    throw new RangeError(`logits: dims [${dims.join(', ')}] do not describe [batch, vocab] over ${logits.data.length} values`);
  }
  const [batch, vocab] = dims;
  if (!Array.isArray(input_ids) || input_ids.length !== batch) {
    throw new RangeError(`input_ids: expected ${batch} rows (the logits' batch), got ${Array.isArray(input_ids) ? input_ids.length : typeof input_ids}`);
  }
  return { batch, vocab };
}

// Whether `ids` continue a row's sequence: the previous call's ids (all of
// them, not only their count: a new prompt one token longer that ends in the
// drawn token is a new sequence) plus the drawn token.
function continuesRow(row, ids) {
  return row !== undefined && row.ids.length > 0 && ids.length === row.ids.length + 1
    && Number(ids[ids.length - 1]) === row.last && samePrefix(ids, row.ids);
}

// The processor's properties besides the call: steps, samplers, reset(),
// _call and dispose(), over its state { rows, steps, disposed }.
function defineControls(processor, state, live) {
  Object.defineProperties(processor, {
    /** Per row: one {token, logprob, k} per generated token (logprob under the processed distribution). */
    steps: { get: () => state.steps, enumerable: true },
    /** Per row: the stateful sampler (history, mirostat, draw counter). */
    samplers: { get: () => state.rows.map((r) => r.sampler), enumerable: true },
  });
  /** Forgets every row: the next call starts new sequences. */
  processor.reset = () => {
    live();
    for (const r of state.rows) r.sampler.reset();
    for (const r of state.rows) { r.ids = []; r.last = -1; }
    state.steps = [];
  };
  // transformers.js's LogitsProcessor shape: a LogitsProcessorList calls
  // processors as functions, and its typings want a _call (TypeScript users
  // push the processor into a LogitsProcessorList).
  processor._call = processor;
  /** Frees the per-row samplers. */
  processor.dispose = () => {
    for (const r of state.rows) r.sampler.dispose();
    state.rows = [];
    state.steps = [];
    state.disposed = true;
  };
}

/**
 * The processor: `(input_ids, logits) => logits`, with per-row samplers kept
 * across steps. A row whose input_ids are not the previous call's ids plus the
 * drawn token starts a new sequence: its sampler is reset (draw counter back
 * to 0) and, unless `acceptPrompt` is false, fed the prompt with accept().
 *
 * @param {object} bd a loaded decoder (`await load()`)
 * @param {object | object[]} options one options object for every row, or one per row
 * @param {{ acceptPrompt?: boolean }} [adapterOptions]
 */
export function createLogitsProcessor(bd, options = {}, { acceptPrompt = true } = {}) {
  const perRow = checkProcessorOptions(bd, options, acceptPrompt);
  // rows: { sampler, ids: bigint[] | number[], last: number } per row;
  // steps: per row, { token, logprob, k } per generated token.
  const state = { rows: [], steps: [], disposed: false };
  const live = () => {
    if (state.disposed) throw new TypeError('this logits processor was disposed');
  };

  function rowOptions(r) {
    if (!perRow) return options;
    if (r >= options.length) {
      throw new RangeError(`options: ${options.length} per-row entries for a batch of at least ${r + 1} rows`);
    }
    return options[r];
  }

  function startRow(r, ids) {
    let row = state.rows[r];
    if (row === undefined) {
      row = state.rows[r] = { sampler: bd.createSampler(rowOptions(r)), ids: [], last: -1 };
    } else {
      row.sampler.reset();
    }
    state.steps[r] = [];
    if (acceptPrompt) for (const id of ids) row.sampler.accept(Number(id));
  }

  function processor(input_ids, logits) {
    live();
    const { batch, vocab } = checkCall(input_ids, logits);
    for (let r = 0; r < batch; r++) {
      const ids = input_ids[r];
      if (!continuesRow(state.rows[r], ids)) startRow(r, ids);
      const row = state.rows[r];
      const logitsRow = logits.data.subarray(r * vocab, (r + 1) * vocab);
      const s = row.sampler.sample(logitsRow);   // draws and accepts
      state.steps[r].push({ token: s.token, logprob: s.logprob, k: s.k });
      row.ids = Array.from(ids);
      row.last = s.token;
      // transformers.js's own sampler now has one choice.
      logitsRow.fill(-Infinity);
      logitsRow[s.token] = 0;
    }
    return logits;
  }

  defineControls(processor, state, live);
  return processor;
}

/**
 * transformers.js generation options that would act twice or fight the
 * forced row: leave them unset (or at these values) when the processor runs.
 */
export const NEUTRAL_GENERATION_OPTIONS = Object.freeze({
  do_sample: false,
  temperature: 1,
  top_k: 0,
  top_p: 1,
  repetition_penalty: 1,
  no_repeat_ngram_size: 0,
  num_beams: 1,
});

/**
 * NEUTRAL_GENERATION_OPTIONS with transformers.js picking the forced token by
 * its top-k draw (do_sample: true, top_k: 1: a native TopK over the row, of
 * one finite entry, which it draws with probability 1) instead of its greedy
 * argmax, a JavaScript loop over the row. The same tokens; at large
 * vocabularies the cheaper step (bench/transformers_cost.mjs).
 */
export const NEUTRAL_TOPK_GENERATION_OPTIONS = Object.freeze({ ...NEUTRAL_GENERATION_OPTIONS, do_sample: true, top_k: 1 });

export default createLogitsProcessor;
