// Primal renormalisation for general alpha != 1 (spec section 3.1).
//
// KKT: phi'(q_i) = phi'(p_i) + nu, i.e. q_i = (p_i^b + b nu)^{1/b} with
// b = alpha - 1. Evaluated as
//   t_i = b nu p_i^{-b},  l_i = log(q_i / p_i) = log1p(t_i) / b,
// which stays exact as b -> 0 (it tends to l_i = nu, the KL map), so no
// switch to KL is needed near alpha = 1. F(nu) = sum q_i(nu) - 1 is
// increasing with F' = sum q_i^{2-alpha}, convex for alpha < 2 and concave
// for alpha > 2. The alphas with algebraic maps (1/b = +-2..4, b = 2) run as
// SIMD passes of those forms, every other alpha as a SIMD pass of log1p and
// expm1 (kernels/support_map.h), the final q and cost too.

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/renormalise.h"
#include "kernels/det_math.h"
#include "kernels/support_map.h"

namespace bd {
namespace bregman_detail {
namespace {

// One kept token at the zero-probability gain r = (b nu)^{1/b} (b >= 1 here):
// q^b = p^b + r^b, i.e. q = max(p, r) (1 + t)^{1/b} with t = (min / max)^b,
// which needs no power of p or nu and so no double range for them.
struct PrimalAtGain {
  double increment;  // q - p, as a sum of nonnegative parts
  double log_ratio;  // log(q / p) (+inf for p = 0)
  double slope;      // dq / d log r = q r^b / q^b
};
PrimalAtGain PrimalTokenAtGain(double b, double p, double r) {
  if (!(p > 0.0)) return {r, HUGE_VAL, r};
  if (p >= r) {
    const double t = ExpFullF64(b * LogF64(r / p));
    const double l = Log1pF64(t) / b;
    const double increment = p * Expm1F64(l);
    return {increment, l, (p + increment) * (t / (1.0 + t))};
  }
  const double t = ExpFullF64(b * LogF64(p / r));
  const double l = Log1pF64(t) / b;  // log(q / r)
  return {(r - p) + r * Expm1F64(l), LogF64(r / p) + l, r * ExpFullF64(l) / (1.0 + t)};
}

// The primal multiplier in log scale (see MultiplierBelowRange; b >= 1
// there): r >= rem / k stays in range while nu = r^b / b does not. Solves
// log(sum q) = 0 for log r by safeguarded Newton on [log(rem / k), 0] (at
// r = rem / k each increment is at most r, since the b-norm of (p, r) is at
// most p + r for b >= 1; at r = 1 every q >= 1). Scalar and rare.
double RenormalisePrimalLogScale(double alpha, const double* p, size_t k, double rem, double* q,
                                 Multiplier* hint) {
  const double b = alpha - 1.0;
  int evaluations = 0;
  const double lo = LogF64(rem / static_cast<double>(k));
  const double log_r = SolveLogGain(
      k, rem,
      [&](size_t i, double, double r_at, double* slope) {
        const PrimalAtGain at = PrimalTokenAtGain(b, p[i], r_at);
        *slope = at.slope;
        return at.increment;
      },
      lo - 1e-9 * std::fabs(lo), 0.0, lo, &evaluations, ExhaustedSolves(hint),
      hint != nullptr ? hint->probes : nullptr);
  const double r = ExpFullF64(log_r);
  double cost = 0.0;
  for (size_t i = 0; i < k; ++i) {
    const PrimalAtGain at = PrimalTokenAtGain(b, p[i], r);
    q[i] = p[i] + at.increment;
    cost += DivergenceAbove(alpha, p[i], q[i], at.log_ratio);
  }
  SetLogScaleOutputs(hint, ExpFullF64(b * log_r) / b, evaluations);
  ChargeLogScale(hint, k);
  return hint != nullptr && hint->last_only ? NAN : cost;
}

}  // namespace

// d(q, p) = p^alpha g(L), L = log(q / p) > 0, when p^alpha may underflow
// while g(L) is large. Past alpha L = 700 (where g may overflow) it is
// d(q, 0) [1 - alpha r^{alpha-1} + (alpha-1) r^alpha], r = p / q = e^{-L}:
// the last term is below e^{-700}, and with x = (alpha-1) L the rest is
// -expm1(-x) - (alpha-1) e^{-x}, exact also for alpha near 1 (d(q, 0) alone
// is a relative alpha e^{-x} off: 999 for 502 at alpha 1.001, p = e^-700,
// q = 1). It rounds to d(q, 0) once x passes ~38.
double DivergenceAbove(double alpha, double p, double q, double log_ratio) {
  if (!(p > 0.0)) return DivergenceFromZero(alpha, q);
  if (alpha * log_ratio > 700.0) {
    const double x = (alpha - 1.0) * log_ratio;
    return DivergenceFromZero(alpha, q) * (-Expm1F64(-x) - (alpha - 1.0) * ExpFullF64(-x));
  }
  const double p_pow = PowAlpha(p, alpha);
  const double g = ScaledDivergence(alpha, log_ratio);
  if (p_pow >= DBL_MIN || !(g > 0.0)) return p_pow * g;
  return ExpFullF64(alpha * LogF64(p) + LogF64(g));
}

double RenormalisePrimalGeneral(double alpha, const double* p, size_t k,
                                double rem, double* q, double* scratch,
                                Multiplier* hint) {
  const double b = alpha - 1.0;
  if (MultiplierBelowRange(alpha, rem, k)) {
    if (LogScaleRefused(hint, p, k, q)) return hint->last_only ? NAN : 0.0;
    return RenormalisePrimalLogScale(alpha, p, k, rem, q, hint);
  }
  // pow_b[i] = p_i^b, so that q_i^b = p_i^b + b nu. Stored this way round
  // (not p^{-b}) so that a tiny p with large alpha underflows to 0 and is
  // treated as the zero-probability token it effectively is, instead of
  // overflowing.
  const double* pre = hint != nullptr ? hint->powers : nullptr;
  // The algebraic forms run as float64 SIMD passes (kernels/support_map.h).
  SupportMap vector_map;
  const bool vectorised = FindSupportMap(true, alpha, &vector_map);
  if (pre == nullptr) PrimalPowers(p, k, b, scratch);
  const double* pow_b = pre != nullptr ? pre : scratch;
  // The smallest p^b for b < 0: the largest p's (p descending; the hint's
  // powers are only those of the tokens the solver maps one by one).
  const double min_pow_b = b < 0.0 ? (pre != nullptr ? PrimalPower(p[0], b) : SupportMin(pow_b, k))
                                   : HUGE_VAL;
  SupportSketch& sketch = *SketchFor(true, alpha, p, k, hint);
  // F'(0) over the positive p: sum p_i^{2-alpha} = p_i / p_i^b (only for a
  // start without hint bounds; on the sketch: a start needs no more).
  auto slope_at_zero = [&] {
    auto term = [](double pp, double pw) { return pp > 0.0 && pw > 0.0 ? pp / pw : 0.0; };
    return SketchedSum(
        sketch, k, [&](size_t l) { return term(sketch.node_p()[l], sketch.node_pow()[l]); },
        [&](size_t i) { return term(p[i], pow_b[i]); });
  };

  // Bracket (spec 3.1): alpha > 1: at nu = k^{-b}/b every q_i >= 1/k.
  // alpha < 1: q of the largest p blows up as nu -> p_max^b / (-b).
  const double hi = b > 0.0 ? PowF64(static_cast<double>(k), -b) / b
                      : min_pow_b / (-b);

  // q^b - p^b = b nu. For alpha > 1 a multiplier below DBL_MIN counts as
  // DBL_MIN: the root is above 1e-290 here (roots below the range take the
  // log-scale path), but bisection toward the bracket's low end reaches
  // subnormals and 0, where s / p^b = 0 / 0 at a p^b that underflowed would
  // make the map NaN.
  auto Shift = [b](double nu) { return b > 0.0 ? b * std::max(nu, DBL_MIN) : b * nu; };
  // Over p[from..to): *sum = init + sum of the increments q - p, *slope =
  // sum of dq/dnu (tokens with p^b = 0 gain (b nu)^{1/b}).
  // sketched: the support's sketch (SupportSketch::kError).
  // (No short form of the primal maps: rough requests are evaluated exactly.)
  auto sums_over = [&](size_t from, size_t to, double nu, double init, double* sum_out,
                       double* slope_out, bool sketched, bool /*rough*/) {
    const double shift = Shift(nu);  // q^b - p^b
    // Other alphas: q/p - 1 = (1 + x)^{1/b} - 1 = expm1(log1p(x) / b), x = s / p^b,
    // on float64 lanes; tokens with p^b = 0 gain (b nu)^{1/b} each.
    const double z = !vectorised && b > 0.0 ? PowAlpha(shift, 1.0 / b) : 0.0;
    auto sum = [&](const double* pp, const double* pw, size_t n, const double* weight) {
      return vectorised ? SumSupportMap(vector_map, pp, pw, n, shift, weight)
                        : SumPrimalPowerMap(pp, pw, n, b, shift, z, z / shift, weight);
    };
    return SumsOverSupport(sketch, p, pow_b, k, from, to, init, sketched, sum, sum_out, slope_out,
                           PrimalPoleLimit(b, shift), hint);
  };
  // Without a hint, the first-order guess nu0 = rem / F'(0): right of the
  // root when F is convex (alpha < 2) and left of it when concave (alpha > 2),
  // so Newton from there converges monotonically.
  const double nu = SolveMultiplier(
      p, k, rem, sums_over,
      [&] {
        const double slope = slope_at_zero();
        return slope > 0.0 ? rem / slope : 0.0;
      },
      MultiplierFloor(true, alpha, rem, k), hi, 0.0, hint);

  const double shift = Shift(nu);
  const double zero_mass = !vectorised && b > 0.0 ? PowAlpha(shift, 1.0 / b) : 0.0;
  const double zero_cost = !vectorised ? DivergenceFromZero(alpha, zero_mass) : 0.0;
  auto apply = [&](const double* pp, const double* pw, size_t n, double* qq, bool price,
                   const double* weight) {
    return vectorised ? ApplySupportMap(vector_map, pp, pw, n, shift, qq, weight)
                      : ApplyPrimalPowerMap(pp, pw, n, alpha, shift, zero_mass, zero_cost, qq,
                                            price, weight);
  };
  return FinishSolve(sketch, p, pow_b, k, q, hint, apply, PrimalPoleLimit(b, shift));
}

}  // namespace bregman_detail
}  // namespace bd
