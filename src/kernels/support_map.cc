#include "kernels/support_map.h"

#include <algorithm>
#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/support_map.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/det_math.h"
#include "kernels/f64_vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace det_simd {
#include "kernels/det_math_generic-inl.h"  // per target, for F64 and F64Scalar
}  // namespace det_simd

// y^n by multiplications from 1 (the same bits as PowerDifferenceRatio's
// y^{m-1} for n = m - 1).
template <int kN, class Ops, class V>
HWY_INLINE V PowInt(Ops, V y) {
  V power = Ops::Set(1.0);
  for (int j = 0; j < kN; ++j) power = Ops::Mul(power, y);
  return power;
}

// H = sum_{j<m} y^j a^{m-1-j} = (y^m - a^m) / (y - a), and y^{m-1}.
template <int kM, class Ops, class V>
HWY_INLINE V PowerDifferenceRatio(Ops, V y, V a, V* y_pow) {
  V h = Ops::Set(1.0);
  V yp = Ops::Set(1.0);
  for (int j = 1; j < kM; ++j) {
    yp = Ops::Mul(yp, y);
    h = Ops::Add(yp, Ops::Mul(a, h));
  }
  *y_pow = yp;
  return h;
}

// sum_i c_i y^i a^{m-1-i} for i < m, by Horner in y (c: the coefficients).
template <int kM, class Ops, class V>
HWY_INLINE V WeightedPowers(Ops, V y, V a, const double* c) {
  V a_pow[kM];
  a_pow[0] = Ops::Set(1.0);
  for (int i = 1; i < kM; ++i) a_pow[i] = Ops::Mul(a_pow[i - 1], a);
  V sum = Ops::Set(c[kM - 1]);
  for (int i = kM - 2; i >= 0; --i) {
    sum = Ops::Add(Ops::Mul(sum, y), Ops::Mul(Ops::Set(c[i]), a_pow[kM - 1 - i]));
  }
  return sum;
}

// The per-element formulas. y = a + s throughout (primal).
//   Inverse m (b = -1/m, s < 0, a = p^{-1/m}): q = y^{-m};
//     q - p = (a^m - y^m) p / y^m = -s H p q;  dq/dnu = y^{-(m+1)} = q / y;
//     d(q, p) = (m / (m-1)) s^2 (p a) W / y^m, W = sum_{i<m-1} (m-1-i) y^i a^{m-2-i}.
//   Power m (b = 1/m, s > 0, a = p^{1/m}): q = y^m;
//     q - p = s H;  dq/dnu = y^{m-1};  d(q, p) = (m / (m+1)) s^2 sum_{i<m} (i+1) y^i a^{m-1-i}.
//   Root (b = 2, s > 0, a = p^2): q = sqrt(y); q - p = s / (q + p); dq/dnu = 1/q;
//     d(q, p) = (q - p)^2 (q + 2p) / 6.
//   Dual cubic (alpha = 3, s = nu): q (q - p) = nu: q - p = 2 nu / (p + sqrt(p^2 + 4 nu));
//     dq/dnu = 1 / (2q - p); d(p, q) = (q - p)^2 (p + 2q) / 6.
//   Dual sqrt (alpha = 3/2, s = nu, a = sqrt(p)): w = sqrt(q) solves
//     w^2 - nu w - p = 0: D = sqrt(nu^2 + 4p), w = (nu + D)/2, q - p = nu w,
//     dq/dnu = 2 w^2 / D; d(p, q) = (q - p)^2 (a + w/2) / (3/4 (w + a)^2).
// (Each d is the alpha-family divergence p^alpha g(log(q/p)) with the
// difference of powers factored out, checked against the float64 oracle.)
template <int kM>
struct InverseForm {
  // q = r^m with r = 1/y (not 1/y^m: y^m overflows for a tiny p while q is
  // still a normal number).
  template <class Ops, class V>
  static HWY_INLINE void Sums(Ops ops, V p, V a, V s, V* incr, V* slope) {
    const V y = Ops::Add(a, s);
    V y_pow;
    const V h = PowerDifferenceRatio<kM>(ops, y, a, &y_pow);
    const V r = Ops::Div(Ops::Set(1.0), y);
    const V q = PowInt<kM>(ops, r);
    const V neg_s = Ops::Sub(Ops::Zero(), s);
    *incr = Ops::WherePositive(p, Ops::Mul(neg_s, Ops::Mul(Ops::Mul(p, h), q)));
    *slope = Ops::WherePositive(p, Ops::Mul(q, r));
  }
  template <class Ops, class V>
  static HWY_INLINE void Apply(Ops ops, V p, V a, V s, V* q, V* cost) {
    const V y = Ops::Add(a, s);
    const V q_raw = PowInt<kM>(ops, Ops::Div(Ops::Set(1.0), y));
    double c[kM - 1];  // W's coefficients m-1-i
    for (int i = 0; i < kM - 1; ++i) c[i] = kM - 1 - i;
    const V w = WeightedPowers<kM - 1>(ops, y, a, c);
    constexpr double kScale = static_cast<double>(kM) / static_cast<double>(kM - 1);
    const V s2 = Ops::Mul(s, s);
    const V d = Ops::Mul(Ops::Mul(Ops::Set(kScale), s2),
                         Ops::Mul(Ops::Mul(Ops::Mul(p, a), w), q_raw));
    *q = Ops::WherePositive(p, q_raw);
    *cost = Ops::WherePositive(p, d);
  }
};

template <int kM>
struct PowerForm {
  template <class Ops, class V>
  static HWY_INLINE void Sums(Ops ops, V, V a, V s, V* incr, V* slope) {
    const V y = Ops::Add(a, s);
    V y_pow;
    const V h = PowerDifferenceRatio<kM>(ops, y, a, &y_pow);
    *incr = Ops::Mul(s, h);
    *slope = y_pow;
  }
  template <class Ops, class V>
  static HWY_INLINE void Apply(Ops ops, V, V a, V s, V* q, V* cost) {
    const V y = Ops::Add(a, s);
    const V y_pow = PowInt<kM - 1>(ops, y);
    static constexpr double c[4] = {1.0, 2.0, 3.0, 4.0};
    const V t = WeightedPowers<kM>(ops, y, a, c);
    constexpr double kScale = static_cast<double>(kM) / static_cast<double>(kM + 1);
    *q = Ops::Mul(y_pow, y);
    *cost = Ops::Mul(Ops::Mul(Ops::Set(kScale), Ops::Mul(s, s)), t);
  }
};

struct RootForm {
  template <class Ops, class V>
  static HWY_INLINE void Sums(Ops, V p, V a, V s, V* incr, V* slope) {
    const V q = Ops::Sqrt(Ops::Add(a, s));
    *incr = Ops::Div(s, Ops::Add(q, p));
    *slope = Ops::Div(Ops::Set(1.0), q);
  }
  template <class Ops, class V>
  static HWY_INLINE void Apply(Ops, V p, V a, V s, V* q, V* cost) {
    const V root = Ops::Sqrt(Ops::Add(a, s));
    const V delta = Ops::Div(s, Ops::Add(root, p));
    *q = root;
    *cost = Ops::Div(Ops::Mul(Ops::Mul(delta, delta), Ops::Add(root, Ops::Add(p, p))),
                     Ops::Set(6.0));
  }
};

