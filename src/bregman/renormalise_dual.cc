// Dual renormalisation for alpha > 1, alpha != 2 (spec section 3.2).
//
// KKT: h_p(q) = q^{alpha-2} (q - p) = nu for every kept token. Each h_p is
// increasing on q >= p, so q_i(nu) is a well-defined increasing map; the outer
// equation F(nu) = sum q_i(nu) - 1 = 0 is solved by safeguarded Newton on
// nu in (0, 1) (nu >= 1 would force every q_i >= 1).
//
// Everything is carried as the increment delta = q - p, which the solvers
// obtain with full relative precision even when it is tiny next to p; the
// divergence then uses log(p / q) = -log1p(delta / p).

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

// The per-nu constants of Increment's bracket (one pow each, not one per
// coordinate).
struct IncrementBounds {
  double nu_root;    // nu^{1/(alpha-1)}
  double width;      // alpha > 2: 2^-(alpha-2); alpha < 2: 2^((2-alpha)/(alpha-1))
  double mass_root;  // alpha < 2: (2 nu)^{1/(alpha-1)}
};
IncrementBounds BoundsFor(double alpha, double nu) {
  const double b = alpha - 1.0;
  if (alpha > 2.0) return {PowAlpha(nu, 1.0 / b), Exp2F64(-(alpha - 2.0)), 0.0};
  return {PowAlpha(nu, 1.0 / b), Exp2F64((2.0 - alpha) / b), PowF64(2.0 * nu, 1.0 / b)};
}

// delta = q - p solving (p + delta)^{alpha-2} delta = nu, for p > 0 and nu > 0,
// alpha not 3/2, 2 or 3 (those have closed forms; kernels/support_map.h).
// p_pow = p^{2-alpha} and nu_root = nu^{1/(alpha-1)} are the small- and
// large-delta asymptotes of the solution.
// warm: a start near the root (0: none), used when inside the bracket.
double Increment(double alpha, double p, double p_pow, double nu, const IncrementBounds& bounds,
                 double warm) {
  // Newton in y = log(delta) on G(y) = log((p + delta)^{alpha-2} delta / nu),
  // G' = 1 + (alpha-2) theta with theta = delta / (p + delta), so G' lies
  // between 1 and alpha - 1. Bounding log(p + delta) between max(log p, y) and
  // that plus log 2 brackets the root:
  //   alpha > 2: y0 = min(asymptotes), root in [y0 - (alpha-2) log 2, y0];
  //   alpha < 2: y0 = max(asymptotes), root in [y0, y0 + (2-alpha) log 2 / (alpha-1)].
  // G is convex in y for alpha > 2 and concave for alpha < 2, so Newton from
  // y0 (the end on the correct side) converges monotonically; the bracket is
  // only a safeguard. Steps are applied multiplicatively to delta, so delta
  // keeps full relative precision.
  const double small = nu * p_pow;
  double delta, lo, hi;
  if (alpha > 2.0) {
    delta = std::min(small, bounds.nu_root);
    hi = delta;
    lo = delta * bounds.width;
  } else {
    delta = std::max(small, bounds.nu_root);
    lo = delta;
    // The spec's bound q <= max(2p, (2 nu)^{1/(alpha-1)}) keeps hi finite as
    // alpha -> 1, where the log-space width blows up.
    hi = std::min(delta * bounds.width, std::max(p, bounds.mass_root));
    hi = std::max(hi, lo);
  }
  if (warm >= lo && warm <= hi) delta = warm;
  // A step below kQuadratic is the last: G'' = (alpha-2) theta (1 - theta)
  // is at most |alpha-2|/4 and G' at least min(1, alpha-1), so the error left
  // after it is below |alpha-2| / (8 min(1, alpha-1)) step^2, far under an
  // ulp of delta for alpha in (1, 4] (no confirming evaluation).
  constexpr double kQuadratic = 1e-9;
  for (int it = 0; it < 100; ++it) {
    const double q = p + delta;
    const double g = LogF64(PowF64(q, alpha - 2.0) * delta / nu);
    if (g == 0.0) break;
    if (g > 0.0) {
      hi = std::min(hi, delta);
    } else {
      lo = std::max(lo, delta);
    }
    const double step = g / (1.0 + (alpha - 2.0) * (delta / q));
    double next = delta * ExpFullF64(-step);
    if (!(next >= lo && next <= hi)) next = std::sqrt(lo) * std::sqrt(hi);
    const bool done = std::fabs(step) <= kQuadratic || next == delta;
    delta = next;
    if (done) break;
  }
  return delta;
}

}  // namespace

