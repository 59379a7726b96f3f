// Options: validation, and the writing of one call's options into the wasm
// module's option block (a Float64Array of slots, layout src/option_slots.h)
// and its aux arrays (token ids and biases). Types are checked here
// (TypeError); numeric ranges are checked in C++, whose messages name the
// option and become RangeErrors.
import { biasEntries, checkInteger, checkNumber, maskWords, splitU64, tokenIds, TWO32 } from './checks.js';
import { BREGMAN_KEYS, LIST_OPTIONS, isGreedyTemperature, resolveOptionSlots, stagesOfMask } from './stage_table.js';

// Token ids one call's lists may hold in all: twice the largest vocabulary (a
// history and a ban list of every id) is far beyond any real call, and the
// check comes before anything is allocated (a wasm allocation failure aborts
// the module).
const MAX_AUX_IDS = 2 ** 23;

// A sampler's own copy of its options (fixed for its life: name and an
// unseeded reset() read them again): the caller's object, and the arrays,
// Maps and objects inside it, may change after createSampler. Values of a
// wrong type are kept as given, for the option writer to refuse. Own keys are
// copied; the prototype is kept (options inherited from a defaults object
// read as given).
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

function checkOptionsObject(options, known) {
  if (typeof options !== 'object') throw new TypeError(`options must be an object, got ${typeof options}`);
  // A Map has no own keys: every option in it would be silently ignored.
  if (options instanceof Map) throw new TypeError('options must be a plain object, got a Map (its entries are not options)');
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new RangeError(`unknown option ${key}`);
  }
}

// The slot values of the 'choice' options (src/option_slots.h,
// OptionKind::kChoice), by the JS value given.
const CHOICES = { p_less: new Map([[false, 0], [true, 1], ['norm', 2]]) };

function choiceValue(name, v) {
  const values = CHOICES[name];
  if (values.has(v)) return values.get(v);
  const allowed = [...values.keys()].map((k) => (typeof k === 'string' ? `'${k}'` : String(k))).join(', ');
  if (typeof v !== 'boolean' && typeof v !== 'string') {
    throw new TypeError(`${name} must be one of ${allowed}, got ${typeof v}`);
  }
  throw new RangeError(`${name} must be one of ${allowed}, got ${typeof v === 'string' ? `'${v}'` : v}`);
}

function writeScalars(slots, o, scalars) {
  for (const [name, slot, kind, lowest] of scalars) {
    const v = o[name];
    if (v === undefined) continue;
    if (kind === 'choice') {
      slots[slot] = choiceValue(name, v);
      continue;
    }
    slots[slot] = kind === 'int' ? checkInteger(name, v) : checkNumber(name, v);
    // The core reads integer options as int32, clamped: its message for a
    // value below that range would show -2147483648, not the value given.
    if (kind === 'int' && v < -2147483648) {
      throw new RangeError(`${name} must be >= ${lowest}, got ${v}`);
    }
  }
}

function writeSwitches(slots, M, o) {
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
}