struct DualSqrtForm {
  template <class Ops, class V>
  static HWY_INLINE V Root(V p, V nu, V* disc) {
    *disc = Ops::Sqrt(Ops::Add(Ops::Mul(nu, nu), Ops::Mul(Ops::Set(4.0), p)));
    return Ops::Mul(Ops::Add(nu, *disc), Ops::Set(0.5));
  }
  template <class Ops, class V>
  static HWY_INLINE void Sums(Ops, V p, V, V nu, V* incr, V* slope) {
    V disc;
    const V w = Root<Ops>(p, nu, &disc);
    *incr = Ops::Mul(nu, w);
    *slope = Ops::Div(Ops::Mul(Ops::Set(2.0), Ops::Mul(w, w)), disc);
  }
  template <class Ops, class V>
  static HWY_INLINE void Apply(Ops, V p, V a, V nu, V* q, V* cost) {
    V disc;
    const V w = Root<Ops>(p, nu, &disc);
    const V delta = Ops::Mul(nu, w);
    const V wa = Ops::Add(w, a);
    *q = Ops::Mul(w, w);
    *cost = Ops::Div(Ops::Mul(Ops::Mul(delta, delta), Ops::Add(a, Ops::Mul(Ops::Set(0.5), w))),
                     Ops::Mul(Ops::Set(0.75), Ops::Mul(wa, wa)));
  }
};

struct DualCubicForm {
  // q (q - p) = nu: delta = q - p = 2 nu / (p + sqrt(p^2 + 4 nu)) (no
  // cancellation; sqrt(nu) at p = 0).
  template <class Ops, class V>
  static HWY_INLINE V Increment(V p, V nu) {
    const V disc = Ops::Sqrt(Ops::Add(Ops::Mul(p, p), Ops::Mul(Ops::Set(4.0), nu)));
    return Ops::Div(Ops::Mul(Ops::Set(2.0), nu), Ops::Add(p, disc));
  }
  template <class Ops, class V>
  static HWY_INLINE void Sums(Ops, V p, V, V nu, V* incr, V* slope) {
    const V delta = Increment<Ops>(p, nu);
    *incr = delta;
    *slope = Ops::Div(Ops::Set(1.0), Ops::Add(p, Ops::Add(delta, delta)));  // 1 / (2q - p)
  }
  template <class Ops, class V>
  static HWY_INLINE void Apply(Ops, V p, V, V nu, V* q, V* cost) {
    const V delta = Increment<Ops>(p, nu);
    const V qv = Ops::Add(p, delta);
    *q = qv;
    *cost = Ops::Div(Ops::Mul(Ops::Mul(delta, delta), Ops::Add(p, Ops::Add(qv, qv))),
                     Ops::Set(6.0));
  }
};

// ln(1 + x) for finite x > -1 as hi + lo, hi = k ln2_hi exactly: 1 + x =
// u + cu exactly, u = 2^k m, and ln(1 + x) = k ln2 + ln m + cu / u (det_math's
// Log1pF64 beyond its small range, here on every x: one path for every lane).
template <class Ops, class V>
HWY_INLINE V Log1pLanes(V x, V* lo_out) {
  using det_math::kLn2Hi;
  using det_math::kLn2Lo;
  V u, cu, k;
  det_simd::TwoSumT<Ops>(Ops::Set(1.0), x, &u, &cu);
  const V m = Ops::SplitNormal(u, &k);
  V hfsq, tail;
  const V f = Ops::Sub(m, Ops::Set(1.0));  // exact (Sterbenz)
  det_simd::Log1pReducedT<Ops>(f, &hfsq, &tail);
  const V lo = Ops::Add(Ops::Add(tail, Ops::Div(cu, u)), Ops::Mul(k, Ops::Set(kLn2Lo)));
  *lo_out = Ops::Sub(f, Ops::Sub(hfsq, lo));
  return Ops::Mul(k, Ops::Set(kLn2Hi));
}

// e^L - 1 for L = hi + lo, -708 <= hi <= 709, |lo| small (det_math's Expm1F64,
// one path): hi = n ln2 + t + c, e^L - 1 = (2^n - 1) + 2^n (E + c (1 + E)) with
// E = e^t - 1 in two doubles; 2^n - 1 is exact for -53 <= n <= 53 and its
// rounding beyond is below an ulp of the result.
template <class Ops, class V>
HWY_INLINE V Expm1Lanes(V hi, V lo) {
  using det_math::kLn2Hi;
  using det_math::kLn2Lo;
  using det_math::kLog2e;
  const V shifter = Ops::Set(6755399441055744.0);  // 1.5 * 2^52
  const V n = Ops::Sub(Ops::Add(Ops::Mul(hi, Ops::Set(kLog2e)), shifter), shifter);
  const V r_hi = Ops::Sub(hi, Ops::Mul(n, Ops::Set(kLn2Hi)));  // exact
  V t, c;
  det_simd::TwoSumT<Ops>(r_hi, Ops::Sub(lo, Ops::Mul(n, Ops::Set(kLn2Lo))), &t, &c);
  V e_hi, e_lo;
  det_simd::FastTwoSumT<Ops>(t, Ops::Mul(Ops::Mul(t, t), det_simd::ExpTaylorTailT<Ops>(t)), &e_hi,
                             &e_lo);
  const V small = Ops::Add(e_lo, Ops::Add(c, Ops::Mul(e_hi, c)));
  const V p2 = Ops::Pow2Of(n);
  V s, s_err;
  det_simd::TwoSumT<Ops>(Ops::Sub(p2, Ops::Set(1.0)), Ops::Mul(p2, e_hi), &s, &s_err);
  return Ops::Add(s, Ops::Add(s_err, Ops::Mul(p2, small)));
}

// x = s / a_i of the general primal map, and whether the coordinate gains
// like a zero one: past x = 2^1000 (a_i = 0 included, x = inf or NaN), q =
// (a + s)^{1/b} is s^{1/b} = the zero coordinates' gain to 2^-1000 / b
// relative, and the ratio q / p past 2^{1000/b} is not worth forming. `far`
// is 0 exactly for the other lanes.
template <class Ops, class V>
HWY_INLINE V Quotient(V a, V s, V* far) {
  const V x = Ops::Div(s, a);
  *far = Ops::Max(Ops::Sub(x, Ops::Set(0x1p1000)), Ops::Zero());
  return x;
}

// The quotient clamped where log1p(x) / b is formed: past 2^1000 (those
// lanes gain like a zero coordinate, their values unused) and above -1.
template <class Ops, class V>
HWY_INLINE V ClampQuotient(V x) {
  return Ops::Max(Ops::Min(x, Ops::Set(0x1p1000)), Ops::Set(-1.0 + 0x1p-52));
}