double RenormaliseDualGeneral(double alpha, const double* p, size_t k,
                              double rem, double* q, double* scratch,
                              Multiplier* hint) {
  const double b = alpha - 1.0;
  // p^{2-alpha} (0 for p = 0): the caller's when it has them.
  const double* pre = hint != nullptr ? hint->powers : nullptr;
  if (pre == nullptr) DualPowers(p, k, alpha, scratch);
  const double* p_pow = pre != nullptr ? pre : scratch;

  // alpha = 3/2 and 3 run as float64 SIMD passes (kernels/support_map.h).
  SupportMap vector_map;
  const bool vectorised = FindSupportMap(false, alpha, &vector_map);
  // Otherwise d delta / d nu = 1 / h'(q) = delta / (nu (1 + (alpha-2) theta)),
  // from h'(q) = q^{alpha-3} ((alpha-1) q - (alpha-2) p) and q^{alpha-2} delta = nu.
  // Over p[from..to): *sum = init + sum of the increments q - p, *slope =
  // sum of dq/dnu.
  double warm_nu = 0.0;  // the nu of the increments in q (0: none yet)
  auto sums_over = [&](size_t from, size_t to, double nu, double init, double* sum_out,
                       double* slope_out) {
    if (vectorised) {
      const SupportMapSums sums = SumSupportMap(vector_map, p + from, p_pow + from, to - from, nu);
      *sum_out = init + sums.increment;
      *slope_out = sums.slope;
      return;
    }
    const IncrementBounds bounds = BoundsFor(alpha, nu);
    const double nu_root = bounds.nu_root;
    // A pass over the whole support keeps its increments in q (rewritten by
    // the final pass below): the next pass starts each coordinate's Newton
    // from there, moved by d log delta / d log nu = 1 / G' to first order,
    // once nu has moved by under 10 % (Newton's later steps).
    const bool whole = from == 0 && to == k;
    const double moved = warm_nu > 0.0 ? LogF64(nu / warm_nu) : HUGE_VAL;
    const bool warm = whole && std::fabs(moved) < 0.1;
    double sum = init;
    double slope = 0.0;
    for (size_t i = from; i < to; ++i) {
      double delta;
      if (p[i] > 0.0) {
        double start = 0.0;
        if (warm) {
          const double prev = q[i];
          start = prev * (1.0 + moved / (1.0 + (alpha - 2.0) * (prev / (p[i] + prev))));
        }
        delta = Increment(alpha, p[i], p_pow[i], nu, bounds, start);
        if (whole) q[i] = delta;
        const double theta = delta / (p[i] + delta);
        slope += delta / (nu * (1.0 + (alpha - 2.0) * theta));
      } else {
        delta = nu_root;  // q^{alpha-1} = nu
        slope += delta / (nu * b);
      }
      sum += delta;
    }
    if (whole) warm_nu = nu;
    *sum_out = sum;
    *slope_out = slope;
  };
  // Without a hint, start from the first-order guess rem / F'(0).
  const double nu = SolveMultiplier(
      p, k, rem, sums_over,
      [&] {
        // F'(0) = sum p^{2-alpha}: only for a start without hint bounds.
        const double slope_at_zero = SupportMass(p_pow, k);
        return slope_at_zero > 0.0 ? rem / slope_at_zero : 0.0;
      },
      0.0, 1.0, hint);

  const bool last_only = hint != nullptr && hint->last_only;
  if (vectorised) {
    const size_t first = last_only ? k - 1 : 0;
    const double cost = ApplySupportMap(vector_map, p + first, p_pow + first, k - first, nu,
                                        q + first);
    return last_only ? NAN : cost;
  }
  const IncrementBounds bounds = BoundsFor(alpha, nu);
  const double nu_root = bounds.nu_root;
  // The final increments start cold: q and the cost are then a function of
  // nu alone (a probe priced again at its own nu gets the very same bits).
  double cost = 0.0;
  for (size_t i = last_only ? k - 1 : 0; i < k; ++i) {
    if (p[i] > 0.0) {
      const double delta = Increment(alpha, p[i], p_pow[i], nu, bounds, 0.0);
      q[i] = p[i] + delta;
      if (!last_only) cost += DivergenceByLogRatio(alpha, q[i], -Log1pF64(delta / p[i]));
    } else {
      q[i] = nu_root;
      cost += DivergenceToZero(alpha, nu_root);  // d(0, q)
    }
  }
  return last_only ? NAN : cost;
}

}  // namespace bregman_detail
}  // namespace bd
