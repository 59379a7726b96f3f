// log, log2, exp2 and pow for one double, from IEEE-754 double Add, Sub, Mul,
// Div and bit operations only: the same bits from glibc or musl, x86 or wasm,
// with or without FMA hardware. libm's results may differ in the last bit
// between those (glibc picks FMA variants at run time through ifunc), and a
// threshold one ulp apart can keep or drop a token. Needs -ffp-contract=off
// (the core's flags), no libm call, no platform table.
//
// Contracts (max error measured against long double libm over random and
// edge inputs in every binade; tests/native/test_det_math.cc prints it):
//   LogF64(x)       ln x; x < 0 or NaN -> NaN, +-0 -> -inf, inf -> inf. 0.83 ulp.
//   Log2F64(x)      log2 x, same special values; exact for powers of two. 0.64 ulp.
//   Exp2F64(x)      2^x; exact for integers, x >= 1024 -> inf, x < -1075 -> 0;
//                   denormal results rounded twice (0.75 of a denormal step).
//                   1.05 ulp.
//   PowIntF64(x,n)  x^n for an integer n by squaring in double-double (~106
//                   bits): correctly rounded whenever x^n fits in 106 bits
//                   (e.g. a float to a power <= 4, halfway cases included),
//                   otherwise off only when x^n is within ~n 2^-100 of a
//                   halfway point (0.5 ulp measured). C pow's special values.
//   PowF64(x,y)     x^y with C pow's special values; an integer y goes to
//                   PowIntF64, otherwise 2^(y log2|x|) with y log2|x| carried
//                   in two doubles: 1.1 ulp for |y| <= 8 (dynamic temperature's
//                   exponents), about 1.5 + |y|/16 ulp beyond.
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>

// Dekker's exact product and the two-double sums need every operation
// rounded to double (no x87 excess precision) and unfused (-ffp-contract=off).
static_assert(FLT_EVAL_METHOD == 0, "det_math.h needs double operations rounded to double");

namespace bd {
namespace det_math {

inline uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}
inline double FromBits(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}
inline double Inf() { return FromBits(0x7ff0000000000000ull); }
inline double NaN() { return FromBits(0x7ff8000000000000ull); }
inline double Abs(double x) { return FromBits(Bits(x) & 0x7fffffffffffffffull); }
// 2^e for a normal exponent, -1022 <= e <= 1023.
inline double Pow2(int e) { return FromBits(static_cast<uint64_t>(e + 1023) << 52); }

// x = 2^k m with m in [1, 2) (sign kept), for finite x != 0 (denormals too).
inline double Frexp1(double x, int* k) {
  int e = 0;
  if (Abs(x) < 0x1p-1022) {  // denormal: make it normal first, exactly
    x *= 0x1p54;
    e = -54;
  }
  const uint64_t b = Bits(x);
  *k = e + static_cast<int>((b >> 52) & 0x7ff) - 1023;
  return FromBits((b & 0x800fffffffffffffull) | (1023ull << 52));
}

// x * 2^e for any e, with one rounding (only when the result is denormal).
inline double ScaleByPow2(double x, int64_t e) {
  if (x == 0.0 || !(Abs(x) < Inf())) return x;
  int k;
  const double m = Frexp1(x, &k);
  e += k;
  if (e > 1023) return m * Inf();
  if (e >= -1022) return m * Pow2(static_cast<int>(e));  // exact
  if (e < -1080) return m * 0.0;                            // below half a denormal
  return (m * Pow2(static_cast<int>(e) + 64)) * Pow2(-64);  // exact, then one rounding
}

// The arithmetic of the formulas below that also run on SIMD vectors
// (kernels/f64_vec-inl.h's F64 has the same static members): written once
// over an Ops type, so one element gives the same bits either way.
struct DoubleOps {
  using V = double;
  static V Set(double x) { return x; }
  static V Add(V a, V b) { return a + b; }
  static V Sub(V a, V b) { return a - b; }
  static V Mul(V a, V b) { return a * b; }
  static V Div(V a, V b) { return a / b; }
};

// Exact sum for |a| >= |b| (or a == 0): a + b = s + e.
inline void FastTwoSum(double a, double b, double* s, double* e) {
  *s = a + b;
  *e = b - (*s - a);
}

// Exact sum a + b = s + e for any order of magnitudes (Knuth).
inline void TwoSum(double a, double b, double* s, double* e) {
  *s = a + b;
  const double bb = *s - a;
  *e = (a - (*s - bb)) + (b - bb);
}

// x = 2^k m, m in [sqrt(2)/2, sqrt(2)), for finite x > 0 (denormals too).
inline double SplitExponent(double x, int* k) {
  double m = Frexp1(x, k);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    *k += 1;
  }
  return m;
}