// L = log(q_i / p_i) = log1p(x) / b of that map as hi + lo (the quotient
// carried in two doubles: q / p can be 2^900 for a tiny p, and e^L would
// turn hi's rounding into 1e-13 of q), for x > -1 (the sign of b); lanes
// past 2^1000 are clamped there and hi below 709 (their values are not
// used), so every lane stays finite. (inv_b = 1 / b rounded: hi is within
// two ulp of the quotient and lo, from the exact residual l - hi b, corrects
// it; no division. The residual's first two terms cancel exactly by
// Sterbenz, so prod_err comes in last, with the one rounding.)
template <class Ops, class V>
HWY_INLINE V LogRatio(V x_in, V b, V inv_b, V* lo_out) {
  const V x = ClampQuotient<Ops>(x_in);
  V l_lo;
  const V l_hi = Log1pLanes<Ops>(x, &l_lo);
  const V hi = Ops::Mul(Ops::Add(l_hi, l_lo), inv_b);
  V prod, prod_err;  // hi b exactly
  det_simd::TwoProdT<Ops>(hi, b, &prod, &prod_err);
  const V residual = Ops::Sub(Ops::Add(Ops::Sub(l_hi, prod), l_lo), prod_err);
  *lo_out = Ops::Mul(residual, inv_b);
  return Ops::Min(hi, Ops::Set(709.0));
}

// q_i / p_i - 1 = e^L - 1 >= 0 of that map.
template <class Ops, class V>
HWY_INLINE V PowerRatioM1(V x, V b, V inv_b) {
  V lo;
  const V hi = LogRatio<Ops>(x, b, inv_b, &lo);
  return Expm1Lanes<Ops>(hi, lo);
}

// g_alpha(L) = [e^{aL} - 1 - a (e^L - 1)] / (a (a - 1)) (alpha_family.h) by
// its series sum_{n>=2} S_{n-1} L^n / n!, S_m = 1 + a + ... + a^{m-1}, for
// (a + 1) |L| <= 1: 20 terms leave less than 2^-60 of the sum. The
// coefficients once per pass, the series by Horner (no division per lane).
struct DivergenceSeries {
  double coef[20];  // S_{n-1} / n!, n = 2 .. 21
  explicit DivergenceSeries(double alpha) {
    double s = 1.0, factorial = 2.0;
    coef[0] = 0.5;
    for (int n = 3; n <= 21; ++n) {
      s = 1.0 + alpha * s;
      factorial *= n;
      coef[n - 2] = s / factorial;
    }
  }
};
template <class Ops, class V>
HWY_INLINE V DivergenceSeriesLanes(V L, const DivergenceSeries& series) {
  V sum = Ops::Set(series.coef[19]);
  for (int j = 18; j >= 0; --j) sum = Ops::Add(Ops::Mul(sum, L), Ops::Set(series.coef[j]));
  return Ops::Mul(Ops::Mul(L, L), sum);
}

// ln x for normal x > 0 as hi + lo, hi = k ln2_hi exactly.
template <class Ops, class V>
HWY_INLINE V LogLanes(V x, V* lo_out) {
  V k;
  const V m = Ops::SplitNormal(x, &k);
  return det_simd::LogFromSplitPartsT<Ops>(m, k, lo_out);
}

// e^x for |x| <= 700 and ln x for normal x > 0, to ~1e-10: the Halley
// steps' guesses, which only need to land near the root (the last step, from
// two-double logarithms, makes the result exact). e^x = 2^n e^r, r = x - n ln2
// by Taylor to r^8 / 8!; ln x = k ln2 + 2 atanh(f / (2 + f)), x = 2^k (1 + f),
// to its sixth term.
template <class Ops, class V>
HWY_INLINE V ExpRoughLanes(V x) {
  const V shifter = Ops::Set(6755399441055744.0);  // 1.5 * 2^52
  const V n = Ops::Sub(Ops::Add(Ops::Mul(x, Ops::Set(det_math::kLog2e)), shifter), shifter);
  const V r = Ops::Sub(x, Ops::Mul(n, Ops::Set(det_math::kLn2)));
  V e = Ops::Set(1.0 / 40320.0);
  for (double c : {1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0}) {
    e = Ops::Add(Ops::Mul(e, r), Ops::Set(c));
  }
  return Ops::Mul(e, Ops::Pow2Of(n));
}
template <class Ops, class V>
HWY_INLINE V LogRoughLanes(V x) {
  V k;
  const V m = Ops::SplitNormal(x, &k);
  const V f = Ops::Sub(m, Ops::Set(1.0));
  const V s = Ops::Div(f, Ops::Add(Ops::Set(2.0), f));
  const V z = Ops::Mul(s, s);
  V r = Ops::Set(2.0 / 11.0);
  for (double c : {2.0 / 9.0, 2.0 / 7.0, 2.0 / 5.0, 2.0 / 3.0, 2.0}) {
    r = Ops::Add(Ops::Mul(r, z), Ops::Set(c));
  }
  return Ops::Add(Ops::Mul(k, Ops::Set(det_math::kLn2)), Ops::Mul(s, r));
}

// The general dual map (alpha > 1 but not 3/2, 2 or 3). With t = (q - p) / p,
// q^{a-2} (q - p) = nu reads t (1 + t)^{a-2} = c, c = nu p^{2-a} / p: one
// equation in c for every coordinate. In s = log t it is
//   G(s) = s + (a-2) log1p(e^s) - log c = 0,
//   G' = 1 + (a-2) theta = w / u,  G'' = (a-2) t / u^2,
// u = 1 + t, w = 1 + (a-1) t, theta = t / u. Its root s(log c) is one
// function of log c for every coordinate, smooth, and linear away from
// log c = 0 (s = log c below, (log c) / (a-1) above). So:
//  - a start: past log c < -20 or log c > 20 (a-1) those asymptotes (within
//    2e-9 (|a-2| + 1) / (a-1)); between them a cubic Hermite interpolation of
//    s(log c) on a per-alpha table (DualStartTable: within ~3e-8). Alphas
//    without a table (near 1, or large) start on the asymptote on G's far
//    side and take Halley steps (cubic) until one is below 1e-3 (which
//    leaves under 1e-10; 2 to 4 steps for a in [1.01, 50]), a stopped lane
//    frozen.
//  - one Halley step on t itself, with G from two-double logarithms,
//    log(t / c) + (a-2) log1p(t): the rounding of log c and of s (1e-13 at
//    |s| ~ 700) never reaches t, and the step is applied as t e^{-step} by its
//    series, so t and q - p = p t come out within a few ulp (the rounding
//    of p^{2-a} and nu^{1/(a-1)} included; test_support_map.cc measures it).
// Outside the iteration, to first order in c or 1/t (the next terms are
// below e^-80 times powers of a): c < e^-40 gives t = c (1 - (a-2) c), q - p =
// nu p^{2-a} (1 - (a-2) c); c > e^{40(a-1)}, and p = 0 (c is NaN), give q - p
// = nu^{1/(a-1)} - p (a-2)/(a-1).
// Each lane follows its own sequence whatever its neighbours do (a stopped
// lane is frozen), so F64 and F64Scalar give the same bits.
struct DualPowerConstants {
  double alpha;
  double nu;
  double nu_root;  // nu^{1/(alpha-1)}
  double large_c;  // e^{40 (alpha-1)} (may be +inf)
  const DualStartTable* table;  // null: Halley steps from the asymptote
  bool rough = false;  // stop at the start (see SumDualPowerMap's rough)
};
constexpr double kDualSmallC = 4.248354255291589e-18;  // e^-40
constexpr int kDualMaxSteps = 60;  // 2-4 used for a in [1.001, 300]; more only as a -> 1

