#include "kernels/moments.h"

#include <cfloat>
#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/moments.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/band_terms-inl.h"
#include "kernels/exp-inl.h"
#include "kernels/virtual_lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Exponents are clamped here so e * x stays 0 (not 0 * -inf = NaN) for the
// removed tokens; ExpF32 is already exactly 0 below -87.
constexpr float kExpClamp = -110.0f;

ExpMomentSums ExpMomentsImpl(const float* v, size_t n, float max, float scale, float* out) {
  const hn::ScalableTag<float> d;
  const auto vmax = hn::Set(d, max);
  const auto vscale = hn::Set(d, scale);
  const auto vclamp = hn::Set(d, kExpClamp);
  double totals[2] = {0.0, 0.0};
  SumVirtualLanesGrouped<2>(
      d, v, nullptr, n, -HUGE_VALF,
      [&](auto& x, auto&, auto& t) BD_TERMS {
        constexpr size_t G = sizeof(x) / sizeof(x[0]);
        hn::Vec<decltype(d)> y[G], e[G];
        for (size_t g = 0; g < G; ++g) e[g] = y[g] = hn::Max(hn::Mul(hn::Sub(x[g], vmax), vscale), vclamp);
        ExpF32Each<G>(d, e);
        for (size_t g = 0; g < G; ++g) {
          t[g][0] = e[g];
          t[g][1] = hn::Mul(e[g], y[g]);
        }
      },
      totals, nullptr, out);
  return ExpMomentSums{totals[0], totals[1]};
}

ExpSquareSums ExpSquaresImpl(const float* v, size_t n, float max, float scale) {
  const hn::ScalableTag<float> d;
  const auto vmax = hn::Set(d, max);
  const auto vscale = hn::Set(d, scale);
  double totals[2] = {0.0, 0.0};
  SumVirtualLanesGrouped<2>(
      d, v, nullptr, n, -HUGE_VALF,
      [&](auto& x, auto&, auto& t) BD_TERMS {
        constexpr size_t G = sizeof(x) / sizeof(x[0]);
        hn::Vec<decltype(d)> e[G];
        for (size_t g = 0; g < G; ++g) e[g] = hn::Mul(hn::Sub(x[g], vmax), vscale);
        ExpF32Each<G>(d, e);
        for (size_t g = 0; g < G; ++g) {
          t[g][0] = e[g];
          t[g][1] = hn::Mul(e[g], e[g]);
        }
      },
      totals, nullptr, nullptr);
  return ExpSquareSums{totals[0], totals[1]};
}

BandTotals BandSumImpl(const float* v, const float* w, size_t n, float lo, float hi) {
  const hn::ScalableTag<float> d;
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  double total = 0.0;
  LaneCounter<decltype(d)> count;
  SumVirtualLanes<1>(
      d, v, w, n, NAN,
      [&](auto x, auto wx, auto* t) BD_TERMS { BandTerms(x, wx, vlo, vhi, t, count); }, &total,
      nullptr);
  return BandTotals{count.Total(), total};
}

double SumBandBlocksImpl(const float* v, const float* w, size_t n, float lo, float hi,
                         float* HWY_RESTRICT block_sums) {
  const hn::ScalableTag<float> d;
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  double total = 0.0;
  SumVirtualLanes<1>(
      d, v, w, n, NAN,
      [&](auto x, auto wx, auto* t) BD_TERMS {
        t[0] = hn::IfThenElseZero(BandMask(x, vlo, vhi), wx);
      },
      &total, block_sums);
  return total;
}

// Up to this many entries the moments are summed in float64, one by one
// (small candidate lists: top-n-sigma's threshold max - n sigma lands exactly
// on a logit for 2-3 candidates, and float squares would tip such ties).
constexpr size_t kScalarMoments = 256;