// ln2 split so that k * kLn2Hi is exact for |k| < 2^21.
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
// ln2 and log2(e) to ~107 bits, as a double and the rest.
constexpr double kLn2 = 0x1.62e42fefa39efp-1;
constexpr double kLn2Tail = 0x1.abc9e3b39803fp-56;
constexpr double kLog2e = 0x1.71547652b82fep0;
constexpr double kLog2eTail = 0x1.777d0ffda0d24p-56;

// TwoProdT, ExpTaylorTailT, Exp2FractionT, ExpSplitT: the formulas that also
// run on SIMD vectors, written once over an Ops type (below DoubleOps; the
// kernels include the same file per Highway target with F64).
#include "kernels/det_math_generic-inl.h"

// Exact product a * b = p + e (TwoProdT above).
inline void TwoProd(double a, double b, double* p, double* e) {
  TwoProdT<DoubleOps>(a, b, p, e);
}

// ln(1 + f) = f - (hfsq - tail) (Log1pReducedT above).
struct Log1pParts {
  double f, hfsq, tail;
};
inline Log1pParts Log1pReduced(double f) {
  Log1pParts l{f, 0.0, 0.0};
  Log1pReducedT<DoubleOps>(f, &l.hfsq, &l.tail);
  return l;
}

// log2 m for m in [sqrt(2)/2, sqrt(2)) as two doubles hi + lo: f - f^2/2
// exactly (f^2 by TwoProd), the small tail in plain double (its rounding is
// ~2^-57 of log m), then times log2(e) carried to ~107 bits.
inline void Log2Mantissa(double m, double* hi, double* lo) {
  const double f = m - 1.0;  // exact (Sterbenz)
  const Log1pParts l = Log1pReduced(f);
  double sq, sq_err, d, d_err, ln_hi, ln_lo;
  TwoProd(f, f, &sq, &sq_err);
  FastTwoSum(f, -0.5 * sq, &d, &d_err);  // |f| >= f^2/2 here
  FastTwoSum(d, (d_err - 0.5 * sq_err) + l.tail, &ln_hi, &ln_lo);
  TwoProd(ln_hi, kLog2e, hi, lo);
  *lo += ln_hi * kLog2eTail + ln_lo * kLog2e;
}

// One double through the generic formulas (det_math_generic-inl.h).
inline double ExpTaylorTail(double t) { return ExpTaylorTailT<DoubleOps>(t); }

inline double Exp2Fraction(double r) { return Exp2FractionT<DoubleOps>(r); }

// e^t - 1 for |t| <= ~0.35 as hi + lo: t + t^2 (1/2! + t/3! + ... + t^12/14!)
// (Taylor; truncation below 2^-62 relative), the sum kept in two doubles so
// that the rounding of hi does not reach a result that cancels against -1.
inline void Expm1Small(double t, double* hi, double* lo) {
  const double q = ExpTaylorTail(t);
  FastTwoSum(t, (t * t) * q, hi, lo);  // |t| >= t^2 q for |t| <= 0.35
}

// Handles x <= 0, NaN and inf for the logs; returns true with *out set then.
inline bool LogSpecial(double x, double* out) {
  if (x > 0.0 && x < Inf()) return false;
  if (x == 0.0) *out = -Inf();
  else if (x == Inf()) *out = x;
  else *out = NaN();  // x < 0, -inf or NaN
  return true;
}

}  // namespace det_math

inline double LogF64(double x) {
  using namespace det_math;
  double special;
  if (LogSpecial(x, &special)) return special;
  int k;
  const double m = SplitExponent(x, &k);
  return LogFromSplitT<DoubleOps>(m, static_cast<double>(k));
}

inline double Log2F64(double x) {
  using namespace det_math;
  double special;
  if (LogSpecial(x, &special)) return special;
  int k;
  const double m = SplitExponent(x, &k);
  double hi, lo;  // log2 m in [-0.5, 0.5]
  Log2Mantissa(m, &hi, &lo);
  if (k == 0) return hi + lo;
  double s, e;  // k exact, so powers of two give exactly k
  FastTwoSum(static_cast<double>(k), hi, &s, &e);
  return s + (e + lo);
}