// The Halley step -G / G' / (1 - G G'' / (2 G'^2)) in s, times u^2 top and
// bottom (one division).
template <class Ops, class V>
HWY_INLINE V HalleyStep(V g, V t, V a2, V b) {
  const V u = Ops::Add(Ops::Set(1.0), t);
  const V w = Ops::Add(Ops::Set(1.0), Ops::Mul(b, t));
  const V num = Ops::Mul(Ops::Mul(Ops::Set(2.0), g), Ops::Mul(w, u));
  return Ops::Div(num, Ops::Sub(Ops::Mul(Ops::Mul(Ops::Set(2.0), w), w),
                                Ops::Mul(g, Ops::Mul(a2, t))));
}

// s(lc) from the table's cubic on lc's interval (lc inside [l0, l1]; any
// lane may read a clamped interval).
template <class Ops, class V>
HWY_INLINE V TableStart(V lc, const DualStartTable& table) {
  const V x = Ops::Mul(Ops::Sub(lc, Ops::Set(table.l0)), Ops::Set(table.inv_h));
  const V shifter = Ops::Set(6755399441055744.0);  // 1.5 * 2^52
  V j = Ops::Sub(Ops::Add(Ops::Sub(x, Ops::Set(0.5)), shifter), shifter);  // ~floor(x)
  // Clamped with the bound first: a NaN j (none arises; lc is finite) lands on a bound.
  j = Ops::Min(Ops::Set(static_cast<double>(table.count - 1)), Ops::Max(Ops::Zero(), j));
  return Ops::CubicAt(table.coef.data(), j, Ops::Sub(x, j));
}

// t = e^s at the root of t (1 + t)^{a-2} = c for lanes with mid != 0, from
// the start above; inv_c = 1 / c (1 where mid is 0), lc ~ log c. Writes
// l = log1p(t) (two doubles summed) and w = 1 + (a-1) t.
template <class Ops, class V>
HWY_INLINE V DualRatio(V lc, V inv_c, V mid, const DualPowerConstants& m, V* l, V* w_out) {
  const V one = Ops::Set(1.0);
  const V a2 = Ops::Set(m.alpha - 2.0), b = Ops::Set(m.alpha - 1.0);
  const V lc_b = Ops::Mul(lc, Ops::Set(1.0 / (m.alpha - 1.0)));
  const V far_side = m.alpha > 2.0 ? Ops::Min(lc, lc_b) : Ops::Max(lc, lc_b);
  V s = far_side;
  V active = mid;
  if (m.table != nullptr) {
    const DualStartTable& table = *m.table;
    const V near_linear = Ops::IfLess(lc, Ops::Set(table.l0), lc, lc_b);  // the asymptote
    const V inside = Ops::IfLess(lc, Ops::Set(table.l0), Ops::Zero(),
                                 Ops::IfLess(Ops::Set(table.l1), lc, Ops::Zero(), one));
    s = Ops::IfZero(inside, near_linear, TableStart<Ops>(lc, table));
    active = Ops::Zero();
  }
  for (int step_count = 0; step_count < kDualMaxSteps && Ops::AnyNonZero(active); ++step_count) {
    const V t = ExpRoughLanes<Ops>(s);
    const V g = Ops::Sub(Ops::Add(s, Ops::Mul(a2, LogRoughLanes<Ops>(Ops::Add(one, t)))), lc);
    const V step = HalleyStep<Ops>(g, t, a2, b);
    const V next = Ops::Min(Ops::Max(Ops::Sub(s, step), Ops::Set(-45.0)), Ops::Set(45.0));
    s = Ops::IfZero(active, s, next);
    const V size = Ops::Max(step, Ops::Sub(Ops::Zero(), step));
    active = Ops::IfLess(size, Ops::Set(1e-3), Ops::Zero(), active);
  }
  const V t = ExpRoughLanes<Ops>(Ops::Min(Ops::Max(s, Ops::Set(-45.0)), Ops::Set(45.0)));
  if (m.rough) {  // the start as it is (the table's ~3e-8; Halley's guesses ~1e-10)
    *l = Ops::Zero();  // (no cost is priced from a rough map)
    *w_out = Ops::Add(one, Ops::Mul(b, t));
    return t;
  }
  // The last step, on t (any t near the root: G is exact there).
  // log1p(t) = log u + cu / u, u + cu = 1 + t exactly.
  V u, cu;
  det_simd::TwoSumT<Ops>(one, t, &u, &cu);
  const V inv_u = Ops::Div(one, u);
  V l_lo;
  const V l_hi = LogLanes<Ops>(u, &l_lo);
  l_lo = Ops::Add(l_lo, Ops::Mul(cu, inv_u));
  V y_lo;
  const V y_hi = LogLanes<Ops>(Ops::Mul(t, inv_c), &y_lo);
  V prod, prod_err;  // (a-2) l_hi exactly
  det_simd::TwoProdT<Ops>(a2, l_hi, &prod, &prod_err);
  const V g = Ops::Add(Ops::Add(y_hi, prod),
                       Ops::Add(Ops::Add(y_lo, prod_err), Ops::Mul(a2, l_lo)));
  const V step = HalleyStep<Ops>(g, t, a2, b);
  // t e^{-step} = t - t step (1 - step (1/2 - step / 6)), |step| < 1e-9;
  // log1p moves by -theta step to first order.
  const V shrink = Ops::Sub(one, Ops::Mul(step, Ops::Sub(Ops::Set(0.5),
                                                         Ops::Mul(step, Ops::Set(1.0 / 6.0)))));
  const V moved = Ops::Mul(Ops::Mul(t, step), shrink);
  const V root = Ops::Sub(t, moved);
  *l = Ops::Sub(Ops::Add(l_hi, l_lo), Ops::Mul(moved, inv_u));
  *w_out = Ops::Add(one, Ops::Mul(b, root));
  return root;
}

// Past alpha ~ 1 + 709/40, c can overflow (p^{2-a} or nu p^{2-a} / p above
// 2^1024) while t is still below e^40: such coordinates (rare: p below
// ~1e-300^{1/(a-2)}) solve q^{a-2} (q - p) = nu by scalar Newton in log(q - p)
// from nu^{1/(a-1)} (G = log(q^{a-2} (q - p) / nu) is convex there, so the
// iteration falls monotonically; the bracket [nu^{1/(a-1)} 2^{2-a},
// nu^{1/(a-1)}] only guards it).
// (18.6: below 1 + 1020 ln2 / 40, where 1 / e^{40(a-1)} would leave the
// normal range and a mid lane's 1 / c could be subnormal.)
constexpr double kDualOverflowAlpha = 18.6;
HWY_INLINE double DualIncrementByNewton(double alpha, double p, double nu, double nu_root) {
  double delta = nu_root, hi = nu_root, lo = nu_root * Exp2F64(2.0 - alpha);
  for (int it = 0; it < 200; ++it) {
    const double q = p + delta;
    const double g = LogF64(PowF64(q, alpha - 2.0) * delta / nu);
    if (g == 0.0) break;
    (g > 0.0 ? hi : lo) = delta;
    const double step = g / (1.0 + (alpha - 2.0) * (delta / q));
    double next = delta * ExpFullF64(-step);
    if (!(next >= lo && next <= hi)) next = std::sqrt(lo) * std::sqrt(hi);
    // The error after a step below 1e-9 is below (a-2)/8 step^2 (G'' <=
    // (a-2)/4, G' >= 1): under an ulp for a < ~100, a few beyond.
    const bool done = std::fabs(step) <= 1e-9 || next == delta;
    delta = next;
    if (done) break;
  }
  return delta;
}

