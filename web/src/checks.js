// Type and range checks of single option values: a wrong type is a
// TypeError, a value outside what the slots can carry a RangeError. The
// numeric ranges proper are checked once, in C++ (Decoder::Validate).

import { isDetached, typedArrayKind, typedLength } from './typed_arrays.js';

export const TWO32 = 4294967296;

export function checkNumber(name, v) {
  if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${typeof v}`);
  if (Number.isNaN(v)) throw new RangeError(`${name} must not be NaN`);
  return v;
}

export function checkInteger(name, v, min = -Infinity) {
  checkNumber(name, v);
  if (!Number.isInteger(v) || v < min) {
    throw new RangeError(`${name} must be an integer${min > -Infinity ? ` >= ${min}` : ''}, got ${v}`);
  }
  return v;
}

// A 64-bit unsigned integer (number up to 2^53 - 1, or bigint up to 2^64 - 1)
// as [hi, lo] 32-bit halves.
export function splitU64(name, v) {
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
export function tokenIds(name, v) {
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

// logit_bias (an object or a Map from token id to bias) as { ids, bias }.
export function biasEntries(v) {
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

/**
 * A packed token mask (XGrammar's bitmask: bit t % 32 of word t / 32 set =
 * token t allowed): an Int32Array or Uint32Array of any realm. Returns its
 * word count; TypeError for any other value.
 */
export function maskWords(name, v) {
  const kind = v !== null && typeof v === 'object' ? typedArrayKind(v) : undefined;
  if (kind !== 'Int32Array' && kind !== 'Uint32Array') {
    throw new TypeError(`${name} must be an Int32Array or a Uint32Array of ceil(vocab / 32) words ` +
      `(bit t % 32 of word t / 32 set: token t allowed), got ${kind ?? (v === null ? 'null' : typeof v)}`);
  }
  if (isDetached(v)) throw new TypeError(`${name}: its ArrayBuffer is detached (transferred?)`);
  return typedLength(v);
}