inline double Exp2F64(double x) {
  using namespace det_math;
  if (x != x) return x;
  if (x >= 1024.0) return Inf();
  if (x < -1075.0) return 0.0;
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52: rounds to an integer
  const double n = (x + shifter) - shifter;
  const double r = x - n;  // exact, |r| <= 1/2
  return ScaleByPow2(Exp2Fraction(r), static_cast<int64_t>(n));
}

inline double PowIntF64(double x, int64_t n) {
  using namespace det_math;
  if (n == 0) return 1.0;
  const bool odd = (n & 1) != 0;
  const bool negative = n < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  if (x != x) return x;
  if (x == 0.0 || Abs(x) == Inf()) {
    const bool big = (x != 0.0) != negative;  // inf^+n, 0^-n -> inf
    const double mag = big ? Inf() : 0.0;
    return (odd && Bits(x) >> 63) ? -mag : mag;
  }
  // Repeated squaring on double-double values (hi + lo) kept in
  // [2^-250, 2^250] by exact power-of-two rescaling, exponents tracked apart:
  // acc * base^u stays x^|n| throughout.
  double base_hi = x, base_lo = 0.0, acc_hi = 1.0, acc_lo = 0.0;
  int64_t base_e = 0, acc_e = 0;
  auto normalize = [](double* hi, double* lo, int64_t* e) {
    while (Abs(*hi) > 0x1p250) *hi *= 0x1p-500, *lo *= 0x1p-500, *e += 500;
    while (Abs(*hi) < 0x1p-250) *hi *= 0x1p500, *lo *= 0x1p500, *e -= 500;
    // Magnitudes only move one way (|x| < 1 or > 1 throughout), so a
    // saturated exponent stays beyond the double range.
    if (*e > (1 << 20)) *e = 1 << 20;
    if (*e < -(1 << 20)) *e = -(1 << 20);
  };
  auto mul = [](double ah, double al, double bh, double bl, double* h, double* l) {
    double p, e;
    TwoProd(ah, bh, &p, &e);
    e += ah * bl + al * bh;
    FastTwoSum(p, e, h, l);
  };
  normalize(&base_hi, &base_lo, &base_e);
  for (;;) {
    if (u & 1) {
      mul(acc_hi, acc_lo, base_hi, base_lo, &acc_hi, &acc_lo);
      acc_e += base_e;
      normalize(&acc_hi, &acc_lo, &acc_e);
    }
    u >>= 1;
    if (u == 0) break;
    mul(base_hi, base_lo, base_hi, base_lo, &base_hi, &base_lo);
    base_e *= 2;
    normalize(&base_hi, &base_lo, &base_e);
  }
  if (negative) {
    // 1 / (hi + lo): r = 1/hi, then one Newton correction with the exact
    // residual 1 - r hi - r lo.
    const double r = 1.0 / acc_hi;
    double p, e;
    TwoProd(r, acc_hi, &p, &e);
    const double residual = ((1.0 - p) - e) - r * acc_lo;
    acc_hi = r + r * residual;
    acc_e = -acc_e;
  }
  return ScaleByPow2(acc_hi, acc_e);
}

inline double PowF64(double x, double y) {
  using namespace det_math;
  if (y == 0.0 || x == 1.0) return 1.0;  // C pow: even for NaN
  if (x != x || y != y) return NaN();
  const double ay = Abs(y);
  const bool y_integer = ay >= 0x1p52 || ((ay + 0x1p52) - 0x1p52) == ay;
  if (y_integer && ay < 0x1p62) return PowIntF64(x, static_cast<int64_t>(y));
  const double ax = Abs(x);
  if (ay >= 0x1p64) {  // |y log2 x| >= 2^64 2^-54 for every x != +-1
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0.0) ? Inf() : 0.0;
  }
  if (x == 0.0 || ax == Inf()) {  // +-0, +-inf: y is not an odd integer here
    return (x == 0.0) == (y > 0.0) ? 0.0 : Inf();
  }
  if (x < 0.0) return y_integer ? PowF64(-x, y) : NaN();  // here y is even
  // y log2 x = y k + y log2 m, each product exact as two doubles; the sum
  // splits into an integer n and a fraction r.
  int k;
  const double m = SplitExponent(x, &k);
  double l_hi, l_lo, a_hi, a_lo, b_hi, b_lo;
  Log2Mantissa(m, &l_hi, &l_lo);
  TwoProd(y, static_cast<double>(k), &a_hi, &a_lo);
  TwoProd(y, l_hi, &b_hi, &b_lo);
  b_lo += y * l_lo;
  double s, s_lo;
  if (Abs(a_hi) >= Abs(b_hi)) FastTwoSum(a_hi, b_hi, &s, &s_lo);
  else FastTwoSum(b_hi, a_hi, &s, &s_lo);
  s_lo += a_lo + b_lo;
  if (s >= 1025.0) return Inf();
  if (s < -1100.0) return 0.0;
  const double shifter = 6755399441055744.0;
  const double n = (s + shifter) - shifter;
  const double r = (s - n) + s_lo;  // s - n exact
  return ScaleByPow2(Exp2Fraction(r), static_cast<int64_t>(n));
}

