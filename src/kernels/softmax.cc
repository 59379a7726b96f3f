#include "kernels/softmax.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softmax.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements per float-lane partial sum before it is flushed to double.
constexpr size_t kFlushBlock = 1024;

template <bool kWrite>
double ExpSumImpl(const float* HWY_RESTRICT row, size_t n, float max,
                  float scale, float* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vmax = hn::Set(d, max);
  const auto vscale = hn::Set(d, scale);
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  double total = 0.0;
  size_t i = 0;
  while (i + N <= n) {
    const size_t block_end = (n - i > kFlushBlock) ? i + kFlushBlock : n;
    auto acc = hn::Zero(d);
    for (; i + N <= block_end; i += N) {
      const auto e = hn::Exp(d, hn::Mul(hn::Sub(hn::LoadU(d, row + i), vmax), vscale));
      if (kWrite) hn::StoreU(e, d, out + i);
      acc = hn::Add(acc, e);
    }
    hn::Store(acc, d, lanes);
    for (size_t l = 0; l < N; ++l) total += lanes[l];
  }
  for (; i < n; ++i) {
    // The tail goes through the same vector Exp (one lane) so every element
    // gets identical arithmetic wherever it sits in the row.
    const auto e = hn::Exp(d, hn::Set(d, (row[i] - max) * scale));
    const float v = hn::GetLane(e);
    if (kWrite) out[i] = v;
    total += v;
  }
  return total;
}

double ExpSumOnly(const float* HWY_RESTRICT row, size_t n, float max, float scale) {
  return ExpSumImpl<false>(row, n, max, scale, nullptr);
}
double ExpWriteImpl(const float* row, size_t n, float max, float scale, float* out) {
  return ExpSumImpl<true>(row, n, max, scale, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ExpSumOnly);
HWY_EXPORT(ExpWriteImpl);

double ExpSum(const float* row, size_t n, float max, float scale) {
  return HWY_DYNAMIC_DISPATCH(ExpSumOnly)(row, n, max, scale);
}
double ExpWrite(const float* row, size_t n, float max, float scale, float* out) {
  return HWY_DYNAMIC_DISPATCH(ExpWriteImpl)(row, n, max, scale, out);
}
}  // namespace bd
#endif  // HWY_ONCE
