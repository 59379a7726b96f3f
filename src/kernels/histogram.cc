#include "kernels/histogram.h"

#include <cfloat>
#include <cmath>
#include <cstring>

namespace bd {
namespace {

inline float BucketCoordinate(float max, float inv_width, float v) { return (max - v) * inv_width; }

// Order-preserving map float <-> uint32 (for a bisection over floats).
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

}  // namespace

void MassHistogram(const float* v, const float* e, size_t n, float max, float inv_width,
                   double* mass, uint32_t* count) {
  for (size_t j = 0; j < kMassBuckets; ++j) {
    mass[j] = 0.0;
    count[j] = 0;
  }
  const float last = static_cast<float>(kMassBuckets - 1);
  for (size_t i = 0; i < n; ++i) {
    const float x = BucketCoordinate(max, inv_width, v[i]);
    // NaN-free: -inf gives +inf here, clamped to the last bucket.
    const size_t j = x < last ? static_cast<size_t>(x) : kMassBuckets - 1;
    mass[j] += e[i];
    ++count[j];
  }
}

float BucketThreshold(float max, float inv_width, uint32_t k) {
  const float bound = static_cast<float>(k);
  // Bisection over the float order on [-FLT_MAX, max]: the coordinate is
  // monotone (non-increasing) in v, and v = max gives 0 < k.
  uint32_t lo = OrderedBits(-FLT_MAX), hi = OrderedBits(max);  // hi satisfies
  if (BucketCoordinate(max, inv_width, -FLT_MAX) < bound) return -FLT_MAX;
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (BucketCoordinate(max, inv_width, FromOrderedBits(mid)) < bound) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return FromOrderedBits(hi);
}

}  // namespace bd
