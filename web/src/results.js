// Reading a call's answer out of the wasm decoder `raw` of module M.

// The bindings' status for a call the wasm memory cannot hold (kOutOfMemory
// in bindings/embind.cpp, the module's OUT_OF_MEMORY).
const OUT_OF_MEMORY = 3;

/**
 * Throws the decoder's error for a non-zero status (1: TypeError, out of
 * memory: outOfMemory's RangeError, else RangeError).
 */
export function checkStatus(raw, status) {
  if (status === OUT_OF_MEMORY) throw outOfMemory('this call');
  if (status !== 0) {
    const message = raw.error();
    throw status === 1 ? new TypeError(message) : new RangeError(message);
  }
}

/** The processed distribution: { k, ids, probs } (and objective). */
export function readDistribution(M, raw, withObjective) {
  const k = raw.k();
  const ids = M.HEAP32.slice(raw.idsPtr() >>> 2, (raw.idsPtr() >>> 2) + k);
  const probs = M.HEAPF32.slice(raw.probsPtr() >>> 2, (raw.probsPtr() >>> 2) + k);
  const result = { k, ids, probs };
  if (withObjective) result.objective = raw.objective();
  return result;
}

/** One draw's result; `flags` (the option block's resultFlags) say what it reports. */
export function readSample(M, raw, flags) {
  const result = { token: raw.token(), logprob: raw.logprob(), k: raw.k() };
  if (flags.rawLogprob) result.raw_logprob = raw.rawLogprob();
  if (flags.topLogprobs) {
    const n = raw.topCount();
    const ids = M.HEAP32.subarray(raw.topIdsPtr() >>> 2, (raw.topIdsPtr() >>> 2) + n);
    const lp = M.HEAPF32.subarray(raw.topLogprobsPtr() >>> 2, (raw.topLogprobsPtr() >>> 2) + n);
    result.top_logprobs = Array.from(ids, (token, i) => ({ token, logprob: lp[i] }));
  }
  if (flags.distribution) {
    const { ids, probs } = readDistribution(M, raw, false);
    result.distribution = { ids, probs };
  }
  return result;
}

/**
 * The error for an allocation the wasm module could not make (its memory is
 * at most 2 GiB): a RangeError that says what to free; the instance stays usable.
 */
export function outOfMemory(what) {
  return new RangeError(`out of wasm memory for ${what}: dispose() samplers no longer used ` +
    '(a forgotten one is freed only when the garbage collector runs), or decode a smaller ' +
    'vocabulary');
}
