// The package's uniform draws (src/rng.h), in JS: the one definition the
// WebGPU decoder and the tests use (tests/js/draw_twin.mjs re-exports it).
// The draw for step `step` of stream `seed` is a pure function of both,
// computed in 64-bit integer arithmetic (BigInt), so it equals the wasm
// module's and the native library's bit for bit.

const MASK64 = (1n << 64n) - 1n;

// SplitMix64's finaliser: a bijective 64-bit mix.
function mix64(z) {
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  return z ^ (z >> 31n);
}

/**
 * UniformDraw(seed, step): the uniform in [0, 1) (53 random bits) of draw
 * `step` of stream `seed`. seed and step: bigints or safe integers, taken
 * modulo 2^64.
 */
export function uniformDraw(seed, step) {
  const key = mix64(BigInt.asUintN(64, BigInt(seed)) ^ 0x6A09E667F3BCC909n);
  const bits = mix64((key + (BigInt.asUintN(64, BigInt(step)) + 1n) * 0x9E3779B97F4A7C15n) & MASK64);
  return Number(bits >> 11n) * 2 ** -53;
}

/** A random 64-bit seed (a bigint) from the platform's crypto source. */
export function randomSeed64() {
  const a = new Uint32Array(2);
  globalThis.crypto.getRandomValues(a);
  return (BigInt(a[0]) << 32n) | BigInt(a[1]);
}
