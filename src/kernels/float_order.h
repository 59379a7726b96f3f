// An order-preserving map between floats and uint32 (for a bisection over
// the floats themselves: every float between two bounds is one integer
// between their images). -0 maps just below +0; NaN has no place in it.
#pragma once

#include <cstdint>
#include <cstring>

namespace bd {

inline uint32_t OrderedBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

inline float FromOrderedBits(uint32_t b) {
  b = (b & 0x80000000u) ? (b & 0x7FFFFFFFu) : ~b;
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

}  // namespace bd