FiniteMomentSums FiniteMomentsImpl(const float* v, size_t n, float center) {
  if (n <= kScalarMoments) {
    FiniteMomentSums m{0, 0.0, 0.0};
    for (size_t i = 0; i < n; ++i) {
      if (!(v[i] >= -FLT_MAX)) continue;
      const float dx = v[i] - center;
      ++m.count;
      m.sum_d += dx;
      m.sum_d2 += static_cast<double>(dx) * dx;
    }
    return m;
  }
  const hn::ScalableTag<float> d;
  const auto vc = hn::Set(d, center);
  const auto vmin = hn::Set(d, -FLT_MAX);
  double totals[2] = {0.0, 0.0};
  LaneCounter<decltype(d)> finite_count;
  SumVirtualLanes<2>(
      d, v, nullptr, n, -HUGE_VALF,
      [&](auto x, auto, auto* t) BD_TERMS {
        const auto finite = hn::Ge(x, vmin);
        t[0] = hn::IfThenElseZero(finite, hn::Sub(x, vc));
        t[1] = hn::Mul(t[0], t[0]);
        finite_count.Add(finite);
      },
      totals, nullptr);
  return FiniteMomentSums{finite_count.Total(), totals[0], totals[1]};
}

// FiniteMoments' sum_d alone (the centring pass needs nothing else): the same
// term in the same lane, so the same bits, at half the arithmetic.
double FiniteDeviationSumImpl(const float* v, size_t n, float center) {
  if (n <= kScalarMoments) return FiniteMomentsImpl(v, n, center).sum_d;
  const hn::ScalableTag<float> d;
  const auto vc = hn::Set(d, center);
  const auto vmin = hn::Set(d, -FLT_MAX);
  double total = 0.0;
  SumVirtualLanes<1>(
      d, v, nullptr, n, -HUGE_VALF,
      [&](auto x, auto, auto* t) BD_TERMS {
        t[0] = hn::IfThenElseZero(hn::Ge(x, vmin), hn::Sub(x, vc));
      },
      &total, nullptr);
  return total;
}

// FiniteMoments' sum_d and sum_d2 without the count (the row scan has it).
FiniteMomentSums FiniteSpreadImpl(const float* v, size_t n, float center) {
  if (n <= kScalarMoments) return FiniteMomentsImpl(v, n, center);
  const hn::ScalableTag<float> d;
  const auto vc = hn::Set(d, center);
  const auto vmin = hn::Set(d, -FLT_MAX);
  double totals[2] = {0.0, 0.0};
  SumVirtualLanes<2>(
      d, v, nullptr, n, -HUGE_VALF,
      [&](auto x, auto, auto* t) BD_TERMS {
        t[0] = hn::IfThenElseZero(hn::Ge(x, vmin), hn::Sub(x, vc));
        t[1] = hn::Mul(t[0], t[0]);
      },
      totals, nullptr);
  return FiniteMomentSums{0, totals[0], totals[1]};
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ExpMomentsImpl);
HWY_EXPORT(ExpSquaresImpl);
HWY_EXPORT(BandSumImpl);
HWY_EXPORT(SumBandBlocksImpl);
HWY_EXPORT(FiniteMomentsImpl);
HWY_EXPORT(FiniteDeviationSumImpl);
HWY_EXPORT(FiniteSpreadImpl);

ExpMomentSums ExpMoments(const float* v, size_t n, float max, float scale, float* out) {
  return HWY_DYNAMIC_DISPATCH(ExpMomentsImpl)(v, n, max, scale, out);
}
ExpSquareSums ExpSquares(const float* v, size_t n, float max, float scale) {
  return HWY_DYNAMIC_DISPATCH(ExpSquaresImpl)(v, n, max, scale);
}
BandTotals BandSum(const float* v, const float* w, size_t n, float lo, float hi) {
  return HWY_DYNAMIC_DISPATCH(BandSumImpl)(v, w, n, lo, hi);
}
double SumBandBlocks(const float* v, const float* w, size_t n, float lo, float hi,
                     float* block_sums) {
  return HWY_DYNAMIC_DISPATCH(SumBandBlocksImpl)(v, w, n, lo, hi, block_sums);
}
FiniteMomentSums FiniteMoments(const float* v, size_t n, float center) {
  return HWY_DYNAMIC_DISPATCH(FiniteMomentsImpl)(v, n, center);
}
double FiniteDeviationSum(const float* v, size_t n, float center) {
  return HWY_DYNAMIC_DISPATCH(FiniteDeviationSumImpl)(v, n, center);
}
FiniteMomentSums FiniteSpread(const float* v, size_t n, float center) {
  return HWY_DYNAMIC_DISPATCH(FiniteSpreadImpl)(v, n, center);
}
}  // namespace bd
#endif  // HWY_ONCE
