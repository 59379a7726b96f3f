#include "kernels/histogram.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/histogram.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/float_order.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = min(floor(coord(v[i])), kMassBuckets - 1) for a bucket coordinate
// coord >= 0 (vector_coord on vectors, scalar_coord on the tail): the very
// float operations of the scalar rule (no contraction; -inf gives +inf,
// which the min clamps), so the same bucket on every target.
template <class VectorCoord, class ScalarCoord>
HWY_INLINE void BucketsBy(const float* HWY_RESTRICT v, size_t n, uint32_t* HWY_RESTRICT out,
                          VectorCoord vector_coord, ScalarCoord scalar_coord) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const auto vlast = hn::Set(d, static_cast<float>(kMassBuckets - 1));
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::Min(vector_coord(hn::LoadU(d, v + i)), vlast);
    hn::StoreU(hn::ConvertTo(di, x), di, reinterpret_cast<int32_t*>(out + i));
  }
  const float last = static_cast<float>(kMassBuckets - 1);
  for (; i < n; ++i) {
    const float x = scalar_coord(v[i]);
    out[i] = x < last ? static_cast<uint32_t>(x) : static_cast<uint32_t>(kMassBuckets - 1);
  }
}

// Coordinate (max - v) * inv_width.
void BucketIndicesImpl(const float* HWY_RESTRICT v, size_t n, float max, float inv_width,
                       uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  const auto vmax = hn::Set(d, max);
  const auto vinv = hn::Set(d, inv_width);
  BucketsBy(
      v, n, out, [&](auto x) HWY_ATTR { return hn::Mul(hn::Sub(vmax, x), vinv); },
      [&](float x) { return (max - x) * inv_width; });
}

// Coordinate |v - center| * inv_width.
void DistanceBucketIndicesImpl(const float* HWY_RESTRICT v, size_t n, float center,
                               float inv_width, uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  const auto vc = hn::Set(d, center);
  const auto vinv = hn::Set(d, inv_width);
  BucketsBy(
      v, n, out, [&](auto x) HWY_ATTR { return hn::Mul(hn::Abs(hn::Sub(x, vc)), vinv); },
      [&](float x) { return std::fabs(x - center) * inv_width; });
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
namespace {

inline float BucketCoordinate(float max, float inv_width, float v) { return (max - v) * inv_width; }

}  // namespace

HWY_EXPORT(BucketIndicesImpl);
HWY_EXPORT(DistanceBucketIndicesImpl);

// Zeroes the histogram, then adds e per bucket: buckets by SIMD a chunk at a
// time (index(v, len, out)), masses one by one in index order (double sums:
// the same bits on every target).
// count may be null (masses only: the scalar loop is then a third cheaper).
template <class Index>
void AccumulateHistogram(const float* v, const float* e, size_t n, Index index, double* mass,
                         uint32_t* count) {
  for (size_t j = 0; j < kMassBuckets; ++j) mass[j] = 0.0;
  if (count) {
    for (size_t j = 0; j < kMassBuckets; ++j) count[j] = 0;
  }
  constexpr size_t kChunk = 1024;
  uint32_t bucket[kChunk];
  for (size_t begin = 0; begin < n; begin += kChunk) {
    const size_t len = n - begin < kChunk ? n - begin : kChunk;
    index(v + begin, len, bucket);
    const float* eb = e + begin;
    if (count) {
      for (size_t i = 0; i < len; ++i) {
        mass[bucket[i]] += eb[i];
        ++count[bucket[i]];
      }
    } else {
      for (size_t i = 0; i < len; ++i) mass[bucket[i]] += eb[i];
    }
  }
}

void BucketIndices(const float* v, size_t n, float max, float inv_width, uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(BucketIndicesImpl)(v, n, max, inv_width, out);
}

void DistanceBucketIndices(const float* v, size_t n, float center, float inv_width,
                           uint32_t* out) {
  HWY_DYNAMIC_DISPATCH(DistanceBucketIndicesImpl)(v, n, center, inv_width, out);
}

void MassHistogram(const float* v, const float* e, size_t n, float max, float inv_width,
                   double* mass, uint32_t* count) {
  AccumulateHistogram(
      v, e, n, [=](const float* x, size_t len, uint32_t* out) { BucketIndices(x, len, max, inv_width, out); },
      mass, count);
}

void DistanceHistogram(const float* v, const float* e, size_t n, float center, float inv_width,
                       double* mass, uint32_t* count) {
  AccumulateHistogram(
      v, e, n,
      [=](const float* x, size_t len, uint32_t* out) {
        DistanceBucketIndices(x, len, center, inv_width, out);
      },
      mass, count);
}

void DistanceHistogramOf(const int32_t* ids, const float* vals, size_t m, const float* e,
                         float center, float inv_width, uint32_t limit, double* mass,
                         uint32_t* count) {
  for (uint32_t j = 0; j < limit; ++j) {
    mass[j] = 0.0;
    count[j] = 0;
  }
  constexpr size_t kChunk = 1024;
  uint32_t bucket[kChunk];
  for (size_t begin = 0; begin < m; begin += kChunk) {
    const size_t len = m - begin < kChunk ? m - begin : kChunk;
    DistanceBucketIndices(vals + begin, len, center, inv_width, bucket);
    if (ids) {
      const int32_t* id = ids + begin;
      for (size_t i = 0; i < len; ++i) {
        mass[bucket[i]] += e[id[i]];
        ++count[bucket[i]];
      }
    } else {
      const float* w = e + begin;
      for (size_t i = 0; i < len; ++i) {
        mass[bucket[i]] += w[i];
        ++count[bucket[i]];
      }
    }
  }
}

void DistanceBucketBand(float center, float inv_width, uint32_t limit, float* lo, float* hi) {
  const float bound = static_cast<float>(limit);
  // The kernel's coordinate, as its scalar tail computes it.
  auto inside = [&](float x) { return std::fabs(x - center) * inv_width < bound; };
  // Lowest v <= center inside (false ... true as v rises to the centre).
  uint32_t out = OrderedBits(-FLT_MAX), in = OrderedBits(center);
  if (inside(-FLT_MAX)) {
    *lo = -FLT_MAX;
  } else {
    while (in - out > 1) {
      const uint32_t mid = out + (in - out) / 2;
      (inside(FromOrderedBits(mid)) ? in : out) = mid;
    }
    *lo = FromOrderedBits(in);
  }
  // Highest v >= center inside (true ... false as v rises).
  in = OrderedBits(center);
  out = OrderedBits(FLT_MAX);
  if (inside(FLT_MAX)) {
    *hi = FLT_MAX;
  } else {
    while (out - in > 1) {
      const uint32_t mid = in + (out - in) / 2;
      (inside(FromOrderedBits(mid)) ? in : out) = mid;
    }
    *hi = FromOrderedBits(in);
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
#endif  // HWY_ONCE