// q - p for one nu; *slope = dq/dnu, *ell = log1p(t) = log(q / p) (huge
// where q - p is nu^{1/(alpha-1)}).
template <class Ops, class V>
HWY_INLINE V DualPowerIncrement(V p, V p_pow, const DualPowerConstants& m, V* slope, V* ell) {
  const V one = Ops::Set(1.0);
  const V nu = Ops::Set(m.nu);
  // 1 / c: +inf where p^{2-a} underflowed (small), 0 where it overflowed
  // (large), NaN for p = 0 (large).
  const V inv_c = Ops::Div(p, Ops::Mul(nu, p_pow));
  const V above_small = Ops::Set(1.0 / kDualSmallC), below_large = Ops::Set(1.0 / m.large_c);
  // small: c < e^-40; mid: the iteration runs (else large; NaN compares false).
  const V small = Ops::IfLess(above_small, inv_c, one, Ops::Zero());
  const V mid = Ops::IfZero(small, Ops::IfLess(below_large, inv_c, one, Ops::Zero()), Ops::Zero());
  const V inv_c_mid = Ops::IfZero(mid, one, inv_c);
  V l, w;
  const V t = DualRatio<Ops>(Ops::Sub(Ops::Zero(), LogRoughLanes<Ops>(inv_c_mid)), inv_c_mid, mid,
                             m, &l, &w);
  const V incr_mid = Ops::Mul(p, t);
  // dq/dnu = (q - p) / (nu G') = (q - p) u / (nu w).
  const V slope_mid = Ops::Div(Ops::Mul(incr_mid, Ops::Add(one, t)), Ops::Mul(nu, w));
  const V nu_root = Ops::Set(m.nu_root);
  const V slope_large = Ops::Set(m.nu_root / (m.nu * (m.alpha - 1.0)));
  *slope = Ops::IfZero(small, Ops::IfZero(mid, slope_large, slope_mid), p_pow);
  *ell = Ops::IfZero(small, Ops::IfZero(mid, Ops::Set(0x1p1000), l), Ops::Div(one, inv_c));
  const V a2 = Ops::Set(m.alpha - 2.0);
  const V small_incr = Ops::Mul(Ops::Mul(nu, p_pow),
                                Ops::Sub(one, Ops::Div(a2, inv_c)));  // (1 - (a-2) c)
  const V large_incr =
      Ops::Sub(nu_root, Ops::Mul(p, Ops::Set((m.alpha - 2.0) / (m.alpha - 1.0))));
  V incr = Ops::IfZero(small, Ops::IfZero(mid, large_incr, incr_mid), small_incr);
  if (m.alpha > kDualOverflowAlpha) {
    // c past 2^1020 (1 / c below 2^-1020, or 0 where p^{2-a} overflowed).
    const V overflow =
        Ops::WherePositive(p, Ops::IfLess(inv_c, Ops::Set(0x1p-1020), one, Ops::Zero()));
    if (Ops::AnyNonZero(overflow)) {
      HWY_ALIGN double flag[Ops::kLanes], pl[Ops::kLanes], il[Ops::kLanes], sl[Ops::kLanes],
          el[Ops::kLanes];
      Ops::Store(overflow, flag);
      Ops::Store(p, pl);
      Ops::Store(incr, il);
      Ops::Store(*slope, sl);
      Ops::Store(*ell, el);
      for (size_t j = 0; j < Ops::kLanes; ++j) {
        if (flag[j] == 0.0) continue;
        const double d = DualIncrementByNewton(m.alpha, pl[j], m.nu, m.nu_root);
        const double theta = d / (pl[j] + d);
        il[j] = d;
        sl[j] = d / (m.nu * (1.0 + (m.alpha - 2.0) * theta));
        el[j] = Log1pF64(d / pl[j]);
      }
      incr = Ops::Load(il);
      *slope = Ops::Load(sl);
      *ell = Ops::Load(el);
    }
  }
  return incr;
}

// The start table's nodes: s(lc) and h ds/dlc at lc = l0 + j h, j < count,
// solved by the table-less path (F64Scalar: the same bits on every target).
void DualStartNodesImpl(double alpha, double l0, double h, size_t count, double* nodes) {
  using Ops = F64Scalar;
  const DualPowerConstants m{alpha, 1.0, 1.0, HUGE_VAL, nullptr};
  for (size_t j = 0; j < count; ++j) {
    const double lc = l0 + static_cast<double>(j) * h;
    double l, w;
    const double t = DualRatio<Ops>(lc, ExpRoughLanes<Ops>(-lc), 1.0, m, &l, &w);
    nodes[2 * j] = LogRoughLanes<Ops>(t);
    nodes[2 * j + 1] = h * (1.0 + t) / w;  // ds/dlc = 1 / G'
  }
}

// d(p, q) = q^a g(log(p / q)) of that map (alpha_family.h), with q^{a-2} =
// nu / (q - p) (the KKT condition): by g's series near q = p ((a+1) ell <= 1);
// beyond, exactly [p^a - q^a + a q nu] / (a (a-1)). 0 where q = p.
template <class Ops, class V>
HWY_INLINE V DualPowerCost(V p, V p_pow, V q, V incr, V ell, const DualPowerConstants& m,
                           const DivergenceSeries& g_series) {
  const double a = m.alpha;
  // q^a = (q nu) (q / (q - p)): no q^2 to underflow for a subnormal p.
  const V q_pow = Ops::Mul(Ops::Mul(q, Ops::Set(m.nu)), Ops::Div(q, incr));
  const V p_pow_a = Ops::WherePositive(p, Ops::Div(Ops::Mul(p, p), p_pow));  // p^a
  const V series =
      Ops::Mul(q_pow, DivergenceSeriesLanes<Ops>(Ops::Sub(Ops::Zero(), ell), g_series));
  const V direct = Ops::Div(
      Ops::Add(Ops::Sub(p_pow_a, q_pow), Ops::Mul(q, Ops::Set(a * m.nu))), Ops::Set(a * (a - 1.0)));
  const V near = Ops::Max(Ops::Sub(Ops::Mul(ell, Ops::Set(a + 1.0)), Ops::Set(1.0)), Ops::Zero());
  return Ops::WherePositive(incr, Ops::IfZero(near, series, direct));
}

// Each term times weight[i] when there are weights (a SupportSketch's nodes).
template <class Ops, class V>
HWY_INLINE void Weigh(const double* weight, size_t i, V* t) {
  if (weight == nullptr) return;
  const V w = Ops::Load(weight + i);
  t[0] = Ops::Mul(t[0], w);
  t[1] = Ops::Mul(t[1], w);
}
// The Apply kernels' one term (a token's divergence), weighted the same way.
template <class Ops, class V>
HWY_INLINE void WeighCost(const double* weight, size_t i, V* t) {
  if (weight != nullptr) t[0] = Ops::Mul(t[0], Ops::Load(weight + i));
}

