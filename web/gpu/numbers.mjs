// Number formats and orders shared by the GPU decoder's modules.

// The CPU's candidate order (src/candidates.cc, OrderKey): logit descending
// (-0 and +0 tie, as OrderKey folds them), then the lower id.
export function byKey(la, ia, lb, ib) {
  if (la !== lb) return lb > la ? 1 : -1;
  return ia - ib;
}

// The float whose order-preserving bits (the WGSL's key_hi) are k; keys at or
// below -inf's give -FLT_MAX, as key_hi_float does on the GPU.
const keyWord = new Uint32Array(1), keyFloat = new Float32Array(keyWord.buffer);
export function keyHiFloat(k) {
  if (k >= 0x80000000) keyWord[0] = k ^ 0x80000000;
  else if (k < 0x00800000) return -3.4028234663852886e38;
  else keyWord[0] = ~k;
  return keyFloat[0];
}

// IEEE half to float (exact).
export function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

// float32 neighbours, for logits the CPU will read as floats.
const stepWord = new Uint32Array(1), stepFloat = new Float32Array(stepWord.buffer);
export const FLT_MAX = 3.4028234663852886e38;
/** The largest float32 strictly below the float32 x (x finite, > -FLT_MAX). */
export function floatBelow(x) {
  if (x === 0) return -1.401298464324817e-45;
  stepFloat[0] = x;
  stepWord[0] += x > 0 ? -1 : 1;
  return stepFloat[0];
}
/** The largest float32 at or below x (x a float64; -Infinity below -FLT_MAX). */
export function floatAtMost(x) {
  if (!(x >= -FLT_MAX)) return -Infinity;
  const f = Math.fround(x);
  return f > x ? (f === -FLT_MAX ? -Infinity : floatBelow(f)) : f;
}
