#include "kernels/softmax.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softmax.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/exp-inl.h"
#include "kernels/lane_counter-inl.h"
#include "kernels/virtual_lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The one exp pass: sum of exp((x - max) * scale) in the virtual-lane order,
// optionally with the per-block sums and/or every exp written out (out may
// alias row: no restrict on either).
double ExpPass(const float* row, size_t n, float max, float scale,
               float* HWY_RESTRICT block_sums, float* out) {
  const hn::ScalableTag<float> d;
  const auto vmax = hn::Set(d, max);
  const auto vscale = hn::Set(d, scale);
  double total = 0.0;
  SumVirtualLanesGrouped<1>(
      d, row, nullptr, n, -HUGE_VALF,
      [&](auto& x, auto&, auto& t) BD_TERMS {
        constexpr size_t G = sizeof(x) / sizeof(x[0]);
        hn::Vec<decltype(d)> y[G];
        for (size_t g = 0; g < G; ++g) y[g] = hn::Mul(hn::Sub(x[g], vmax), vscale);
        ExpF32Each<G>(d, y);
        for (size_t g = 0; g < G; ++g) t[g][0] = y[g];
      },
      &total, block_sums, out);
  return total;
}

double ExpSumOnly(const float* row, size_t n, float max, float scale) {
  return ExpPass(row, n, max, scale, nullptr, nullptr);
}
double ExpWriteImpl(const float* row, size_t n, float max, float scale, float* out) {
  return ExpPass(row, n, max, scale, nullptr, out);
}
double ExpBlockSumsImpl(const float* row, size_t n, float max, float scale, float* block_sums) {
  return ExpPass(row, n, max, scale, block_sums, nullptr);
}

// (min(x, cut) - cut) * scale: each lane's exp argument relative to cut, at
// most 0 (a lane above cut taken at it, for the callers to mask).
template <class V>
HWY_INLINE V FromCut(V x, V vcut, V vscale) {
  return hn::Mul(hn::Sub(hn::Min(x, vcut), vcut), vscale);
}
template <class D, class V>
HWY_INLINE V ExpFromCut(D d, V x, V vcut, V vscale) {
  return ExpF32(d, FromCut(x, vcut, vscale));
}

// The sum over the entries below cut of exp((x - cut) * scale), and the
// count of those equal to it. Lanes at or above cut are masked (their exp
// taken at cut, then dropped); the pad, -inf, is below and maps to 0.
double ExpSumBelowImpl(const float* row, size_t n, float cut, float scale, double* equal) {
  const hn::ScalableTag<float> d;
  const auto vcut = hn::Set(d, cut);
  const auto vscale = hn::Set(d, scale);
  double total = 0.0;
  LaneCounter<decltype(d)> at_cut;
  SumVirtualLanes<1>(
      d, row, nullptr, n, -HUGE_VALF,
      [&](auto x, auto, auto* t) BD_TERMS {
        t[0] = hn::IfThenElseZero(hn::Lt(x, vcut), ExpFromCut(d, x, vcut, vscale));
        at_cut.Add(hn::Eq(x, vcut));
      },
      &total, nullptr);
  *equal = static_cast<double>(at_cut.Total());
  return total;
}

// The sum over the entries at or below cut of exp((x - cut) * scale): each
// term <= 1, an entry equal to cut exactly 1 (ExpF32(0) = 1), entries above
// cut masked; the pad, -inf, maps to 0. One sum, as the exp pass.
double ExpSumAtMostImpl(const float* row, size_t n, float cut, float scale) {
  const hn::ScalableTag<float> d;
  const auto vcut = hn::Set(d, cut);
  const auto vscale = hn::Set(d, scale);
  double total = 0.0;
  SumVirtualLanesGrouped<1>(
      d, row, nullptr, n, -HUGE_VALF,
      [&](auto& x, auto&, auto& t) BD_TERMS {  // ExpFromCut of the group, interleaved
        constexpr size_t G = sizeof(x) / sizeof(x[0]);
        hn::Vec<decltype(d)> y[G];
        for (size_t g = 0; g < G; ++g) y[g] = FromCut(x[g], vcut, vscale);
        ExpF32Each<G>(d, y);
        for (size_t g = 0; g < G; ++g) t[g][0] = hn::IfThenElseZero(hn::Le(x[g], vcut), y[g]);
      },
      &total, nullptr);
  return total;
}

// The exp pass's sums over values that are already exps (pad 0 = exp(-inf)).
double SumBlocksImpl(const float* e, size_t n, float* HWY_RESTRICT block_sums) {
  const hn::ScalableTag<float> d;
  double total = 0.0;
  SumVirtualLanes<1>(
      d, e, nullptr, n, 0.0f, [&](auto x, auto, auto* t) BD_TERMS { t[0] = x; }, &total,
      block_sums);
  return total;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ExpSumOnly);
HWY_EXPORT(ExpWriteImpl);
HWY_EXPORT(ExpBlockSumsImpl);
HWY_EXPORT(SumBlocksImpl);
HWY_EXPORT(ExpSumBelowImpl);
HWY_EXPORT(ExpSumAtMostImpl);

double ExpSum(const float* row, size_t n, float max, float scale) {
  return HWY_DYNAMIC_DISPATCH(ExpSumOnly)(row, n, max, scale);
}
double ExpWrite(const float* row, size_t n, float max, float scale, float* out) {
  return HWY_DYNAMIC_DISPATCH(ExpWriteImpl)(row, n, max, scale, out);
}
double ExpBlockSums(const float* row, size_t n, float max, float scale, float* block_sums) {
  return HWY_DYNAMIC_DISPATCH(ExpBlockSumsImpl)(row, n, max, scale, block_sums);
}
double SumBlocks(const float* e, size_t n, float* block_sums) {
  return HWY_DYNAMIC_DISPATCH(SumBlocksImpl)(e, n, block_sums);
}
double ExpSumBelow(const float* row, size_t n, float cut, float scale, double* equal) {
  return HWY_DYNAMIC_DISPATCH(ExpSumBelowImpl)(row, n, cut, scale, equal);
}
double ExpSumAtMost(const float* row, size_t n, float cut, float scale) {
  return HWY_DYNAMIC_DISPATCH(ExpSumAtMostImpl)(row, n, cut, scale);
}
}  // namespace bd
#endif  // HWY_ONCE
