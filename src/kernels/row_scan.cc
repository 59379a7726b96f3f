#include "kernels/row_scan.h"

#include <cmath>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/row_scan.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

RowScan ScanRowImpl(const float* HWY_RESTRICT row, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const float kNegInf = -std::numeric_limits<float>::infinity();
  // Start at -inf (not Highway's -FLT_MAX) so an all -inf row reports -inf.
  auto vmax = hn::Set(d, kNegInf);
  auto nan_mask = hn::FirstN(d, 0);  // all-false (no MaskFalse in Highway 1.0.3)
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, row + i);
    const auto is_num = hn::Eq(v, v);
    nan_mask = hn::Or(nan_mask, hn::Not(is_num));
    vmax = hn::IfThenElse(is_num, hn::Max(vmax, v), vmax);
  }
  float m = kNegInf;
  bool has_nan = !hn::AllFalse(d, nan_mask);
  // Reduce by storing lanes: portable across targets and exact.
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(vmax, d, lanes);
  for (size_t l = 0; l < N; ++l) m = lanes[l] > m ? lanes[l] : m;
  for (; i < n; ++i) {
    const float v = row[i];
    if (v != v) {
      has_nan = true;
    } else if (v > m) {
      m = v;
    }
  }
  return RowScan{m, has_nan};
}

size_t FindFirstEqualImpl(const float* HWY_RESTRICT row, size_t n, float max) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vmax = hn::Set(d, max);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const intptr_t pos = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, row + i), vmax));
    if (pos >= 0) return i + static_cast<size_t>(pos);
  }
  for (; i < n; ++i) {
    if (row[i] == max) return i;
  }
  return n;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ScanRowImpl);
HWY_EXPORT(FindFirstEqualImpl);

RowScan ScanRow(const float* row, size_t n) {
  return HWY_DYNAMIC_DISPATCH(ScanRowImpl)(row, n);
}
size_t FindFirstEqual(const float* row, size_t n, float max) {
  return HWY_DYNAMIC_DISPATCH(FindFirstEqualImpl)(row, n, max);
}
}  // namespace bd
#endif  // HWY_ONCE
