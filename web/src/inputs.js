// The logits row's way into the wasm module: a copy into the module's input
// row, or zero copy through a view of that row (inputBuffer). Calls given
// another array copy it into that same row: copyWrites counts them, and a
// view used after such a call (its row overwritten) is refused.
// The row is measured and its memory located through the intrinsic typed
// array getters only (typed_arrays.js), never its own properties.
import { checkInteger } from './checks.js';
import { outOfMemory } from './results.js';
import { float32Length, typedArrayKind, typedBuffer, typedByteOffset, typedLength } from './typed_arrays.js';

/**
 * A row's checks that need no module state: type, detached memory and
 * length. Returns the row's length. (`inputs`: a stale inputBuffer() view,
 * detached by memory growth, gets its own message from inputRow.)
 */
export function checkLogits(M, logits, inputs) {
  const n = inputs !== undefined && inputs.isInputView(logits) ? typedLength(logits)
    : float32Length('logits', logits);
  // Before anything is allocated: past it the module refuses the row anyway.
  if (n > M.MAX_VOCAB) {
    throw new RangeError(`logits: length ${n} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
  }
  return n;
}

/** The input row of the wasm decoder `raw` of module M. */
export function createInputs(M, raw) {
  let inputView = null;
  // Every view inputBuffer() has returned: an earlier one is stale even once
  // memory growth has detached it (then it no longer shares the heap's buffer).
  const issuedViews = new WeakSet();
  let copyWrites = 0, inputViewCopies = 0;
  // Whether logits is (or was) a view of the module's input row.
  const isInputView = (logits) => issuedViews.has(logits) ||
    (typedArrayKind(logits) !== undefined && typedBuffer(logits) === M.HEAPF32.buffer);

  function inputBuffer(vocab) {
    checkInteger('vocab', vocab, 1);
    if (vocab > M.MAX_VOCAB) {
      throw new RangeError(`vocab: ${vocab} exceeds the largest vocabulary (${M.MAX_VOCAB})`);
    }
    // inputPtr may grow memory (and move the row): read the heap after it.
    const ptr = raw.inputPtr(vocab);
    if (ptr === 0) throw outOfMemory(`an input row of ${vocab} floats`);
    if (inputView === null || typedBuffer(inputView) !== M.HEAPF32.buffer ||
        typedByteOffset(inputView) !== ptr || typedLength(inputView) !== vocab) {
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
    if (typedBuffer(logits) !== M.HEAPF32.buffer) {
      throw new RangeError('logits is a stale inputBuffer() view (the wasm memory grew): ' +
        'call inputBuffer(vocab) again before writing the row');
    }
    if (copyWrites !== inputViewCopies) {
      throw new RangeError('logits is an inputBuffer() view whose row a call with another logits ' +
        'array has overwritten since: call inputBuffer(vocab) again and write the row after it');
    }
    return { ptr: typedByteOffset(logits), length: typedLength(logits) };
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
    const ptr = raw.inputPtr(typedLength(logits));
    if (ptr === 0) throw outOfMemory(`an input row of ${typedLength(logits)} floats`);
    // The intrinsic set copies the array's real elements.
    M.HEAPF32.set(logits, ptr >>> 2);
    copyWrites += 1;
  }

  return { inputBuffer, inputRow, writeLogits, isInputView };
}
