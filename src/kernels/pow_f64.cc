#include "kernels/pow_f64.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pow_f64.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/det_math.h"
#include "kernels/f64_vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace det_simd {
#include "kernels/det_math_generic-inl.h"  // per target, for F64
}  // namespace det_simd

// det_math's Log2Mantissa on lanes: log2 m for m in [sqrt(2)/2, sqrt(2)) as
// hi + lo (f - f^2/2 exactly, the series tail, times log2(e) in two doubles).
HWY_INLINE F64::V Log2MantissaLanes(F64::V m, F64::V* lo) {
  using Ops = F64;
  const F64::V f = Ops::Sub(m, Ops::Set(1.0));  // exact (Sterbenz)
  F64::V hfsq, tail;
  det_simd::Log1pReducedT<Ops>(f, &hfsq, &tail);
  F64::V sq, sq_err, d, d_err, ln_hi, ln_lo, hi;
  det_simd::TwoProdT<Ops>(f, f, &sq, &sq_err);
  det_simd::FastTwoSumT<Ops>(f, Ops::Mul(Ops::Set(-0.5), sq), &d, &d_err);
  det_simd::FastTwoSumT<Ops>(
      d, Ops::Add(Ops::Sub(d_err, Ops::Mul(Ops::Set(0.5), sq_err)), tail), &ln_hi, &ln_lo);
  det_simd::TwoProdT<Ops>(ln_hi, Ops::Set(det_math::kLog2e), &hi, lo);
  *lo = Ops::Add(*lo, Ops::Add(Ops::Mul(ln_hi, Ops::Set(det_math::kLog2eTail)),
                               Ops::Mul(ln_lo, Ops::Set(det_math::kLog2e))));
  return hi;
}

// PowF64's main path for a non-integer y: y log2 x = y k + y log2 m in two
// doubles, split into an integer n and a fraction r, 2^r scaled by 2^n.
// Vectors with a lane outside it (x not a positive normal, or 2^n not a
// normal number, where ScaleByPow2 is more than one exact product) run
// PowF64 itself, element by element.
void PowF64ManyImpl(const double* x, size_t n, double y, double* out) {
  constexpr size_t N = F64::kLanes;
  const double ay = std::fabs(y);
  const bool y_integer = ay >= 0x1p52 || ((ay + 0x1p52) - 0x1p52) == ay;
  size_t i = 0;
  if (!y_integer && ay < 0x1p64) {
    const F64::V vy = F64::Set(y);
    for (; i + N <= n; i += N) {
      bool normal = true;
      for (size_t j = 0; j < N; ++j) normal &= x[i + j] >= 0x1p-1022 && x[i + j] <= 0x1p1023;
      HWY_ALIGN double s_lanes[N];
      F64::V result = F64::Zero();
      if (normal) {
        F64::V k;
        const F64::V m = F64::SplitNormal(F64::Load(x + i), &k);
        F64::V l_lo, a_hi, a_lo, b_hi, b_lo, s, s_lo;
        const F64::V l_hi = Log2MantissaLanes(m, &l_lo);
        det_simd::TwoProdT<F64>(vy, k, &a_hi, &a_lo);
        det_simd::TwoProdT<F64>(vy, l_hi, &b_hi, &b_lo);
        b_lo = F64::Add(b_lo, F64::Mul(vy, l_lo));
        det_simd::TwoSumT<F64>(a_hi, b_hi, &s, &s_lo);  // exact, as PowF64's ordered FastTwoSum
        s_lo = F64::Add(s_lo, F64::Add(a_lo, b_lo));
        const F64::V shifter = F64::Set(6755399441055744.0);
        const F64::V nn = F64::Sub(F64::Add(s, shifter), shifter);
        const F64::V r = F64::Add(F64::Sub(s, nn), s_lo);  // s - n exact
        result = F64::Mul(det_simd::Exp2FractionT<F64>(r), F64::Pow2Of(nn));
        F64::Store(s, s_lanes);
      }
      bool in_range = normal;
      for (size_t j = 0; j < N && in_range; ++j) in_range = s_lanes[j] > -1020.0 && s_lanes[j] < 1020.0;
      if (in_range) {
        F64::Store(result, out + i);
      } else {
        for (size_t j = 0; j < N; ++j) out[i + j] = PowF64(x[i + j], y);
      }
    }
  }
  for (; i < n; ++i) out[i] = PowF64(x[i], y);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(PowF64ManyImpl);

void PowF64Many(const double* x, size_t n, double y, double* out) {
  HWY_DYNAMIC_DISPATCH(PowF64ManyImpl)(x, n, y, out);
}
}  // namespace bd
#endif  // HWY_ONCE