template <class FormT>
HWY_INLINE SupportMapSums SumsOf(const double* p, const double* a, size_t k, double shift,
                                 const double* weight) {
  double totals[2];
  SumF64Lanes<2>(
      k,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        FormT::Sums(ops, Ops::Load(p + i), Ops::Load(a + i), Ops::Set(shift), &t[0], &t[1]);
        Weigh<Ops>(weight, i, t);
      },
      totals);
  return {totals[0], totals[1]};
}

template <class FormT>
HWY_INLINE double ApplyOf(const double* p, const double* a, size_t k, double shift, double* q,
                          const double* cost_weight) {
  double total;
  SumF64Lanes<1>(
      k,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        typename Ops::V qi;
        FormT::Apply(ops, Ops::Load(p + i), Ops::Load(a + i), Ops::Set(shift), &qi, &t[0]);
        Ops::Store(qi, q + i);
        WeighCost<Ops>(cost_weight, i, t);
      },
      &total);
  return total;
}

template <class Body>
HWY_INLINE auto WithForm(SupportMap map, const Body& body) {
  switch (map) {
    case SupportMap::kPrimalInverse2: return body(InverseForm<2>());
    case SupportMap::kPrimalInverse3: return body(InverseForm<3>());
    case SupportMap::kPrimalInverse4: return body(InverseForm<4>());
    case SupportMap::kPrimalPower3: return body(PowerForm<3>());
    case SupportMap::kPrimalPower4: return body(PowerForm<4>());
    case SupportMap::kPrimalRoot: return body(RootForm());
    case SupportMap::kDualCubic: return body(DualCubicForm());
    case SupportMap::kDualSqrt: break;
  }
  return body(DualSqrtForm());
}

SupportMapSums SumSupportMapImpl(SupportMap map, const double* p, const double* a, size_t k,
                                 double shift, const double* weight) {
  return WithForm(map, [&](auto form) {
    return SumsOf<decltype(form)>(p, a, k, shift, weight);
  });
}

double ApplySupportMapImpl(SupportMap map, const double* p, const double* a, size_t k,
                           double shift, double* q, const double* cost_weight) {
  return WithForm(map, [&](auto form) {
    return ApplyOf<decltype(form)>(p, a, k, shift, q, cost_weight);
  });
}

SupportMapSums SumPrimalPowerMapImpl(const double* p, const double* a, size_t k, double b,
                                     double shift, double zero_gain, double zero_slope,
                                     const double* weight) {
  const double inv_b = 1.0 / b;
  double totals[2];
  SumF64Lanes<2>(
      k,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        const auto pv = Ops::Load(p + i), av = Ops::Load(a + i), sv = Ops::Set(shift);
        typename Ops::V far;
        const auto x = Quotient<Ops>(av, sv, &far);
        const auto ratio = PowerRatioM1<Ops>(x, Ops::Set(b), Ops::Set(inv_b));
        const auto incr = Ops::Mul(pv, ratio);
        // dq/dnu = q^{2-alpha} = q / q^b = q / (a + s); a = +inf (p = 0,
        // alpha < 1) gives q = 0 and 0.
        const auto slope = Ops::Div(Ops::Add(pv, incr), Ops::Add(av, sv));
        // A far coordinate's q is the zero one's, so its increment is that
        // less its own p: p is at most 2^{-1000/b} of q, not negligible for
        // a large alpha (a sixth at alpha 400, where q of 8 x 1/8 at k = 2
        // summed to 3/4 without it).
        t[0] = Ops::IfZero(far, incr, Ops::Sub(Ops::Set(zero_gain), pv));
        t[1] = Ops::IfZero(far, slope, Ops::Set(zero_slope));
        Weigh<Ops>(weight, i, t);
      },
      totals);
  return {totals[0], totals[1]};
}

double ApplyPrimalPowerMapImpl(const double* p, const double* a, size_t k, double alpha,
                               double shift, double zero_mass, double zero_cost, double* q,
                               bool price, const double* cost_weight) {
  const double b = alpha - 1.0;
  const double inv_b = 1.0 / b;
  const DivergenceSeries g_series(alpha);
  double total;
  SumF64Lanes<1>(
      k,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        const auto pv = Ops::Load(p + i), av = Ops::Load(a + i);
        typename Ops::V lo, far;
        const auto x = Quotient<Ops>(av, Ops::Set(shift), &far);
        const auto L = LogRatio<Ops>(x, Ops::Set(b), Ops::Set(inv_b), &lo);
        const auto incr = Ops::Mul(pv, Expm1Lanes<Ops>(L, lo));
        const auto qv = Ops::Add(pv, incr);
        Ops::Store(Ops::IfZero(far, qv, Ops::Set(zero_mass)), q + i);
        if (!price) {  // (uniform over the pass: a predicted branch)
          t[0] = Ops::Zero();
          return;
        }
        // d(q, p) = p^alpha g(L) with p^alpha = p a: by g's series near q = p;
        // otherwise, with q^b - p^b = b nu (the KKT condition), exactly
        // [q nu - p^b (q - p)] / alpha, whose two terms are apart by a factor
        // of at least 1 + L / 2 there (and which cannot overflow, unlike
        // e^{alpha L} for a tiny p). 0 where p = 0 (a = +inf).
        const auto series = Ops::Mul(Ops::Mul(pv, av), DivergenceSeriesLanes<Ops>(L, g_series));
        const auto direct = Ops::Div(Ops::Sub(Ops::Mul(qv, Ops::Set(shift / b)), Ops::Mul(av, incr)),
                                     Ops::Set(alpha));
        const auto near = Ops::Max(Ops::Sub(Ops::Mul(L, Ops::Set(alpha + 1.0)), Ops::Set(1.0)),
                                   Ops::Zero());  // 0 where (alpha + 1) L <= 1
        const auto cost = Ops::WherePositive(pv, Ops::IfZero(near, series, direct));
        t[0] = Ops::IfZero(far, cost, Ops::Set(zero_cost));
        WeighCost<Ops>(cost_weight, i, t);
      },
      &total);
  return price ? total : NAN;
}

SupportMapSums SumDualPowerMapImpl(const double* p, const double* p_pow, size_t k, double alpha,
                                   double nu, double nu_root, double large_c,
                                   const DualStartTable* table, const double* weight, bool rough) {
  const DualPowerConstants m{alpha, nu, nu_root, large_c, table, rough};
  double totals[2];
  SumF64Lanes<2>(
      k,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        typename Ops::V ell;
        t[0] = DualPowerIncrement<Ops>(Ops::Load(p + i), Ops::Load(p_pow + i), m, &t[1], &ell);
        Weigh<Ops>(weight, i, t);
      },
      totals);
  return {totals[0], totals[1]};
}

double ApplyDualPowerMapImpl(const double* p, const double* p_pow, size_t k, double alpha,
                             double nu, double nu_root, double large_c,
                             const DualStartTable* table, double* q, bool price,
                             const double* cost_weight) {
  const DualPowerConstants m{alpha, nu, nu_root, large_c, table};
  const DivergenceSeries g_series(alpha);
  double total;
  SumF64Lanes<1>(
      k,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        const auto pv = Ops::Load(p + i), av = Ops::Load(p_pow + i);
        typename Ops::V slope, ell;
        const auto incr = DualPowerIncrement<Ops>(pv, av, m, &slope, &ell);
        const auto qv = Ops::Add(pv, incr);
        Ops::Store(qv, q + i);
        // (price is uniform over the pass: a predicted branch)
        t[0] = price ? DualPowerCost<Ops>(pv, av, qv, incr, ell, m, g_series) : Ops::Zero();
        WeighCost<Ops>(price ? cost_weight : nullptr, i, t);
      },
      &total);
  return price ? total : NAN;
}

