#include "kernels/floor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/floor.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

float PlainMaxImpl(const float* HWY_RESTRICT row, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto m = hn::Set(d, row[0]);
  // Four independent maxima (one chain is bound by the max latency; the row
  // scan it is the floor of runs four).
  auto m1 = m, m2 = m, m3 = m;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    m = hn::Max(m, hn::LoadU(d, row + i));
    m1 = hn::Max(m1, hn::LoadU(d, row + i + N));
    m2 = hn::Max(m2, hn::LoadU(d, row + i + 2 * N));
    m3 = hn::Max(m3, hn::LoadU(d, row + i + 3 * N));
  }
  m = hn::Max(hn::Max(m, m1), hn::Max(m2, m3));
  for (; i + N <= n; i += N) m = hn::Max(m, hn::LoadU(d, row + i));
  float r = hn::GetLane(hn::MaxOfLanes(d, m));
  for (; i < n; ++i) r = row[i] > r ? row[i] : r;
  return r;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(PlainMaxImpl);
float PlainMax(const float* row, size_t n) { return HWY_DYNAMIC_DISPATCH(PlainMaxImpl)(row, n); }
}  // namespace bd
#endif  // HWY_ONCE
