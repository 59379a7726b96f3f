// The public JS API over the raw Embind module (docs/api-contract.md is the
// contract; this API extends it with sampler objects, batches, the full stage
// set and a chosen stage order). Platform-neutral: the entry points (browser
// and Node) differ only in how they instantiate the wasm module and where
// entropy for unseeded draws comes from.
import { runBatch } from './batches.js';
import { checkLogits, createInputs } from './inputs.js';
import { createOptionBlock } from './options.js';
import { checkStatus, readDistribution, readSample } from './results.js';
import { createRawSampler, defineSampler, newSampler } from './sampler.js';
import { CHECK_OPTIONS, CONFIGURED_STAGES, registryOf, stagesOfMask } from './stage_table.js';

// For the WebGPU decoder (stage_table.js, CONFIGURED_STAGES and
// CHECK_OPTIONS), methods that are not enumerable: the stages `options` ask
// for, as the core decides it; the checks of `options` for a row of `vocab`.
function defineConfiguredStages(api, { M, raw, block, guarded }) {
  Object.defineProperty(api, CONFIGURED_STAGES, {
    value: guarded('configuredStages', (options) => {
      block.write(block.snapshot(options));
      return stagesOfMask(registryOf(M).stages, raw.configuredStages());
    }),
  });
  Object.defineProperty(api, CHECK_OPTIONS, {
    value: guarded('checkOptions', (options, vocab) => {
      block.write(block.snapshot(options), vocab);
      checkStatus(raw, raw.validateFor(vocab));
    }),
  });
}

/**
 * Wraps an instantiated Embind module.
 * @param {object} M the module
 * @param {() => number} entropy32 a source of random 32-bit integers, used only
 *   for draws without a `seed`
 */
export function createApi(M, entropy32) {
  const raw = new M.WasmDecoder();
  const block = createOptionBlock(M, raw);
  const inputs = createInputs(M, raw);
  // Unseeded draws: one random stream per loaded module, advanced per call.
  const streamSeed = [entropy32() >>> 0, entropy32() >>> 0];
  let streamStep = 0;
  let disposed = false;
  // A call in progress: options are read through user code (getters, Proxies,
  // Map subclasses), and a call from there would overwrite the shared option
  // block halfway through. Refused instead.
  let busy = null;
  const live = () => {
    if (disposed) throw new TypeError('this bregman-decoders instance was disposed');
  };
  function guarded(name, fn) {
    return function guardedCall(...args) {
      live();
      if (busy !== null) {
        throw new TypeError(`${name}() called from inside ${busy}() on the same instance ` +
          '(from an options getter or Proxy?): call it after that call returns');
      }
      busy = name;
      try {
        return fn.apply(this, args);
      } finally {
        busy = null;
      }
    };
  }
  const randomSeed = () => [entropy32() >>> 0, entropy32() >>> 0];

  // One stateless call on one row: `run(n)` is the decoder's entry point;
  // `snapshot(options)` reads the options once (block.snapshot, or the
  // identity for a batch's snapshot).
  function call(logits, options, snapshot, run) {
    const n = checkLogits(M, logits, inputs), input = inputs.inputRow(logits);
    const seeded = block.write(snapshot(options), n);
    const flags = block.resultFlags();
    // Without a seed the call (and a random stage in it, XTC) draws from the
    // instance's unseeded stream.
    if (!seeded) block.setSeed(streamSeed, streamStep++);
    inputs.writeLogits(logits, input);
    checkStatus(raw, run(n));
    return flags;
  }
  const decodeWith = (snapshot) => (logits, options) =>
    readDistribution(M, raw, call(logits, options, snapshot, (n) => raw.decode(n)).objective);
  const sampleWith = (snapshot) => (logits, options) =>
    readSample(M, raw, call(logits, options, snapshot, (n) => raw.sample(n)));
  const decode = decodeWith(block.snapshot), sample = sampleWith(block.snapshot);

  // A new wasm sampler for an unseeded sampler's reset(): its options (the
  // snapshot taken at createSampler), a new seed.
  const freshRaw = guarded('reset', (options) => {
    block.write(options);
    block.setSeed(randomSeed());
    checkStatus(raw, raw.validate());
    return createRawSampler(raw);
  });
  const Sampler = defineSampler({ M, raw, inputs, live, guarded, freshRaw, owner: () => api });

  const createSampler = (given = {}) => newSampler({ M, raw, block, Sampler, randomSeed }, given);
  // A batch reads its options once, at its entry: its rows take the snapshots.
  const asSnapshot = (o) => o;
  const batchCtx = () => ({
    M, inputs, owner: api, Sampler, snapshot: block.snapshot,
    decode: decodeWith(asSnapshot), sample: sampleWith(asSnapshot),
  });

  const api = {
    /** Highway target the kernels run on ('WASM' when SIMD128 is in use). */
    target: M.targetName(),
    /** Stage names accepted in `samplers`, in the default order. */
    stages: registryOf(M).defaultOrder.slice(),
    /** Longest logits row (vocabulary size) accepted; longer ones are a RangeError. */
    maxVocab: M.MAX_VOCAB,
    /** Tokens a sampler's stages see: its latest maxHistory accepted ones. */
    maxHistory: M.MAX_HISTORY,
    decode: guarded('decode', decode),
    sample: guarded('sample', sample),
    /**
     * Zero copy: a Float32Array of `vocab` floats inside the module's memory.
     * Write a row into it and pass it to decode/sample (or a sampler): the
     * call reads it in place, without the copy into the heap, and never
     * modifies it. Call inputBuffer(vocab) again before writing each row: it
     * returns the same view unless the module's memory grew (which detaches
     * every earlier view) or vocab changed; a stale view throws RangeError.
     */
    inputBuffer: guarded('inputBuffer', inputs.inputBuffer),
    createSampler: guarded('createSampler', createSampler),
    decodeBatch: guarded('decodeBatch', (logits, vocab, perRow) => runBatch(batchCtx(), 'decode', logits, vocab, perRow)),
    sampleBatch: guarded('sampleBatch', (logits, vocab, perRow) => runBatch(batchCtx(), 'sample', logits, vocab, perRow)),
    /** Bytes of scratch the decoder holds (flat after the first call). */
    workspaceBytes() { live(); return raw.workspaceBytes(); },
    /** Bytes of wasm linear memory (flat in steady state). */
    memoryBytes() { live(); return M.HEAP8.length; },
    /** Frees the wasm-side decoder; the instance is unusable afterwards. */
    dispose() {
      if (busy !== null) throw new TypeError(`dispose() called from inside ${busy}()`);
      if (!disposed) { raw.delete(); disposed = true; }
    },
  };
  defineConfiguredStages(api, { M, raw, block, guarded });
  return api;
}
