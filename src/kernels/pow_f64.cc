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

// PowIntF64 on lanes for 1 <= |n| <= 8 and every lane's |x| within
// [2^-248/|n|, 2^248/|n|]: the same double-double squarings in the same
// order, where the rescaling PowIntF64 applies outside [2^-250, 2^250] never
// triggers (so its exponents stay 0), and the same reciprocal for n < 0.
HWY_INLINE F64::V PowIntLanes(F64::V x, int64_t n) {
  using Ops = F64;
  const bool negative = n < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  auto mul = [](F64::V ah, F64::V al, F64::V bh, F64::V bl, F64::V* h, F64::V* l) {
    F64::V p, e;
    det_simd::TwoProdT<Ops>(ah, bh, &p, &e);
    e = Ops::Add(e, Ops::Add(Ops::Mul(ah, bl), Ops::Mul(al, bh)));
    det_simd::FastTwoSumT<Ops>(p, e, h, l);
  };
  F64::V base_hi = x, base_lo = Ops::Zero(), acc_hi = Ops::Set(1.0), acc_lo = Ops::Zero();
  for (;;) {
    if (u & 1) mul(acc_hi, acc_lo, base_hi, base_lo, &acc_hi, &acc_lo);
    u >>= 1;
    if (u == 0) break;
    mul(base_hi, base_lo, base_hi, base_lo, &base_hi, &base_lo);
  }
  if (negative) {
    const F64::V r = Ops::Div(Ops::Set(1.0), acc_hi);
    F64::V p, e;
    det_simd::TwoProdT<Ops>(r, acc_hi, &p, &e);
    const F64::V residual =
        Ops::Sub(Ops::Sub(Ops::Sub(Ops::Set(1.0), p), e), Ops::Mul(r, acc_lo));
    acc_hi = Ops::Add(r, Ops::Mul(r, residual));
  }
  return acc_hi;
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
  if (y_integer && ay >= 1.0 && ay <= 8.0) {
    const int64_t e = static_cast<int64_t>(y);
    const int64_t shift = 248 / (e < 0 ? -e : e);
    const double lo = std::ldexp(1.0, static_cast<int>(-shift));
    const double hi = std::ldexp(1.0, static_cast<int>(shift));
    for (; i + N <= n; i += N) {
      bool in_range = true;
      for (size_t j = 0; j < N; ++j) {
        const double a = std::fabs(x[i + j]);
        in_range &= a >= lo && a <= hi;
      }
      if (in_range) {
        F64::Store(PowIntLanes(F64::Load(x + i), e), out + i);
      } else {
        for (size_t j = 0; j < N; ++j) out[i + j] = PowF64(x[i + j], y);
      }
    }
  }
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
