#include "kernels/scaled_exp.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/scaled_exp.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/f64_vec-inl.h"

#ifndef BD_KERNELS_SCALED_EXP_ONCE_
#define BD_KERNELS_SCALED_EXP_ONCE_
namespace bd {
// One element of ScaledExpF64 (l as a double): ExpF64 inside [-700, 700],
// where the lanes compute the same bits, ExpFullF64 beyond (denormal p at a
// low temperature, where ExpF64 would flush them to 0).
inline double ScaledExpOne(double l, double m, double t, double z) {
  const double x = (l - m) / t;
  return (x >= -700.0 && x <= 700.0 ? ExpF64(x) : ExpFullF64(x)) / z;
}
}  // namespace bd
#endif

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace det_simd {
#include "kernels/det_math_generic-inl.h"  // per target, for F64
}  // namespace det_simd

// ExpF64's formula (det_math's ExpCodyWaiteT) on float64 lanes for vectors
// whose arguments all lie in [-700, 700]; anything else (a low temperature,
// huge logit spreads) element by element through ScaledExpOne, which gives
// the same bits in that range and ExpFullF64's beyond it.
void ScaledExpF64Impl(const float* logits, size_t n, float max, double t, double z,
                      double* out) {
  constexpr size_t N = F64::kLanes;
  const double m = static_cast<double>(max);
  // Conservative bounds on the logit for |(l - m) / t| <= 700.
  const double lo = m - 699.0 * t, hi = m + 699.0 * t;
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(logits[i]);
  const F64::V lo_v = F64::Set(lo), hi_v = F64::Set(hi), one = F64::Set(1.0);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    // Lanes strictly inside (lo, hi) (NaN is not): a lane on a bound goes
    // element by element too, with the same bits.
    const F64::V l = F64::Load(out + i);
    const F64::V inside = F64::IfLess(l, hi_v, F64::IfLess(lo_v, l, one, F64::Zero()), F64::Zero());
    if (F64::AnyNonZero(F64::Sub(one, inside))) {
      for (size_t j = 0; j < N; ++j) out[i + j] = ScaledExpOne(out[i + j], m, t, z);
      continue;
    }
    // x / 1 is x: at the default temperature the division is skipped (the same bits).
    const F64::V shifted = F64::Sub(F64::Load(out + i), F64::Set(m));
    const F64::V x = t == 1.0 ? shifted : F64::Div(shifted, F64::Set(t));
    F64::V e;
    const F64::V v = det_simd::ExpCodyWaiteT<F64>(x, &e);
    F64::Store(F64::Div(F64::Mul(v, F64::Pow2Of(e)), F64::Set(z)), out + i);
  }
  for (; i < n; ++i) out[i] = ScaledExpOne(out[i], m, t, z);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ScaledExpF64Impl);

void ScaledExpF64(const float* logits, size_t n, float max, double t, double z, double* out) {
  HWY_DYNAMIC_DISPATCH(ScaledExpF64Impl)(logits, n, max, t, z, out);
}
}  // namespace bd
#endif  // HWY_ONCE
