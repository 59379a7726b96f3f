// Internal: a bracketed, safeguarded Newton iteration for the scalar
// multiplier equations of the renormalisation maps.
#pragma once

#include <cmath>

namespace bd {
namespace bregman_detail {

// Finds the root of an increasing function f on (lo, hi), given f(lo) <= 0 <=
// f(hi) (neither end is evaluated, so f may be infinite or undefined there).
// eval(x, &f, &df) fills f(x) and f'(x) > 0. Starts from x0 in (lo, hi).
//
// Newton steps are taken while they land strictly inside the bracket and at
// least halve the step before last; otherwise the bracket is bisected
// (Numerical Recipes' rtsafe rule). The bracket shrinks every iteration, so
// convergence is guaranteed; on the smooth monotone equations here Newton is
// quadratic after a few steps. A Newton step of relative size below
// newton_tol ends the iteration: quadratic convergence leaves an error of
// order step^2, far below rounding. A bisection step ends it only once the
// bracket itself is a few ulp wide.
template <class Eval>
double SafeguardedNewton(const Eval& eval, double lo, double hi, double x0,
                         double newton_tol = 1e-12, int max_iter = 200) {
  constexpr double kBracketTol = 4.4e-16;
  double x = x0;
  double step_before_last = hi - lo;
  double last_step = step_before_last;
  for (int it = 0; it < max_iter; ++it) {
    double f = 0.0, df = 0.0;
    eval(x, &f, &df);
    if (f == 0.0) return x;
    if (f < 0.0) {
      lo = x;
    } else {
      hi = x;
    }
    double next = x - f / df;
    // NaN (from an infinite f or df) fails every comparison: bisect.
    const bool newton_ok = next > lo && next < hi &&
                           std::fabs(2.0 * f) <= std::fabs(step_before_last * df);
    step_before_last = last_step;
    if (newton_ok) {
      last_step = next - x;
      if (std::fabs(last_step) <= newton_tol * std::fabs(next)) return next;
    } else {
      next = lo + 0.5 * (hi - lo);
      last_step = next - x;
      if (hi - lo <= kBracketTol * std::fabs(next)) return next;
    }
    x = next;
  }
  return x;
}

}  // namespace bregman_detail
}  // namespace bd
