// The public JS API over the raw Embind module (shared/spec/api.md is the
// contract). Platform-neutral: the entry points (index.mjs for browsers and
// bundlers, node.mjs / index.cjs for Node) only differ in how they
// instantiate the wasm module and where entropy for unseeded draws comes from.

const OFF = Symbol('off');

// Options the contract names that a later release implements. Given with an
// effective value they throw a RangeError that says so: never silently ignored.
const NOT_YET = {
  typical_p: 1, top_n_sigma: OFF, epsilon_cutoff: 0, eta_cutoff: 0,
  repetition_penalty: 1, presence_penalty: 0, frequency_penalty: 0,
  penalty_last_n: OFF, history: OFF, logit_bias: OFF,
};
const KNOWN = new Set(['temperature', 'top_k', 'top_p', 'min_p', 'min_keep', 'seed', 'step',
  'bregman', ...Object.keys(NOT_YET)]);
const BREGMAN_KNOWN = new Set(['divergence', 'alpha', 'lambda', 'k', 'k_min', 'k_max']);
const TWO32 = 4294967296;

function checkNumber(name, v) {
  if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${typeof v}`);
  if (Number.isNaN(v)) throw new RangeError(`${name} must not be NaN`);
  return v;
}
function checkInteger(name, v, min) {
  checkNumber(name, v);
  if (!Number.isInteger(v) || v < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${v}`);
  return v;
}
// A 64-bit unsigned integer (number up to 2^53 - 1, or bigint up to 2^64 - 1)
// as [hi, lo] 32-bit halves.
function splitU64(name, v) {
  if (typeof v === 'bigint') {
    if (v < 0n || v >= (1n << 64n)) throw new RangeError(`${name} must be in [0, 2^64), got ${v}`);
    return [Number(v >> 32n), Number(v & 0xffffffffn)];
  }
  checkNumber(name, v);
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${name} must be a non-negative safe integer or a bigint, got ${v}`);
  return [Math.floor(v / TWO32), v % TWO32];
}

function writeBregman(slots, M, b) {
  if (b === undefined || b === null) return;
  if (typeof b !== 'object') throw new TypeError(`bregman must be an object, got ${typeof b}`);
  for (const key of Object.keys(b)) {
    if (!BREGMAN_KNOWN.has(key)) throw new RangeError(`unknown option bregman.${key}`);
  }
  const divergence = b.divergence === undefined ? 'primal' : b.divergence;
  if (typeof divergence !== 'string') throw new TypeError('bregman.divergence must be a string');
  if (divergence !== 'primal' && divergence !== 'dual') {
    throw new RangeError(`bregman.divergence must be 'primal' or 'dual', got '${divergence}'`);
  }
  const alpha = b.alpha === undefined ? 1 : checkNumber('bregman.alpha', b.alpha);
  const hasK = b.k !== undefined, hasLambda = b.lambda !== undefined;
  if (hasK === hasLambda) throw new RangeError('bregman needs exactly one of lambda (adaptive k) or k (fixed k)');
  slots[M.SLOT_BREGMAN] = divergence === 'dual' ? 2 : 1;
  slots[M.SLOT_BREGMAN_ALPHA] = alpha;
  if (hasK) {
    if (typeof b.k !== 'number') throw new TypeError(`bregman.k must be a number, got ${typeof b.k}`);
    if (!Number.isInteger(b.k) || b.k < 1) throw new RangeError(`bregman.k must be an integer >= 1, got ${b.k}`);
    slots[M.SLOT_BREGMAN_K] = b.k;
  } else {
    slots[M.SLOT_BREGMAN_LAMBDA] = checkNumber('bregman.lambda', b.lambda);
  }
  if (b.k_min !== undefined) slots[M.SLOT_BREGMAN_K_MIN] = checkInteger('bregman.k_min', b.k_min, 1);
  if (b.k_max !== undefined) slots[M.SLOT_BREGMAN_K_MAX] = checkInteger('bregman.k_max', b.k_max, 1);
  if (b.k_min !== undefined && b.k_max !== undefined && b.k_min > b.k_max) {
    throw new RangeError(`bregman.k_min (${b.k_min}) must be <= bregman.k_max (${b.k_max})`);
  }
}

// Fills the option slot block; returns whether a seed was given.
function writeOptions(slots, M, options) {
  slots.fill(0);
  slots[M.SLOT_TEMPERATURE] = 1;
  slots[M.SLOT_TOP_P] = 1;
  slots[M.SLOT_MIN_KEEP] = 1;
  if (options === undefined || options === null) return false;
  if (typeof options !== 'object') throw new TypeError(`options must be an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new RangeError(`unknown option ${key}`);
    const v = options[key];
    if (v === undefined) continue;
    if (key in NOT_YET) {
      const off = NOT_YET[key];
      if (off === OFF || v !== off) throw new RangeError(`${key} is not implemented yet in this release`);
    }
  }
  const o = options;
  if (o.temperature !== undefined) slots[M.SLOT_TEMPERATURE] = checkNumber('temperature', o.temperature);
  if (o.top_k !== undefined) slots[M.SLOT_TOP_K] = checkInteger('top_k', o.top_k, 0);
  if (o.top_p !== undefined) slots[M.SLOT_TOP_P] = checkNumber('top_p', o.top_p);
  if (o.min_p !== undefined) slots[M.SLOT_MIN_P] = checkNumber('min_p', o.min_p);
  if (o.min_keep !== undefined) slots[M.SLOT_MIN_KEEP] = checkInteger('min_keep', o.min_keep, 0);
  writeBregman(slots, M, o.bregman);
  if (o.step !== undefined) {
    if (o.seed === undefined) throw new RangeError('step needs a seed');
    const [hi, lo] = splitU64('step', o.step);
    slots[M.SLOT_STEP_HI] = hi;
    slots[M.SLOT_STEP_LO] = lo;
  }
  if (o.seed !== undefined) {
    const [hi, lo] = splitU64('seed', o.seed);
    slots[M.SLOT_SEED_HI] = hi;
    slots[M.SLOT_SEED_LO] = lo;
    return true;
  }
  return false;
}

