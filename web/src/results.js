// Reading a call's answer out of the wasm decoder `raw` of module M.

/** Throws the decoder's error for a non-zero status (1: TypeError, else RangeError). */
export function checkStatus(raw, status) {
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
