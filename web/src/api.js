// The public JS API over the raw Embind module (docs/api-contract.md is the
// contract; this file extends it with sampler objects, batches, the full
// stage set and a chosen stage order). Platform-neutral: the entry points
// (index.mjs for browsers and bundlers, node.mjs / index.cjs for Node) only
// differ in how they instantiate the wasm module and where entropy for
// unseeded draws comes from. Types are checked here (TypeError); numeric
// ranges are checked once, in C++ (Decoder::Validate), whose messages name the
// option and become RangeErrors.

const TWO32 = 4294967296;

// Marks the samplers made by this file, so a batch can tell a sampler of
// another instance (another wasm module: its pointer means nothing here) from
// an options object.
const SAMPLER_BRAND = Symbol('bregman-decoders sampler');
// Samplers live in their instance's wasm heap: one forgotten without dispose()
// is freed when the garbage collector reclaims it (the held value is the
// Embind handle, never the Sampler itself).
const samplerRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((handle) => { if (!handle.isDeleted()) handle.delete(); })
  : null;

// Scalar options: [slot suffix, kind, default, stage]. kind: 'number' or 'int'.
const SCALARS = {
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
const INT_MIN = { penalty_last_n: -1, dry_penalty_last_n: -1 };
// Options whose non-default value switches a stage on (for `samplers`).
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
const ARRAYS = ['history', 'banned_tokens', 'allowed_tokens', 'dry_sequence_breakers'];
const AUX_LABELS = {
  HISTORY: 'history', BIAS: 'logit_bias', BANNED: 'banned_tokens', ALLOWED: 'allowed_tokens',
  BREAKERS: 'dry_sequence_breakers',
};
// Token ids one call's arrays may hold in all (see writeOptions).
const MAX_AUX_IDS = 2 ** 23;
const OTHER = ['seed', 'step', 'bregman', 'logit_bias', 'samplers', 'logprobs', 'return_distribution', 'sorted'];
const KNOWN = new Set([...Object.keys(SCALARS), ...ARRAYS, ...OTHER]);
const BREGMAN_KNOWN = new Set(['divergence', 'alpha', 'lambda', 'k', 'k_min', 'k_max']);

function checkNumber(name, v) {
  if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${typeof v}`);
  if (Number.isNaN(v)) throw new RangeError(`${name} must not be NaN`);
  return v;
}
function checkInteger(name, v, min = -Infinity) {
  checkNumber(name, v);
  if (!Number.isInteger(v) || v < min) {
    throw new RangeError(`${name} must be an integer${min > -Infinity ? ` >= ${min}` : ''}, got ${v}`);
  }
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
  if (!Number.isSafeInteger(v) || v < 0) {
    throw new RangeError(`${name} must be a non-negative safe integer or a bigint, got ${v}`);
  }
  return [Math.floor(v / TWO32), v % TWO32];
}
// An array-like of token ids (Int32Array, array of integers) as an Int32Array.
function tokenIds(name, v) {
  if (!(v instanceof Int32Array || v instanceof Uint32Array || Array.isArray(v))) {
    throw new TypeError(`${name} must be an Int32Array or an array of token ids`);
  }
  const out = new Int32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== 'number') throw new TypeError(`${name}[${i}] must be a number`);
    if (!Number.isInteger(x) || x < 0 || x > 2147483647) {
      throw new RangeError(`${name}[${i}] must be a token id (an integer >= 0), got ${x}`);
    }
    out[i] = x;
  }
  return out;
}
function biasEntries(v) {
  const entries = v instanceof Map ? [...v.entries()] : (typeof v === 'object' && v !== null && !Array.isArray(v))
    ? Object.entries(v) : null;
  if (entries === null) throw new TypeError('logit_bias must be an object or a Map from token id to bias');
  const ids = new Int32Array(entries.length), bias = new Float32Array(entries.length);
  entries.forEach(([k, b], i) => {
    // A number, or (object keys are strings) its canonical decimal string:
    // Number() would read '', '0x7', ' 7', true or null as ids too.
    const id = typeof k === 'number' ? k : typeof k === 'string' && /^(0|[1-9][0-9]*)$/.test(k) ? Number(k) : NaN;
    if (!Number.isInteger(id) || id < 0 || id > 2147483647) {
      throw new RangeError(`logit_bias: key ${typeof k === 'string' ? `'${k}'` : String(k)} is not a token id`);
    }
    if (typeof b !== 'number') throw new TypeError(`logit_bias[${k}] must be a number`);
    ids[i] = id;
    bias[i] = b;
  });
  return { ids, bias };
}

// A sampler's own copy of its options (fixed for its life: name and an
// unseeded reset() read them again): the caller's object, and the arrays,
// Maps and objects inside it, may change after createSampler. Values of a
// wrong type are kept as given, for writeOptions to refuse. Own keys are
// copied; the prototype is kept (options inherited from a defaults object
// read as before).
export function snapshotOptions(o) {
  if (o === null || typeof o !== 'object') return o;
  const copy = Object.create(Object.getPrototypeOf(o));
  for (const key of Object.keys(o)) {
    const v = o[key];
    copy[key] = Array.isArray(v) || v instanceof Int32Array || v instanceof Uint32Array ? v.slice()
      : v instanceof Map ? new Map(v.entries())
        : v !== null && typeof v === 'object' ? { ...v } : v;
  }
  return copy;
}

function writeBregman(slots, M, b) {
  if (b === undefined || b === null) return;
  if (typeof b !== 'object') throw new TypeError(`bregman must be an object, got ${typeof b}`);
  if (b instanceof Map) throw new TypeError('bregman must be a plain object, got a Map');
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
    // (Above the largest vocabulary the decoder's own message, which names
    // the row's size, would show the value cut to 32 bits.)
    const k = checkInteger('bregman.k', b.k, 1);
    if (k > M.MAX_VOCAB) throw new RangeError(`bregman.k must be <= the vocabulary size, got ${k}`);
    slots[M.SLOT_BREGMAN_K] = k;
  }
  else slots[M.SLOT_BREGMAN_LAMBDA] = checkNumber('bregman.lambda', b.lambda);
  if (b.k_min !== undefined) slots[M.SLOT_BREGMAN_K_MIN] = checkInteger('bregman.k_min', b.k_min, 1);
  if (b.k_max !== undefined) slots[M.SLOT_BREGMAN_K_MAX] = checkInteger('bregman.k_max', b.k_max, 1);
  if (b.k_min !== undefined && b.k_max !== undefined && b.k_min > b.k_max) {
    throw new RangeError(`bregman.k_min (${b.k_min}) must be <= bregman.k_max (${b.k_max})`);
  }
}

/**
 * The instance a sampler of bd.createSampler belongs to, or undefined for
 * anything else (the WebGPU decoder's batch refuses such samplers).
 */
export function samplerOwner(o) {
  return o !== null && typeof o === 'object' ? o[SAMPLER_BRAND] : undefined;
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
 * The module's own messages while it instantiates (emscripten prints a
 * failure, and "Aborted(...)", before it rejects): kept in `early` for the
 * load error instead of the console; once done() is called they go to
 * console.warn. Both entries' load() pass printErr to the module.
 */
export function instantiationMessages() {
  const early = [];
  let loading = true;
  return {
    early,
    printErr: (m) => {
      if (loading) early.push(String(m));
      else console.warn(m);
    },
    done: () => { loading = false; },
  };
}

/**
 * Checks load()'s options (both entries): a plain object with the known keys
 * only, each of its type, so a typo or a wrong value is an error naming it
 * rather than an opaque failure to instantiate the module (or, in Node, a
 * silently ignored option). Returns the options to hand the module.
 */
export function checkLoadOptions(init) {
  if (init === undefined || init === null) return {};
  if (typeof init !== 'object' || Array.isArray(init)) {
    throw new TypeError(`load() options must be an object, got ${Array.isArray(init) ? 'an array' : typeof init}`);
  }
  for (const key of Object.keys(init)) {
    if (key !== 'wasmBinary' && key !== 'locateFile') {
      throw new RangeError(`load(): unknown option ${key} (known: wasmBinary, locateFile)`);
    }
  }
  const out = {};
  const b = init.wasmBinary;
  if (b !== undefined) {
    if (!(b instanceof ArrayBuffer) && !(b instanceof Uint8Array)) {
      throw new TypeError(`wasmBinary must be an ArrayBuffer or a Uint8Array, got ${b === null ? 'null' : typeof b}`);
    }
    out.wasmBinary = b instanceof ArrayBuffer ? new Uint8Array(b) : b;
  }
  if (init.locateFile !== undefined) {
    if (typeof init.locateFile !== 'function') {
      throw new TypeError(`locateFile must be a function, got ${typeof init.locateFile}`);
    }
    out.locateFile = init.locateFile;
  }
  return out;
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
  // [name, slot index, kind] per scalar option, and the block of defaults,
  // resolved once: a call then only touches the options it is given.
  const scalarSlots = Object.entries(SCALARS).map(([name, [slot, kind]]) => [name, M[`SLOT_${slot}`], kind]);
  const defaults = new Float64Array(M.NUM_OPTION_SLOTS);
  for (const [name, [slot, , def]] of Object.entries(SCALARS)) defaults[M[`SLOT_${slot}`]] = def;
  const stageIds = new Map();
  for (let i = 0; i < M.NUM_STAGES; i++) stageIds.set(M.stageName(i), i);
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

  // Validates `options` and writes them (slots + aux arrays) into the module.
  // Returns whether a seed was given.
  function writeOptions(options, vocab) {
    slots.set(defaults);
    if (options === undefined || options === null) {
      M.HEAPF64.set(slots, raw.optionsPtr() >>> 3);
      return false;
    }
    if (typeof options !== 'object') throw new TypeError(`options must be an object, got ${typeof options}`);
    // A Map has no own keys: every option in it would be silently ignored.
    if (options instanceof Map) throw new TypeError('options must be a plain object, got a Map (its entries are not options)');
    for (const key of Object.keys(options)) {
      if (!KNOWN.has(key)) throw new RangeError(`unknown option ${key}`);
    }
    const o = options;
    for (const [name, slot, kind] of scalarSlots) {
      const v = o[name];
      if (v === undefined) continue;
      slots[slot] = kind === 'int' ? checkInteger(name, v) : checkNumber(name, v);
      // The core reads integer options as int32, clamped: its message for a
      // value below that range would show -2147483648, not the value given.
      if (kind === 'int' && v < -2147483648) {
        throw new RangeError(`${name} must be >= ${INT_MIN[name] ?? 0}, got ${v}`);
      }
    }
    for (const [name, slot] of [['logprobs', M.SLOT_LOGPROBS], ['return_distribution', M.SLOT_RETURN_DISTRIBUTION]]) {
      if (o[name] === undefined) continue;
      if (typeof o[name] !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${typeof o[name]}`);
      slots[slot] = o[name] ? 1 : 0;
    }
    if (o.sorted !== undefined) {
      if (typeof o.sorted !== 'boolean') throw new TypeError(`sorted must be a boolean, got ${typeof o.sorted}`);
      slots[M.SLOT_UNSORTED] = o.sorted ? 0 : 1;
    }
    if (o.mirostat !== undefined && o.mirostat !== 0 && o.mirostat !== 2) {
      throw new RangeError(`mirostat must be 0 (off) or 2 (Mirostat v2), got ${o.mirostat}`);
    }
    writeBregman(slots, M, o.bregman);

    // Aux arrays: [history | bias ids | banned | allowed | breakers].
    const parts = [];
    if (o.history !== undefined) parts.push(['HISTORY', tokenIds('history', o.history)]);
    let bias = null;
    if (o.logit_bias !== undefined) {
      bias = biasEntries(o.logit_bias);
      parts.push(['BIAS', bias.ids]);
    }
    if (o.banned_tokens !== undefined) parts.push(['BANNED', tokenIds('banned_tokens', o.banned_tokens)]);
    if (o.allowed_tokens !== undefined) {
      parts.push(['ALLOWED', tokenIds('allowed_tokens', o.allowed_tokens)]);
      slots[M.SLOT_RESTRICT_TO_ALLOWED] = 1;
    }
    if (o.dry_sequence_breakers !== undefined) {
      parts.push(['BREAKERS', tokenIds('dry_sequence_breakers', o.dry_sequence_breakers)]);
    }
    if (vocab !== undefined) {
      // An empty row is the row's error, not its ids' (as the core reports it).
      if (vocab === 0 && parts.length > 0) throw new RangeError('logits must not be empty');
      for (const [name, ids] of parts) {
        const label = AUX_LABELS[name];
        for (const id of ids) {
          if (id >= vocab) throw new RangeError(`${label}: token id ${id} is outside the vocabulary [0, ${vocab})`);
        }
      }
    }
    let total = 0;
    for (const [name, ids] of parts) {
      slots[M[`SLOT_${name}_OFFSET`]] = total;
      slots[M[`SLOT_${name}_LENGTH`]] = ids.length;
      total += ids.length;
    }
    // Before anything is allocated: a wasm allocation failure aborts the
    // module. Twice the largest vocabulary (a history and a ban list of every
    // id) is far beyond any real call.
    if (total > MAX_AUX_IDS) {
      throw new RangeError(`${parts.map(([name]) => AUX_LABELS[name]).join(' + ')}: ${total} token ids in all ` +
        `exceed the ${MAX_AUX_IDS} one call takes`);
    }

    if (o.samplers !== undefined) {
      if (!Array.isArray(o.samplers)) throw new TypeError('samplers must be an array of stage names');
      if (o.samplers.length > M.MAX_CHAIN_LENGTH) {
        throw new RangeError(`samplers: at most ${M.MAX_CHAIN_LENGTH} stages`);
      }
      o.samplers.forEach((name, i) => {
        if (typeof name !== 'string') throw new TypeError(`samplers[${i}] must be a string`);
        if (!stageIds.has(name)) {
          throw new RangeError(`samplers[${i}]: unknown stage '${name}' (known: ${[...stageIds.keys()].join(', ')})`);
        }
        slots[M.SLOT_ORDER + i] = stageIds.get(name);
      });
      slots[M.SLOT_ORDER_LENGTH] = o.samplers.length;
      // An option that switches on a stage missing from `samplers` would be
      // silently ignored: refuse it.
      for (const [stage, on] of Object.entries(STAGE_SWITCHES)) {
        if (on(o) && !o.samplers.includes(stage)) {
          throw new RangeError(`samplers does not list '${stage}', but options for it are given`);
        }
      }
    }

    let seeded = false;
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
      seeded = true;
    }

    // Write the aux arrays, then the slots (auxI32Ptr may grow memory, so
    // heap views are read after it). Lengths live in the slots, so calls
    // without arrays leave the aux arrays alone.
    const i32 = total ? raw.auxI32Ptr(total) >>> 2 : 0;
    const f32 = total ? raw.auxF32Ptr(total) >>> 2 : 0;
    for (const [name, ids] of parts) {
      const off = slots[M[`SLOT_${name}_OFFSET`]];
      M.HEAP32.set(ids, i32 + off);
      if (name === 'BIAS') M.HEAPF32.set(bias.bias, f32 + off);
    }
    M.HEAPF64.set(slots, raw.optionsPtr() >>> 3);
    return seeded;
  }

  function useStream() {
    slots[M.SLOT_SEED_HI] = streamSeed[0];
    slots[M.SLOT_SEED_LO] = streamSeed[1];
    slots[M.SLOT_STEP_HI] = Math.floor(streamStep / TWO32);
    slots[M.SLOT_STEP_LO] = streamStep % TWO32;
    streamStep += 1;
    M.HEAPF64.set(slots, raw.optionsPtr() >>> 3);
  }

  function checkLogits(logits) {
    if (!(logits instanceof Float32Array)) throw new TypeError('logits must be a Float32Array');
    // Before anything is allocated: a wasm allocation failure aborts the module.
    if (logits.length > M.MAX_VOCAB) {
      throw new RangeError(`logits: length ${logits.length} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
    }
  }
  // The zero-copy input: a view of the module's own input row (inputBuffer).
  // Calls given another array copy it into that same row: copyWrites counts
  // them, and a view used after such a call (its row overwritten) is refused.
  let inputView = null;
  // Every view inputBuffer() has returned: an earlier one is stale even once
  // memory growth has detached it (then it no longer shares the heap's buffer).
  const issuedViews = new WeakSet();
  // Whether logits is (or was) a view of the module's input row.
  const isInputView = (logits) => logits.buffer === M.HEAPF32.buffer || issuedViews.has(logits);
  let copyWrites = 0, inputViewCopies = 0;
  function inputBuffer(vocab) {
    live();
    checkInteger('vocab', vocab, 1);
    if (vocab > M.MAX_VOCAB) {
      throw new RangeError(`vocab: ${vocab} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
    }
    // inputPtr may grow memory (and move the row): read the heap after it.
    const ptr = raw.inputPtr(vocab);
    if (inputView === null || inputView.buffer !== M.HEAPF32.buffer ||
        inputView.byteOffset !== ptr || inputView.length !== vocab) {
      inputView = new Float32Array(M.HEAPF32.buffer, ptr, vocab);
      issuedViews.add(inputView);
    }
    inputViewCopies = copyWrites;
    return inputView;
  }
  // At a call's entry, before its options are written (writing them may grow
  // the memory, which detaches the view but moves nothing): for the input
  // view, where its row lies; null for any other array.
  function inputRow(logits) {
    if (logits !== inputView) {
      // An earlier view (inputBuffer() has returned another since): its
      // memory may hold another row now, or nothing.
      if (isInputView(logits)) {
        throw new RangeError('logits is a stale inputBuffer() view (a later inputBuffer() call ' +
          'replaced it): write the row into the view inputBuffer(vocab) returns last');
      }
      return null;
    }
    // A view whose memory grew before the call is detached (length 0): the
    // row written into it went nowhere.
    if (logits.buffer !== M.HEAPF32.buffer) {
      throw new RangeError('logits is a stale inputBuffer() view (the wasm memory grew): ' +
        'call inputBuffer(vocab) again before writing the row');
    }
    if (copyWrites !== inputViewCopies) {
      throw new RangeError('logits is an inputBuffer() view whose row a call with another logits ' +
        'array has overwritten since: call inputBuffer(vocab) again and write the row after it');
    }
    return { ptr: logits.byteOffset, length: logits.length };
  }
  // Puts the row in the module's input (input: inputRow's answer).
  function writeLogits(logits, input) {
    if (input !== null) {
      // Already in place: no copy, unless a longer row moved the input since.
      if (raw.inputPtr(input.length) !== input.ptr) {
        throw new RangeError('logits is a stale inputBuffer() view (a longer row moved the input): ' +
          'call inputBuffer(vocab) again before writing the row');
      }
      return;
    }
    // inputPtr may grow memory: read the heap view only after it.
    const ptr = raw.inputPtr(logits.length);
    M.HEAPF32.set(logits, ptr >>> 2);
    copyWrites += 1;
  }
  function check(status) {
    if (status !== 0) {
      const message = raw.error();
      throw status === 1 ? new TypeError(message) : new RangeError(message);
    }
  }
  function readDistribution(withObjective) {
    const k = raw.k();
    const ids = M.HEAP32.slice(raw.idsPtr() >>> 2, (raw.idsPtr() >>> 2) + k);
    const probs = M.HEAPF32.slice(raw.probsPtr() >>> 2, (raw.probsPtr() >>> 2) + k);
    const result = { k, ids, probs };
    if (withObjective) result.objective = raw.objective();
    return result;
  }
  // What a result reports, read from the option block just written (never
  // from the caller's object again: its getters could change the answer).
  function resultFlags() {
    return {
      rawLogprob: slots[M.SLOT_LOGPROBS] !== 0 || slots[M.SLOT_TOP_LOGPROBS] > 0,
      topLogprobs: slots[M.SLOT_TOP_LOGPROBS] > 0,
      distribution: slots[M.SLOT_RETURN_DISTRIBUTION] !== 0,
      // Bregman runs unless the call is greedy (temperature 0, or 1/T
      // overflowing float: the decoder's rule): then it reports no objective.
      objective: slots[M.SLOT_BREGMAN] !== 0 && !isGreedyTemperature(slots[M.SLOT_TEMPERATURE]),
    };
  }
  function readSample(flags) {
    const result = { token: raw.token(), logprob: raw.logprob(), k: raw.k() };
    if (flags.rawLogprob) result.raw_logprob = raw.rawLogprob();
    if (flags.topLogprobs) {
      const n = raw.topCount();
      const ids = M.HEAP32.subarray(raw.topIdsPtr() >>> 2, (raw.topIdsPtr() >>> 2) + n);
      const lp = M.HEAPF32.subarray(raw.topLogprobsPtr() >>> 2, (raw.topLogprobsPtr() >>> 2) + n);
      result.top_logprobs = Array.from(ids, (token, i) => ({ token, logprob: lp[i] }));
    }
    if (flags.distribution) {
      const { ids, probs } = readDistribution(false);
      result.distribution = { ids, probs };
    }
    return result;
  }

  function decode(logits, options) {
    checkLogits(logits);
    const n = logits.length, input = inputRow(logits);
    const seeded = writeOptions(options, n);
    const flags = resultFlags();
    // A random stage (XTC) without a seed draws from the unseeded stream, as
    // sample() does: it took seed 0, so its coin fell the same way every call.
    if (!seeded) useStream();
    writeLogits(logits, input);
    check(raw.decode(n));
    return readDistribution(flags.objective);
  }

  function sample(logits, options) {
    checkLogits(logits);
    const n = logits.length, input = inputRow(logits);
    const seeded = writeOptions(options, n);
    const flags = resultFlags();
    if (!seeded) useStream();
    writeLogits(logits, input);
    check(raw.sample(n));
    return readSample(flags);
  }

  class Sampler {
    /** @param {object} options fixed for the sampler's life */
    constructor(options, rawSampler, flags, vocab, seeded) {
      this._raw = rawSampler;
      this._options = options;
      this._flags = flags;
      // Without a seed the sampler's stream came from the entropy source, and
      // reset() draws a new one (a new sequence is not the last one again).
      this._seeded = seeded;
      // The vocabulary size of the first row seen (reset() forgets it): a
      // sampler's history is token ids of one model's vocabulary.
      this._vocab = vocab;
      this[SAMPLER_BRAND] = api;
      samplerRegistry?.register(this, rawSampler, this);
    }
    _alive() {
      live();
      if (this._raw === null) throw new TypeError('this sampler was disposed');
    }
    _checkVocab(logits) {
      checkLogits(logits);
      if (this._vocab !== null && logits.length !== this._vocab) {
        throw new RangeError(`sampler: logits length ${logits.length} differs from the vocabulary ` +
          `size ${this._vocab} this sampler was used with (reset() forgets it)`);
      }
    }
    _sample(logits) {
      this._alive();
      this._checkVocab(logits);
      const n = logits.length;
      writeLogits(logits, inputRow(logits));
      check(raw.sampleWith(this._raw, n));
      this._vocab = n;
      return readSample(this._flags);
    }
    _decode(logits) {
      this._alive();
      this._checkVocab(logits);
      const n = logits.length;
      writeLogits(logits, inputRow(logits));
      check(raw.decodeWith(this._raw, n));
      this._vocab = n;
      return readDistribution(this._flags.objective);
    }
    /** Draws the next token and accepts it (history, mirostat, step). */
    sample(logits) { return guardedSamplerSample(this, logits); }
    /** The processed distribution at the current state (nothing is accepted). */
    decode(logits) { return guardedSamplerDecode(this, logits); }
    /** Feeds a token that was not drawn here (a prompt token, a forced one). */
    accept(token) {
      this._alive();
      checkInteger('token', token, 0);
      const bound = this._vocab ?? 2147483648;
      if (token >= bound) {
        throw new RangeError(`token ${token} is outside the ${this._vocab === null ? 'int32 range'
          : `vocabulary [0, ${this._vocab})`}`);
      }
      this._raw.accept(token);
    }
    /**
     * Forgets the history, mirostat state and vocabulary; the draw counter
     * restarts. A seeded sampler then draws its sequence again; an unseeded
     * one draws from a fresh random seed.
     */
    reset() {
      this._alive();
      if (this._seeded) {
        this._raw.reset();
      } else {
        const fresh = guardedFreshRaw(this._options);
        samplerRegistry?.unregister(this);
        this._raw.delete();
        this._raw = fresh;
        samplerRegistry?.register(this, fresh, this);
      }
      this._vocab = null;
    }
    /** An independent copy with the same options and state. */
    clone() {
      this._alive();
      return new Sampler(this._options, this._raw.clone(), this._flags, this._vocab, this._seeded);
    }
    /** Number of accepted tokens kept (bounded; see docs/samplers.md). */
    get historyLength() { this._alive(); return this._raw.historyLength(); }
    /** Index of the next draw in the sampler's random stream. */
    get step() { this._alive(); return this._raw.step(); }
    /** The chain, in order, as stage names. */
    get name() {
      this._alive();
      const order = this._options?.samplers ?? DEFAULT_ORDER;
      return order.filter((s) => s === 'temperature' || STAGE_SWITCHES[s]?.(this._options ?? {}))
        .join(' -> ') + ' -> dist';
    }
    /** Frees the sampler's wasm memory now (otherwise the garbage collector does). */
    dispose() {
      if (this._raw !== null) {
        samplerRegistry?.unregister(this);
        this._raw.delete();
        this._raw = null;
      }
    }
  }
  const guardedSamplerSample = guarded('sample', (s, logits) => s._sample(logits));
  const guardedSamplerDecode = guarded('decode', (s, logits) => s._decode(logits));
  const DEFAULT_ORDER = ['logit_bias', 'penalties', 'dry', 'no_repeat_ngram', 'top_n_sigma', 'top_k',
    'typical_p', 'top_p', 'min_p', 'xtc', 'epsilon_cutoff', 'eta_cutoff', 'temperature', 'mirostat', 'bregman'];

  function createSampler(given = {}) {
    const options = snapshotOptions(given);
    if (options !== null && typeof options === 'object' && options.history !== undefined) {
      throw new RangeError('history is for the stateless calls; feed a sampler with accept()');
    }
    if (options !== null && typeof options === 'object' && options.step !== undefined) {
      throw new RangeError('step is for the stateless calls; a sampler counts its own draws');
    }
    const seeded = writeOptions(options);
    // A sampler's stages see its latest MAX_HISTORY tokens: a longer window
    // would silently read fewer than asked.
    for (const name of ['penalty_last_n', 'dry_penalty_last_n']) {
      const w = options?.[name];
      if (w > M.MAX_HISTORY) {
        throw new RangeError(`${name} ${w} exceeds the ${M.MAX_HISTORY} latest tokens a sampler's stages ` +
          'see (-1 reads all of them; the stateless calls take a history of any length)');
      }
    }
    const flags = resultFlags();
    if (!seeded) randomSeedSlots();
    check(raw.validate());
    return new Sampler(options, raw.createSampler(), flags, null, seeded);
  }
  function randomSeedSlots() {
    slots[M.SLOT_SEED_HI] = entropy32() >>> 0;
    slots[M.SLOT_SEED_LO] = entropy32() >>> 0;
    M.HEAPF64.set(slots, raw.optionsPtr() >>> 3);
  }
  // A new wasm sampler for an unseeded sampler's reset(): its options, a new seed.
  const guardedFreshRaw = guarded('reset', (options) => {
    writeOptions(options);
    randomSeedSlots();
    check(raw.validate());
    return raw.createSampler();
  });

  // [B, V] batches: `perRow` is one options object for every row, or an array
  // of B options objects or Samplers (per-row state). Row r gives exactly
  // what the single call on that row gives (tests/js/batch.test.mjs).
  function batch(kind, logits, vocab, perRow) {
    if (!(logits instanceof Float32Array)) throw new TypeError('logits must be a Float32Array');
    if (isInputView(logits)) {
      throw new RangeError('logits: an inputBuffer() view holds one row; pass a batch in its own Float32Array');
    }
    checkInteger('vocab', vocab, 1);
    if (vocab > M.MAX_VOCAB) throw new RangeError(`vocab ${vocab} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
    if (logits.length % vocab !== 0) {
      throw new RangeError(`logits length ${logits.length} is not a multiple of vocab ${vocab}`);
    }
    const rows = logits.length / vocab;
    if (Array.isArray(perRow) && perRow.length !== rows) {
      throw new RangeError(`per-row options: got ${perRow.length} entries for ${rows} rows`);
    }
    const out = new Array(rows);
    for (let r = 0; r < rows; r++) {
      const row = logits.subarray(r * vocab, (r + 1) * vocab);
      const o = Array.isArray(perRow) ? perRow[r] : perRow;
      if (o !== null && typeof o === 'object' && o[SAMPLER_BRAND] !== undefined && o[SAMPLER_BRAND] !== api) {
        throw new TypeError(`per-row options[${r}] is a sampler of another bregman-decoders instance`);
      }
      if (o instanceof Sampler) out[r] = kind === 'sample' ? o._sample(row) : o._decode(row);
      else out[r] = kind === 'sample' ? sample(row, o) : decode(row, o);
    }
    return out;
  }

  const api = {
    /** Highway target the kernels run on ('WASM' when SIMD128 is in use). */
    target: M.targetName(),
    /** Stage names accepted in `samplers`, in the default order. */
    stages: DEFAULT_ORDER.slice(),
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
    inputBuffer: guarded('inputBuffer', inputBuffer),
    createSampler: guarded('createSampler', createSampler),
    decodeBatch: guarded('decodeBatch', (logits, vocab, perRow) => batch('decode', logits, vocab, perRow)),
    sampleBatch: guarded('sampleBatch', (logits, vocab, perRow) => batch('sample', logits, vocab, perRow)),
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
  return api;
}