// A block's p mapped to [-1, 1]: the one coordinate its moments (the
// sketch's weights) and its series (the interpolated q) are taken in.
template <class Ops, class V>
HWY_INLINE V BlockCoordinate(V p, double centre, double inv_half) {
  return Ops::Min(Ops::Set(1.0), Ops::Max(Ops::Set(-1.0), Ops::Mul(Ops::Sub(p, Ops::Set(centre)),
                                                                   Ops::Set(inv_half))));
}

template <size_t kTerms>
HWY_INLINE void ChebyshevIncrementsOf(const double* p, size_t n, double centre, double inv_half,
                                      const double* coef, double* q) {
  double unused;
  SumF64Lanes<1>(
      n,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        const auto pv = Ops::Load(p + i);
        const auto u = BlockCoordinate<Ops>(pv, centre, inv_half);
        const auto two_u = Ops::Add(u, u);
        auto b1 = Ops::Zero(), b2 = Ops::Zero();
        for (size_t j = kTerms - 1; j >= 1; --j) {
          const auto b0 = Ops::Add(Ops::Sub(Ops::Mul(two_u, b1), b2), Ops::Set(coef[j]));
          b2 = b1;
          b1 = b0;
        }
        const auto incr = Ops::Add(Ops::Sub(Ops::Mul(u, b1), b2), Ops::Set(coef[0]));
        Ops::Store(Ops::Add(pv, incr), q + i);
        t[0] = Ops::Zero();
      },
      &unused);
}

void ChebyshevIncrementsImpl(const double* p, size_t n, double centre, double inv_half,
                             const double* coef, size_t terms, double* q) {
  if (terms == kChebyshevWideTerms) {
    ChebyshevIncrementsOf<kChebyshevWideTerms>(p, n, centre, inv_half, coef, q);
  } else {
    ChebyshevIncrementsOf<kChebyshevTerms>(p, n, centre, inv_half, coef, q);
  }
}

template <size_t kTerms>
HWY_INLINE void ChebyshevMomentsOf(const double* p, size_t n, double centre, double inv_half,
                                   double* moments) {
  SumF64Lanes<kTerms>(
      n,
      [&](auto ops, size_t i, auto* t) HWY_ATTR {
        using Ops = decltype(ops);
        const auto u = BlockCoordinate<Ops>(Ops::Load(p + i), centre, inv_half);
        const auto two_u = Ops::Add(u, u);
        t[0] = Ops::Set(1.0);
        t[1] = u;
        for (size_t j = 2; j < kTerms; ++j) {
          t[j] = Ops::Sub(Ops::Mul(two_u, t[j - 1]), t[j - 2]);
        }
      },
      moments);
}

void ChebyshevMomentsImpl(const double* p, size_t n, double centre, double inv_half, size_t terms,
                          double* moments) {
  if (terms == kChebyshevWideTerms) {
    ChebyshevMomentsOf<kChebyshevWideTerms>(p, n, centre, inv_half, moments);
  } else {
    ChebyshevMomentsOf<kChebyshevTerms>(p, n, centre, inv_half, moments);
  }
}

// The virtual lanes of SupportMass carried on over p[0..n), n a multiple of
// kF64VirtualLanes: lanes[j] += p[i] for i = j mod 8, in order of i (what
// SumF64Lanes' accumulators do), so a mass resumed from saved lanes has the
// same bits as one summed from the start.
void AccumulateMassLanesImpl(const double* p, size_t n, double* lanes) {
  static_assert(kSupportMassLanes == kF64VirtualLanes, "SupportMass's lanes");
  using Ops = F64;
  constexpr size_t N = Ops::kLanes;
  constexpr size_t R = kF64VirtualLanes / N;
  typename Ops::V acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = Ops::Load(lanes + r * N);
  for (size_t i = 0; i + kF64VirtualLanes <= n; i += kF64VirtualLanes) {
    for (size_t r = 0; r < R; ++r) acc[r] = Ops::Add(acc[r], Ops::Load(p + i + r * N));
  }
  for (size_t r = 0; r < R; ++r) Ops::Store(acc[r], lanes + r * N);
}

void SqrtManyImpl(const double* p, size_t n, double* out) {
  using Ops = F64;
  constexpr size_t N = Ops::kLanes;
  size_t i = 0;
  for (; i + N <= n; i += N) Ops::Store(Ops::Sqrt(Ops::Load(p + i)), out + i);
  for (; i < n; ++i) out[i] = std::sqrt(p[i]);
}

