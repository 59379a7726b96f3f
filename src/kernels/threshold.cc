#include "kernels/threshold.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/threshold.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

size_t CountAtLeastImpl(const float* HWY_RESTRICT row, size_t n, float t) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vt = hn::Set(d, t);
  size_t count = 0;
  size_t i = 0;
  for (; i + N <= n; i += N) count += hn::CountTrue(d, hn::Ge(hn::LoadU(d, row + i), vt));
  for (; i < n; ++i) count += row[i] >= t ? 1 : 0;
  return count;
}

size_t GatherAtLeastImpl(const float* HWY_RESTRICT row, size_t n, float t,
                         int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const auto vt = hn::Set(d, t);
  auto ids = hn::Iota(di, 0);
  const auto step = hn::Set(di, static_cast<int32_t>(N));
  size_t count = 0;
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, row + i);
    const auto keep = hn::Ge(v, vt);
    if (!hn::AllFalse(d, keep)) {
      hn::CompressStore(v, keep, d, vals_out + count);
      count += hn::CompressStore(ids, hn::RebindMask(di, keep), di, ids_out + count);
    }
    ids = hn::Add(ids, step);
  }
  for (; i < n; ++i) {
    if (row[i] >= t) {
      ids_out[count] = static_cast<int32_t>(i);
      vals_out[count] = row[i];
      ++count;
    }
  }
  return count;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(CountAtLeastImpl);
HWY_EXPORT(GatherAtLeastImpl);

size_t CountAtLeast(const float* row, size_t n, float t) {
  return HWY_DYNAMIC_DISPATCH(CountAtLeastImpl)(row, n, t);
}
size_t GatherAtLeast(const float* row, size_t n, float t, int32_t* ids_out,
                     float* vals_out) {
  return HWY_DYNAMIC_DISPATCH(GatherAtLeastImpl)(row, n, t, ids_out, vals_out);
}
}  // namespace bd
#endif  // HWY_ONCE