function writeBregman(slots, M, b) {
  if (b === undefined || b === null) return;
  if (typeof b !== 'object') throw new TypeError(`bregman must be an object, got ${typeof b}`);
  if (b instanceof Map) throw new TypeError('bregman must be a plain object, got a Map');
  for (const key of Object.keys(b)) {
    if (!BREGMAN_KEYS.has(key)) throw new RangeError(`unknown option bregman.${key}`);
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

// The token-id lists of a call as [option name, Int32Array] in the aux
// block's order, and logit_bias's values (or null).
function readLists(slots, M, o) {
  const parts = [];
  let bias = null;
  for (const name of Object.keys(LIST_OPTIONS)) {
    if (o[name] === undefined) continue;
    if (name === 'logit_bias') {
      bias = biasEntries(o.logit_bias);
      parts.push([name, bias.ids]);
    } else {
      parts.push([name, tokenIds(name, o[name])]);
    }
    if (name === 'allowed_tokens') slots[M.SLOT_RESTRICT_TO_ALLOWED] = 1;
  }
  return { parts, bias: bias && bias.bias };
}

// Places the lists in the aux block (offsets and lengths into the slots).
function layOutLists(slots, M, parts, vocab) {
  if (vocab !== undefined) {
    // An empty row is the row's error, not its ids' (as the core reports it).
    if (vocab === 0 && parts.length > 0) throw new RangeError('logits must not be empty');
    for (const [name, ids] of parts) {
      for (const id of ids) {
        if (id >= vocab) throw new RangeError(`${name}: token id ${id} is outside the vocabulary [0, ${vocab})`);
      }
    }
  }
  let total = 0;
  for (const [name, ids] of parts) {
    const label = LIST_OPTIONS[name][0];
    slots[M[`SLOT_${label}_OFFSET`]] = total;
    slots[M[`SLOT_${label}_LENGTH`]] = ids.length;
    total += ids.length;
  }
  if (total > MAX_AUX_IDS) {
    throw new RangeError(`${parts.map(([name]) => name).join(' + ')}: ${total} token ids in all ` +
      `exceed the ${MAX_AUX_IDS} one call takes`);
  }
  return total;
}

// allowed_mask (read once): the mask and its word count, which must be
// ceil(vocab / 32) for rows of `vocab` (when known; otherwise within what
// the largest vocabulary takes); null when not given.
function readMask(M, o, vocab) {
  const mask = o.allowed_mask;
  if (mask === undefined) return null;
  const words = maskWords('allowed_mask', mask);
  if (vocab === 0) throw new RangeError('logits must not be empty');
  if (vocab !== undefined && words !== Math.ceil(vocab / 32)) {
    throw new RangeError(`allowed_mask: ${words} words for a row of ${vocab} tokens; ` +
      `it must hold ceil(${vocab} / 32) = ${Math.ceil(vocab / 32)}`);
  }
  const most = Math.ceil(M.MAX_VOCAB / 32);
  if (words === 0 || words > most) {
    throw new RangeError(`allowed_mask: ${words} words; a mask holds ceil(vocab / 32) words, 1 to ${most}`);
  }
  return { mask, words };
}

function writeSamplers(slots, M, o, stageIds) {
  if (o.samplers === undefined) return;
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
}

// An option that switches on a stage missing from `samplers` would be
// silently ignored: refused. `configured`: the core's answer for the block
// written (StageSpec::configured, bit i for stage id i).
function checkSamplersCover(o, configured, stageNames) {
  for (const stage of stagesOfMask(stageNames, configured)) {
    if (!o.samplers.includes(stage)) {
      throw new RangeError(`samplers does not list '${stage}', but options for it are given`);
    }
  }
}

// Returns whether a seed was given.
function writeSeed(slots, M, o) {
  if (o.step !== undefined) {
    if (o.seed === undefined) throw new RangeError('step needs a seed');
    const [hi, lo] = splitU64('step', o.step);
    slots[M.SLOT_STEP_HI] = hi;
    slots[M.SLOT_STEP_LO] = lo;
  }
  if (o.seed === undefined) return false;
  const [hi, lo] = splitU64('seed', o.seed);
  slots[M.SLOT_SEED_HI] = hi;
  slots[M.SLOT_SEED_LO] = lo;
  return true;
}

/**
 * The option block of one wasm decoder `raw` of module M: write() validates a
 * call's options and writes them (slots, then aux arrays) into the module.
 */
export function createOptionBlock(M, raw) {
  const slots = new Float64Array(M.NUM_OPTION_SLOTS);
  // Resolved once: a call then only touches the options it is given.
  const { scalars, defaults, stageIds, registry } = resolveOptionSlots(M);
  const commit = () => M.HEAPF64.set(slots, raw.optionsPtr() >>> 3);

  // Writes the aux arrays, then the slots (auxI32Ptr may grow memory, so heap
  // views are read after it). Lengths live in the slots, so calls without
  // lists leave the aux arrays alone.
  // The mask's words follow the lists in the int32 aux array.
  function writeLists(parts, bias, total, mask) {
    const i32Total = total + (mask === null ? 0 : mask.words);
    const i32 = i32Total ? raw.auxI32Ptr(i32Total) >>> 2 : 0;
    const f32 = total ? raw.auxF32Ptr(total) >>> 2 : 0;
    for (const [name, ids] of parts) {
      const off = slots[M[`SLOT_${LIST_OPTIONS[name][0]}_OFFSET`]];
      M.HEAP32.set(ids, i32 + off);
      if (name === 'logit_bias') M.HEAPF32.set(bias, f32 + off);
    }
    // Uint32 words convert to int32 modulo 2^32: the same bits.
    if (mask !== null) M.HEAP32.set(mask.mask, i32 + total);
  }

  return {
    slots,
    /** Validates `options` (for rows of `vocab`, when given) and writes them; returns whether a seed was given. */
    write(options, vocab) {
      slots.set(defaults);
      if (options === undefined || options === null) {
        commit();
        return false;
      }
      checkOptionsObject(options, registry.known);
      const o = options;
      writeScalars(slots, o, scalars);
      writeSwitches(slots, M, o);
      writeBregman(slots, M, o.bregman);
      const { parts, bias } = readLists(slots, M, o);
      const mask = readMask(M, o, vocab);
      const total = layOutLists(slots, M, parts, vocab);
      if (mask !== null) {
        slots[M.SLOT_ALLOWED_MASK_OFFSET] = total;
        slots[M.SLOT_ALLOWED_MASK_LENGTH] = mask.words;
      }
      writeSamplers(slots, M, o, stageIds);
      const seeded = writeSeed(slots, M, o);
      writeLists(parts, bias, total, mask);
      commit();
      if (o.samplers !== undefined) checkSamplersCover(o, raw.configuredStages(), registry.stages);
      return seeded;
    },
    /** Sets the seed and step of the block already written, and writes it. */
    setSeed([seedHi, seedLo], step = 0) {
      slots[M.SLOT_SEED_HI] = seedHi;
      slots[M.SLOT_SEED_LO] = seedLo;
      slots[M.SLOT_STEP_HI] = Math.floor(step / TWO32);
      slots[M.SLOT_STEP_LO] = step % TWO32;
      commit();
    },
    // What a result reports, read from the option block just written (never
    // from the caller's object again: its getters could change the answer).
    resultFlags() {
      return {
        rawLogprob: slots[M.SLOT_LOGPROBS] !== 0 || slots[M.SLOT_TOP_LOGPROBS] > 0,
        topLogprobs: slots[M.SLOT_TOP_LOGPROBS] > 0,
        distribution: slots[M.SLOT_RETURN_DISTRIBUTION] !== 0,
        // Bregman runs unless the call is greedy (temperature 0, or 1/T
        // overflowing float: the decoder's rule): then it reports no objective.
        objective: slots[M.SLOT_BREGMAN] !== 0 && !isGreedyTemperature(slots[M.SLOT_TEMPERATURE]),
      };
    },
  };
}