// (The same operations in the same order on lanes and in the tail: IEEE
// sqrt, mul and add round alike everywhere, and the core has no FMA.)
void ApplySqrtShiftImpl(const double* p, size_t k, double c, double* q) {
  using Ops = F64;
  constexpr size_t N = Ops::kLanes;
  const typename Ops::V cv = Ops::Set(c), two = Ops::Set(2.0);
  size_t i = 0;
  for (; i + N <= k; i += N) {
    const typename Ops::V pv = Ops::Load(p + i);
    const typename Ops::V r = Ops::Sqrt(pv);
    Ops::Store(Ops::Add(pv, Ops::Mul(cv, Ops::Add(Ops::Mul(two, r), cv))), q + i);
  }
  for (; i < k; ++i) q[i] = p[i] + c * (2.0 * std::sqrt(p[i]) + c);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(SumSupportMapImpl);
HWY_EXPORT(ApplySupportMapImpl);
HWY_EXPORT(AccumulateMassLanesImpl);
HWY_EXPORT(SqrtManyImpl);
HWY_EXPORT(ApplySqrtShiftImpl);
HWY_EXPORT(SumPrimalPowerMapImpl);
HWY_EXPORT(ApplyPrimalPowerMapImpl);
HWY_EXPORT(SumDualPowerMapImpl);
HWY_EXPORT(ApplyDualPowerMapImpl);
HWY_EXPORT(DualStartNodesImpl);
HWY_EXPORT(ChebyshevIncrementsImpl);
HWY_EXPORT(ChebyshevMomentsImpl);

void SqrtMany(const double* p, size_t n, double* out) {
  HWY_DYNAMIC_DISPATCH(SqrtManyImpl)(p, n, out);
}

void ApplySqrtShift(const double* p, size_t k, double c, double* q) {
  HWY_DYNAMIC_DISPATCH(ApplySqrtShiftImpl)(p, k, c, q);
}

void AccumulateMassLanes(const double* p, size_t n, double* lanes) {
  HWY_DYNAMIC_DISPATCH(AccumulateMassLanesImpl)(p, n, lanes);
}

double MassFromLanes(const double* lanes, const double* p, size_t from, size_t to) {
  double l[kSupportMassLanes];
  for (size_t j = 0; j < kSupportMassLanes; ++j) l[j] = lanes[j];
  for (size_t i = from; i < to; ++i) l[i % kSupportMassLanes] += p[i];
  for (size_t width = kSupportMassLanes / 2; width >= 1; width /= 2) {
    for (size_t j = 0; j < width; ++j) l[j] = l[j] + l[j + width];
  }
  return l[0];
}

// The lanes from zero, then MassFromLanes: the whole sum and a resumed one
// are the same additions by construction (SumF64Lanes' order and tree).
double SupportMass(const double* p, size_t k) {
  double lanes[kSupportMassLanes] = {};
  const size_t whole = k - k % kSupportMassLanes;
  AccumulateMassLanes(p, whole, lanes);
  return MassFromLanes(lanes, p, whole, k);
}

double SupportMin(const double* a, size_t k) {
  // Four independent minima (min is exact, so any grouping gives the same).
  double m[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
  size_t i = 0;
  for (; i + 4 <= k; i += 4) {
    for (size_t j = 0; j < 4; ++j) m[j] = a[i + j] < m[j] ? a[i + j] : m[j];
  }
  for (; i < k; ++i) m[0] = a[i] < m[0] ? a[i] : m[0];
  const double m01 = m[0] < m[1] ? m[0] : m[1], m23 = m[2] < m[3] ? m[2] : m[3];
  return m01 < m23 ? m01 : m23;
}

SupportMapSums SumPrimalPowerMap(const double* p, const double* a, size_t k, double b,
                                 double shift, double zero_gain, double zero_slope,
                                 const double* weight) {
  return HWY_DYNAMIC_DISPATCH(SumPrimalPowerMapImpl)(p, a, k, b, shift, zero_gain, zero_slope,
                                                     weight);
}

double ApplyPrimalPowerMap(const double* p, const double* a, size_t k, double alpha,
                           double shift, double zero_mass, double zero_cost, double* q,
                           bool price, const double* cost_weight) {
  return HWY_DYNAMIC_DISPATCH(ApplyPrimalPowerMapImpl)(p, a, k, alpha, shift, zero_mass,
                                                       zero_cost, q, price, cost_weight);
}

// Where the dual map's t exceeds e^40: c > e^{40 (alpha-1)} (+inf past the
// range).
static double DualLargeC(double alpha) { return ExpFullF64(40.0 * (alpha - 1.0)); }

void BuildDualStartTable(double alpha, DualStartTable* table) {
  // s(lc) bends within |lc| ~ 20 (a-1) of 0, over a width ~ (a-1) for
  // a < 2: nodes h = min(1/8, (a-1)/8) apart keep the cubic within ~3e-8.
  const double b = alpha - 1.0;
  const double h = std::min(0.125, b / 8.0);
  const double l0 = -20.0, l1 = 20.0 * b;
  const double span = (l1 - l0) / h;
  table->alpha = alpha;
  table->count = 0;
  table->coef.clear();
  if (!(span <= static_cast<double>(kDualStartTableMaxIntervals - 1))) return;  // no table
  const size_t count = static_cast<size_t>(span) + 1;  // the last interval reaches l1
  std::vector<double> nodes(2 * (count + 1));
  HWY_DYNAMIC_DISPATCH(DualStartNodesImpl)(alpha, l0, h, count + 1, nodes.data());
  // Hermite's cubic on interval j in f = (lc - l0) / h - j, by powers of f.
  table->coef.resize(4 * count);
  for (size_t j = 0; j < count; ++j) {
    const double s0 = nodes[2 * j], d0 = nodes[2 * j + 1];
    const double s1 = nodes[2 * j + 2], d1 = nodes[2 * j + 3];
    double* c = &table->coef[4 * j];
    c[0] = s0;
    c[1] = d0;
    c[2] = 3.0 * (s1 - s0) - 2.0 * d0 - d1;
    c[3] = 2.0 * (s0 - s1) + d0 + d1;
  }
  table->count = count;
  table->l0 = l0;
  table->l1 = l1;
  table->inv_h = 1.0 / h;
}

namespace {
// The tables of the last few alphas, per thread (a pure function of alpha:
// rebuilding one changes no result, only time).
const DualStartTable* StartTableFor(double alpha) {
  constexpr size_t kSlots = 4;
  thread_local DualStartTable slots[kSlots];
  thread_local size_t next = 0;
  for (DualStartTable& t : slots) {
    if (t.alpha == alpha) return t.count > 0 ? &t : nullptr;
  }
  DualStartTable& t = slots[next];
  next = (next + 1) % kSlots;
  BuildDualStartTable(alpha, &t);
  return t.count > 0 ? &t : nullptr;
}
}  // namespace

SupportMapSums SumDualPowerMap(const double* p, const double* p_pow, size_t k, double alpha,
                               double nu, double nu_root, const double* weight, bool rough) {
  return HWY_DYNAMIC_DISPATCH(SumDualPowerMapImpl)(p, p_pow, k, alpha, nu, nu_root,
                                                   DualLargeC(alpha), StartTableFor(alpha), weight,
                                                   rough);
}

double ApplyDualPowerMap(const double* p, const double* p_pow, size_t k, double alpha, double nu,
                         double nu_root, double* q, bool price, const double* cost_weight) {
  return HWY_DYNAMIC_DISPATCH(ApplyDualPowerMapImpl)(p, p_pow, k, alpha, nu, nu_root,
                                                     DualLargeC(alpha), StartTableFor(alpha), q,
                                                     price, cost_weight);
}

void ChebyshevIncrements(const double* p, size_t n, double centre, double inv_half,
                         const double* coef, size_t terms, double* q) {
  HWY_DYNAMIC_DISPATCH(ChebyshevIncrementsImpl)(p, n, centre, inv_half, coef, terms, q);
}

void ChebyshevMoments(const double* p, size_t n, double centre, double inv_half, size_t terms,
                      double* moments) {
  HWY_DYNAMIC_DISPATCH(ChebyshevMomentsImpl)(p, n, centre, inv_half, terms, moments);
}

bool FindSupportMap(bool primal, double alpha, SupportMap* map) {
  if (!primal) {
    if (alpha == 1.5) *map = SupportMap::kDualSqrt;
    else if (alpha == 3.0) *map = SupportMap::kDualCubic;
    else return false;
    return true;
  }
  const double b = alpha - 1.0;
  if (b == 2.0) {
    *map = SupportMap::kPrimalRoot;
    return true;
  }
  if (b * 2.0 == -1.0) *map = SupportMap::kPrimalInverse2;
  else if (b * 3.0 == -1.0) *map = SupportMap::kPrimalInverse3;
  else if (b * 4.0 == -1.0) *map = SupportMap::kPrimalInverse4;
  else if (b * 3.0 == 1.0) *map = SupportMap::kPrimalPower3;
  else if (b * 4.0 == 1.0) *map = SupportMap::kPrimalPower4;
  else return false;  // (1/b = 2, alpha = 3/2, has a closed form)
  return true;
}

SupportMapSums SumSupportMap(SupportMap map, const double* p, const double* a, size_t k,
                             double shift, const double* weight) {
  return HWY_DYNAMIC_DISPATCH(SumSupportMapImpl)(map, p, a, k, shift, weight);
}

double ApplySupportMap(SupportMap map, const double* p, const double* a, size_t k,
                       double shift, double* q, const double* cost_weight) {
  return HWY_DYNAMIC_DISPATCH(ApplySupportMapImpl)(map, p, a, k, shift, q, cost_weight);
}
}  // namespace bd
#endif  // HWY_ONCE