// e^x - 1 as C expm1: x itself for |x| < 2^-54 (signed zeros kept), -1 below
// -38 (e^x under half an ulp of 1), inf above ln(DBL_MAX).
// x = n ln2 + t + c (n ln2 split as in LogF64, t + c exact to ~2^-76), then
// e^x - 1 = (2^n - 1) + 2^n (E + c (1 + E)), E = e^t - 1 in two doubles;
// 2^n - 1 is exact for |n| <= 53 and the big sum is exact (TwoSum) before
// the single final rounding.
inline double Expm1F64(double x) {
  using namespace det_math;
  if (x != x) return x;
  if (Abs(x) < 0x1p-54) return x;
  if (x > 709.8) return Inf();  // e^709.8 > DBL_MAX
  if (x < -38.0) return -1.0;   // e^-38 < 2^-54: -1 + e^x rounds to -1
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52
  const double n = (x * kLog2e + shifter) - shifter;
  const int ni = static_cast<int>(n);
  const double r_hi = x - n * kLn2Hi;  // exact: n kLn2Hi exact, Sterbenz for n != 0
  double t, c;
  TwoSum(r_hi, -(n * kLn2Lo), &t, &c);
  double e_hi, e_lo;
  Expm1Small(t, &e_hi, &e_lo);
  // e^(t + c) - 1 = E + c (1 + E), to ~2^-60 relative.
  const double small = e_lo + (c + e_hi * c);
  if (ni < -53) {  // e^x < 2^-53 next to -1: its rounding hardly shows
    return ScaleByPow2(1.0 + (e_hi + small), ni) - 1.0;
  }
  if (ni > 53) {
    // 2^n - 1 is not exact here: 2^n (1 + E) as two doubles (exact scaling),
    // the -1 joins the small part, one final rounding.
    double one_hi, one_lo;
    FastTwoSum(1.0, e_hi, &one_hi, &one_lo);  // |E| < 1/2
    return ScaleByPow2(one_hi, ni) + (ScaleByPow2(one_lo + small, ni) - 1.0);
  }
  const double p = Pow2(ni);
  double s, s_err;
  TwoSum(p - 1.0, p * e_hi, &s, &s_err);  // both exact
  return s + (s_err + p * small);
}

// ln(1 + x) as C log1p: x itself for |x| < 2^-54, -1 -> -inf, x < -1 -> NaN.
// For 1 + x in [sqrt(2)/2, sqrt(2)) it is the reduced series on x itself (no
// rounding of 1 + x); otherwise 1 + x = u + cu exactly (TwoSum), u = 2^k m,
// and ln(1 + x) = k ln2 + ln m + cu / u.
inline double Log1pF64(double x) {
  using namespace det_math;
  if (x != x) return x;
  if (Abs(x) < 0x1p-54) return x;
  if (x > -0.29289321881345254 && x < 0.41421356237309503) {
    const Log1pParts l = Log1pReduced(x);
    return l.f - (l.hfsq - l.tail);
  }
  if (x == -1.0) return -Inf();
  if (x < -1.0) return NaN();
  if (x == Inf()) return x;
  double u, cu;
  TwoSum(1.0, x, &u, &cu);
  int k;
  const double m = SplitExponent(u, &k);
  const Log1pParts l = Log1pReduced(m - 1.0);  // m - 1 exact (Sterbenz)
  const double dk = k;
  return dk * kLn2Hi - ((l.hfsq - ((l.tail + cu / u) + dk * kLn2Lo)) - l.f);
}

// e^x over the whole double range (denormal results included, unlike ExpF64
// in exp_f64.h, which flushes below -708 and saturates above 709):
// 2^(x log2 e) with x log2 e carried in two doubles, as PowF64 does.
inline double ExpFullF64(double x) {
  using namespace det_math;
  if (x != x) return x;
  if (x > 709.8) return Inf();
  if (x < -746.0) return 0.0;  // e^-746 < half the smallest denormal
  double n;
  const double v = ExpSplitT<DoubleOps>(x, &n);
  return ScaleByPow2(v, static_cast<int64_t>(n));
}

}  // namespace bd
