// BandSum's terms, one vector at a time: the weight of the lanes inside the
// closed band [lo, hi] (NaN is never inside), 0 elsewhere, and their count.
// One definition for BandSum and SumBandBlocks (moments.cc) and
// BandSumGatherRing (threshold.cc), whose hole totals must be BandSum's bits.
//
// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_BAND_TERMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_BAND_TERMS_INL_H_
#undef BD_KERNELS_BAND_TERMS_INL_H_
#else
#define BD_KERNELS_BAND_TERMS_INL_H_
#endif

#include <hwy/highway.h>

#include "kernels/lane_counter-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

// The lanes inside the closed band [lo, hi] (NaN never is).
template <class V>
HWY_INLINE auto BandMask(V x, V lo, V hi) {
  namespace hn = hwy::HWY_NAMESPACE;
  return hn::And(hn::Ge(x, lo), hn::Le(x, hi));
}

// Writes t[0] (the weight of the lanes inside the band), counts them and
// returns the band's mask.
template <class V, class Counter>
HWY_INLINE auto BandTerms(V x, V w, V lo, V hi, V* t, Counter& count) {
  namespace hn = hwy::HWY_NAMESPACE;
  const auto in = BandMask(x, lo, hi);
  t[0] = hn::IfThenElseZero(in, w);
  count.Add(in);
  return in;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
