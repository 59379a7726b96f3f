// An order-preserving map between floats and uint32 (for a bisection over
// the floats themselves: every float between two bounds is one integer
// between their images). -0 maps just below +0; NaN has no place in it.
#pragma once

#include <cstdint>
#include <cstring>

namespace bd {

// Negative floats flip every bit, the others only the sign, by one xor with
// a mask made of the sign (no branch: in a loop over a row of mixed signs a
// branch mispredicts on half the entries).
inline uint32_t OrderedBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  const uint32_t negative = 0u - (b >> 31);  // all ones for a set sign bit
  return b ^ (negative | 0x80000000u);
}

inline float FromOrderedBits(uint32_t b) {
  const uint32_t was_negative = (b >> 31) - 1u;  // all ones for a clear top bit
  b ^= was_negative | 0x80000000u;
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

}  // namespace bd
