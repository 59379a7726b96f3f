// ExpF32's operations (src/kernels/exp-inl.h), one float at a time: the scalar
// twin the kernel tests compare bit for bit and the cross-target test uses to
// build rows at a CDF boundary. Compiled with -ffp-contract=off like the core.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace bd_test {

inline float ExpF32Twin(float x) {
  if (x < -87.0f) return 0.0f;
  x = std::min(std::max(x, -87.5f), 88.0f);
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  const float c[] = {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f};
  float p = 1.0f / 5040.0f;
  for (float k : c) p = p * r + k;
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof(two_n));
  return p * two_n;
}

}  // namespace bd_test
