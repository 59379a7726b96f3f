// Typed arrays measured through the intrinsic %TypedArray%.prototype getters,
// captured when the module loads: a subclass or an own property cannot change
// what they answer (`class Liar extends Float32Array { get length() { ... } }`
// reports the length of the memory it really views). Every entry point reads
// a caller's array only through these, and copies it with the intrinsic set.

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const intrinsicGetter = (name) => Object.getOwnPropertyDescriptor(TypedArrayPrototype, name).get;
const getLength = intrinsicGetter('length');
const getByteOffset = intrinsicGetter('byteOffset');
const getBuffer = intrinsicGetter('buffer');
const getKind = intrinsicGetter(Symbol.toStringTag);
const intrinsicFill = TypedArrayPrototype.fill;
const NativeFloat32Array = Float32Array;
const NativeUint8Array = Uint8Array;
const apply = Reflect.apply;

/** The typed array's kind ('Float32Array', ...), undefined for anything else (a Proxy included). */
export const typedArrayKind = (v) => apply(getKind, v, []);
/** Its element count, as the engine knows it (0 once detached). */
export const typedLength = (a) => apply(getLength, a, []);
export const typedByteOffset = (a) => apply(getByteOffset, a, []);
export const typedBuffer = (a) => apply(getBuffer, a, []);
/** a.fill(value) without the subclass's own fill. */
export const typedFill = (a, value) => apply(intrinsicFill, a, [value]);

/** Whether a typed array's buffer is detached (transferred, or a wasm memory that grew). */
export function isDetached(a) {
  const buffer = typedBuffer(a);
  // A view of a detached buffer cannot be made, not even an empty one.
  try {
    new NativeUint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** A plain Float32Array over `length` floats of a's memory from element `start`. */
export function float32View(a, start, length) {
  return new NativeFloat32Array(typedBuffer(a), typedByteOffset(a) + 4 * start, length);
}

/**
 * Checks that `v` is a Float32Array (a subclass included) whose buffer is not
 * detached; returns its real length. `name` names the argument in errors.
 */
export function float32Length(name, v) {
  if (typedArrayKind(v) !== 'Float32Array') throw new TypeError(`${name} must be a Float32Array`);
  if (isDetached(v)) {
    throw new TypeError(`${name}: its ArrayBuffer is detached (transferred, or a wasm memory ` +
      'that grew): pass an array whose memory is still there');
  }
  return typedLength(v);
}
