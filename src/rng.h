// Counter-based random numbers: the draw for step `step` of stream `seed` is a
// pure function of (seed, step), computed with 64-bit integer arithmetic only,
// so native builds, Node and browsers produce the same uniforms bit for bit.
#pragma once

#include <cstdint>

namespace bd {

// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform double in [0, 1) with 53 random bits for draw `step` of `seed`.
inline double UniformDraw(uint64_t seed, uint64_t step) {
  const uint64_t key = Mix64(seed ^ 0x6A09E667F3BCC909ull);
  const uint64_t bits = Mix64(key + (step + 1) * 0x9E3779B97F4A7C15ull);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace bd