/**
 * Wraps an instantiated Embind module.
 * @param {object} M the module
 * @param {() => number} entropy32 a source of random 32-bit integers, used only
 *   for draws without a `seed`
 */
export function createApi(M, entropy32) {
  const raw = new M.WasmDecoder();
  const slots = new Float64Array(M.NUM_OPTION_SLOTS);
  // Unseeded draws: one random stream per loaded module, advanced per call.
  const streamSeed = [entropy32() >>> 0, entropy32() >>> 0];
  let streamStep = 0;
  let disposed = false;

  function run(method, logits, options) {
    if (disposed) throw new Error('this bregman-decoders instance was disposed');
    if (!(logits instanceof Float32Array)) {
      throw new TypeError('logits must be a Float32Array');
    }
    const seeded = writeOptions(slots, M, options);
    if (!seeded && method === 'sample') {
      slots[M.SLOT_SEED_HI] = streamSeed[0];
      slots[M.SLOT_SEED_LO] = streamSeed[1];
      slots[M.SLOT_STEP_HI] = Math.floor(streamStep / TWO32);
      slots[M.SLOT_STEP_LO] = streamStep % TWO32;
      streamStep += 1;
    }
    const vocab = logits.length;
    // inputPtr may grow memory: read the heap views only after it.
    const inPtr = raw.inputPtr(vocab);
    M.HEAPF32.set(logits, inPtr >>> 2);
    M.HEAPF64.set(slots, raw.optionsPtr() >>> 3);
    const status = method === 'sample' ? raw.sample(vocab) : raw.decode(vocab);
    if (status !== 0) {
      const message = raw.error();
      throw status === 1 ? new TypeError(message) : new RangeError(message);
    }
  }

  return {
    /** Highway target the kernels run on ('WASM' when SIMD128 is in use). */
    target: M.targetName(),

    decode(logits, options) {
      run('decode', logits, options);
      const k = raw.k();
      const ids = M.HEAP32.slice(raw.idsPtr() >>> 2, (raw.idsPtr() >>> 2) + k);
      const probs = M.HEAPF32.slice(raw.probsPtr() >>> 2, (raw.probsPtr() >>> 2) + k);
      const result = { k, ids, probs };
      if (options && options.bregman) result.objective = raw.objective();
      return result;
    },

    sample(logits, options) {
      run('sample', logits, options);
      return { token: raw.token(), logprob: raw.logprob(), k: raw.k() };
    },

    /** Bytes of scratch the decoder holds (flat after the first call). */
    workspaceBytes() { return raw.workspaceBytes(); },

    /** Bytes of wasm linear memory (flat in steady state). */
    memoryBytes() { return M.HEAP8.length; },

    /** Frees the wasm-side decoder; the instance is unusable afterwards. */
    dispose() {
      if (!disposed) { raw.delete(); disposed = true; }
    },
  };
}
