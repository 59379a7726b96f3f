// Dual renormalisation for alpha > 1, alpha != 2 (spec section 3.2).
//
// KKT: h_p(q) = q^{alpha-2} (q - p) = nu for every kept token. Each h_p is
// increasing on q >= p, so q_i(nu) is a well-defined increasing map; the outer
// equation F(nu) = sum q_i(nu) - 1 = 0 is solved by safeguarded Newton on
// nu in (0, 1) (nu >= 1 would force every q_i >= 1).
//
// Each coordinate's q_i(nu) is a float64 SIMD map (kernels/support_map.h):
// algebraic at alpha = 3/2 and 3, Halley steps on float64 lanes otherwise.
// Both carry the increment q - p with full relative precision even when it
// is tiny next to p, and give the same bits on every target.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/renormalise.h"
#include "kernels/det_math.h"
#include "kernels/support_map.h"

namespace bd {
namespace bregman_detail {
namespace {

// The multiplier in log scale (see MultiplierBelowRange): each increment
// from (alpha-2) log(p + d) + log d = (alpha-1) log r by Newton in log d
// (bracketed between the asymptotes), and log r by safeguarded Newton on
// log(sum q). d comes out within ~|log d| 1e-16 (e^{log d}).
double LogIncrement(double alpha, double p, double log_r, double* slope) {
  const double b = alpha - 1.0;
  if (!(p > 0.0)) {  // q^{alpha-1} = nu: q = r
    const double d = ExpFullF64(log_r);
    *slope = d;  // d q / d log r
    return d;
  }
  const double lp = LogF64(p);
  const double small = b * log_r + (2.0 - alpha) * lp;  // log(nu p^{2-alpha})
  const double large = log_r;                           // log(nu^{1/(alpha-1)})
  double y, lo, hi;
  if (alpha > 2.0) {
    y = std::min(small, large);
    hi = y;
    lo = y - (alpha - 2.0) * det_math::kLn2;
  } else {
    y = std::max(small, large);
    lo = y;
    hi = y + (2.0 - alpha) * det_math::kLn2 / b;
  }
  for (int it = 0; it < 200; ++it) {
    const double d = ExpFullF64(y);
    const double theta = d / (p + d);
    // (alpha-2) log(p + d) + log d - (alpha-1) log r, log(p + d) = log p + log1p(d / p)
    const double g = (alpha - 2.0) * (lp + Log1pF64(d / p)) + y - b * log_r;
    if (g == 0.0) break;
    (g > 0.0 ? hi : lo) = y;
    const double step = g / (1.0 + (alpha - 2.0) * theta);
    double next = y - step;
    if (!(next >= lo && next <= hi)) next = 0.5 * (lo + hi);
    const bool done = std::fabs(step) <= 1e-15 * std::max(1.0, std::fabs(y)) || next == y;
    y = next;
    if (done) break;
  }
  const double d = ExpFullF64(y);
  *slope = b * d / (1.0 + (alpha - 2.0) * (d / (p + d)));
  return d;
}

double RenormaliseDualLogScale(double alpha, const double* p, size_t k, double rem, double* q,
                               Multiplier* hint) {
  int evaluations = 0;
  // r >= rem / k; r = 1 gives every q >= 1 (sum >= k >= 2).
  const double start = std::max(LogF64(rem / static_cast<double>(k)), -740.0);
  const double log_r = SolveLogGain(
      k, rem,
      [&](size_t i, double log_r_at, double, double* slope) {
        return LogIncrement(alpha, p[i], log_r_at, slope);
      },
      -745.0, 0.0, start > -745.0 && start < 0.0 ? start : -370.0, &evaluations,
      ExhaustedSolves(hint), hint != nullptr ? hint->probes : nullptr);
  double cost = 0.0;
  for (size_t i = 0; i < k; ++i) {
    double unused;
    const double d = LogIncrement(alpha, p[i], log_r, &unused);
    q[i] = p[i] + d;
    cost += p[i] > 0.0 ? DivergenceByLogRatio(alpha, q[i], -Log1pF64(d / p[i]))
                       : DivergenceToZero(alpha, q[i]);
  }
  SetLogScaleOutputs(hint, ExpFullF64((alpha - 1.0) * log_r), evaluations);
  ChargeLogScale(hint, k);
  return hint != nullptr && hint->last_only ? NAN : cost;
}

}  // namespace

double RenormaliseDualGeneral(double alpha, const double* p, size_t k,
                              double rem, double* q, double* scratch,
                              Multiplier* hint) {
  const double b = alpha - 1.0;
  if (MultiplierBelowRange(alpha, rem, k)) {
    if (LogScaleRefused(hint, p, k, q)) return hint->last_only ? NAN : 0.0;
    return RenormaliseDualLogScale(alpha, p, k, rem, q, hint);
  }
  // p^{2-alpha} (0 for p = 0): the caller's when it has them.
  const double* pre = hint != nullptr ? hint->powers : nullptr;
  if (pre == nullptr) DualPowers(p, k, alpha, scratch);
  const double* p_pow = pre != nullptr ? pre : scratch;

  // alpha = 3/2 and 3 have algebraic forms, every other alpha the Halley
  // map; both run as float64 SIMD passes (kernels/support_map.h).
  SupportMap vector_map;
  const bool algebraic = FindSupportMap(false, alpha, &vector_map);
  // Over p[from..to): *sum = init + sum of the increments q - p, *slope =
  // sum of dq/dnu.
  // sketched: the support's sketch (SupportSketch::kError).
  SupportSketch& sketch = *SketchFor(false, alpha, p, k, hint);
  auto sums_over = [&](size_t from, size_t to, double nu, double init, double* sum_out,
                       double* slope_out, bool sketched, bool rough) {
    const double nu_root = PowAlpha(nu, 1.0 / b);
    auto sum = [&](const double* pp, const double* pw, size_t n, const double* weight) {
      return algebraic ? SumSupportMap(vector_map, pp, pw, n, nu, weight)
                       : SumDualPowerMap(pp, pw, n, alpha, nu, nu_root, weight, rough);
    };
    return SumsOverSupport(sketch, p, p_pow, k, from, to, init, sketched, sum, sum_out, slope_out,
                           HUGE_VAL, hint);
  };
  // Without a hint, start from the first-order guess rem / F'(0).
  const double nu = SolveMultiplier(
      p, k, rem, sums_over,
      [&] {
        // F'(0) = sum p^{2-alpha} (on the sketch: a start needs no more):
        // only for a start without hint bounds.
        const double slope_at_zero = SketchedSum(
            sketch, k, [&](size_t l) { return sketch.node_pow()[l]; },
            [&](size_t i) { return p_pow[i]; });
        return slope_at_zero > 0.0 ? rem / slope_at_zero : 0.0;
      },
      MultiplierFloor(false, alpha, rem, k), 1.0, algebraic ? 0.0 : kDualRoughError, hint);

  const double nu_root = PowAlpha(nu, 1.0 / b);
  auto apply = [&](const double* pp, const double* pw, size_t n, double* qq, bool price,
                   const double* weight) {
    return algebraic ? ApplySupportMap(vector_map, pp, pw, n, nu, qq, weight)
                     : ApplyDualPowerMap(pp, pw, n, alpha, nu, nu_root, qq, price, weight);
  };
  return FinishSolve(sketch, p, p_pow, k, q, hint, apply);
}

}  // namespace bregman_detail
}  // namespace bd
