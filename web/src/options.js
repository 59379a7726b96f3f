// Options: validation, and the writing of one call's options into the wasm
// module's option block (a Float64Array of slots, layout src/option_slots.h)
// and its aux arrays (token ids and biases). Types are checked here
// (TypeError); numeric ranges are checked in C++, whose messages name the
// option and become RangeErrors.
import { biasEntries, checkInteger, checkNumber, maskWords, splitU64, tokenIds, TWO32 } from './checks.js';
import { outOfMemory } from './results.js';
import { isDetached, typedArrayKind } from './typed_arrays.js';
import { BREGMAN_KEYS, LIST_OPTIONS, isGreedyTemperature, resolveOptionSlots, stagesOfMask } from './stage_table.js';

// Token ids one call's lists may hold in all: twice the largest vocabulary (a
// history and a ban list of every id) is far beyond any real call; the check
// comes before anything is allocated.
const MAX_AUX_IDS = 2 ** 23;

// What a call reads of its options object, read once at the call's entry
// (or at createSampler): snapshotOptions returns a plain frozen copy that the
// checks and the writer use, so a getter or Proxy that answers differently
// on a second read cannot pass the checks with one value and run with
// another, and an object changed later cannot change a sampler.
// The rule: options (and bregman) must be plain objects (Object.prototype's
// toString tag 'Object', not an array: arrays, Maps, Sets, typed arrays,
// Dates and the like are a TypeError); their options are their enumerable
// string-keyed properties, own and inherited alike (for...in: a defaults
// object as the prototype works), each read exactly once, and an unknown
// one, own or inherited, is a RangeError. Lists are copied (arrays element by element, typed arrays
// through the intrinsic getters, Maps through the intrinsic entries); values
// of a wrong type are kept as given, for the writer to refuse.
const mapEntries = Map.prototype.entries;

// What a non-plain object is, for the message; null for a plain object.
function nonPlainKind(v) {
  if (Array.isArray(v)) return 'an array';
  const kind = typedArrayKind(v);
  if (kind !== undefined) return `a ${kind}`;
  const tag = Object.prototype.toString.call(v).slice(8, -1);
  return tag === 'Object' ? null : `a ${tag}`;
}

// The enumerable options (own and inherited) of a plain object `o` named
// `name`, each read once.
function readOptions(name, o, known, prefix) {
  if (typeof o !== 'object') throw new TypeError(`${name} must be an object, got ${typeof o}`);
  // A Map has no own keys: every option in it would be silently ignored.
  if (o instanceof Map) {
    throw new TypeError(`${name} must be a plain object, got a Map${name === 'options' ? ' (its entries are not options)' : ''}`);
  }
  const kind = nonPlainKind(o);
  if (kind !== null) throw new TypeError(`${name} must be a plain object ({ ... }), got ${kind}`);
  const copy = Object.create(null);
  for (const key in o) {
    if (known !== null && !known.has(key)) throw new RangeError(`unknown option ${prefix}${key}`);
    copy[key] = o[key];
  }
  return copy;
}

// An array-like's elements, each read once (its length read once).
function copyElements(v) {
  const n = v.length;
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = v[i];
  return out;
}

function copyList(name, v) {
  const kind = typedArrayKind(v);
  if (kind === 'Int32Array' || kind === 'Uint32Array') {
    if (isDetached(v)) throw new TypeError(`${name}: its ArrayBuffer is detached`);
    return kind === 'Int32Array' ? new Int32Array(v) : new Uint32Array(v);
  }
  // Arrays, and Proxies of arrays or of token id typed arrays.
  if (Array.isArray(v) || (kind === undefined && (v instanceof Int32Array || v instanceof Uint32Array))) {
    return copyElements(v);
  }
  return v;
}

function copyBias(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  if (v instanceof Map) {
    let entries;
    try {
      entries = Reflect.apply(mapEntries, v, []);
    } catch {
      throw new TypeError('logit_bias must be an object or a Map from token id to bias');
    }
    return new Map(entries);
  }
  const copy = Object.create(null);
  for (const [k, b] of Object.entries(v)) copy[k] = b;
  return copy;
}

/**
 * The snapshot of a call's options (undefined and null stay as they are):
 * checked to be a plain object (of `known` options, when given: the option
 * block's snapshot passes them; the WebGPU decoder leaves the names to the
 * calls it makes), each read once.
 */
export function snapshotOptions(options, known = null) {
  if (options === undefined || options === null) return options;
  const o = readOptions('options', options, known, '');
  if (Array.isArray(o.samplers)) o.samplers = copyElements(o.samplers);
  if (o.bregman !== undefined && o.bregman !== null && typeof o.bregman === 'object') {
    o.bregman = readOptions('bregman', o.bregman, BREGMAN_KEYS, 'bregman.');
  }
  for (const name of Object.keys(LIST_OPTIONS)) {
    if (o[name] === undefined) continue;
    o[name] = name === 'logit_bias' ? copyBias(o[name]) : copyList(name, o[name]);
  }
  return Object.freeze(o);
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
  if (o.mirostat !== undefined && o.mirostat !== 0 && o.mirostat !== 1 && o.mirostat !== 2) {
    throw new RangeError(`mirostat must be 0 (off), 1 (Mirostat 1.0) or 2 (Mirostat 2.0), got ${o.mirostat}`);
  }
}

function writeBregman(slots, M, b) {
  if (b === undefined || b === null) return;
  // (A snapshot's bregman is a checked plain object, or as given when not an object.)
  if (typeof b !== 'object') throw new TypeError(`bregman must be an object, got ${typeof b}`);
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
    const i32Ptr = i32Total ? raw.auxI32Ptr(i32Total) : 0;
    const f32Ptr = total ? raw.auxF32Ptr(total) : 0;
    if ((i32Total && i32Ptr === 0) || (total && f32Ptr === 0)) {
      throw outOfMemory(`the options' ${i32Total} token ids and mask words`);
    }
    const i32 = i32Ptr >>> 2, f32 = f32Ptr >>> 2;
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
    /** A call's options read once and checked to be a plain object of known options (snapshotOptions). */
    snapshot: (options) => snapshotOptions(options, registry.known),
    /**
     * Validates a snapshot's options (for rows of `vocab`, when given) and
     * writes them; returns whether a seed was given.
     */
    write(o, vocab) {
      slots.set(defaults);
      if (o === undefined || o === null) {
        commit();
        return false;
      }
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
