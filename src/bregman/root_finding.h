// Internal: a bracketed, safeguarded Newton iteration for the scalar
// multiplier equations of the renormalisation maps.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include "kernels/det_math.h"

namespace bd {
namespace bregman_detail {

// Finds the root of an increasing function f on (lo, hi), given f(lo) <= 0 <=
// f(hi) (neither end is evaluated, so f may be infinite or undefined there),
// with lo >= 0. eval(x, &f, &df) fills f(x) and f'(x) > 0. Starts from x0 in
// (lo, hi).
//
// Newton steps are taken while they land strictly inside the bracket and at
// least halve the step before last (Numerical Recipes' rtsafe rule);
// otherwise the bracket is bisected, geometrically while it spans more than a
// factor 4 (multipliers range over many orders of magnitude, and an
// arithmetic midpoint would then cost one iteration per factor 2). The
// bracket shrinks every iteration, so convergence is guaranteed; on the
// smooth monotone equations here Newton is quadratic after a few steps.
//
// A Newton step below newton_tol * |x| ends the iteration: quadratic
// convergence leaves an error of order step^2, far below rounding (and a
// step below half an ulp would not move x at all). So does a step whose
// successor is predicted below kPredictedTol * |x|: two Newton steps in a
// row measure the quadratic constant c = |s_n| / s_{n-1}^2, the error left
// after x_n - s_n is about c s_n^2, and when that is far below the tolerance
// the confirming evaluation (a pass over the support) is skipped. A
// bisection ends it only once the bracket itself is a few ulp wide.
//
// curvature: in, a bound on c from a solve of a neighbouring equation (0:
// none), which lets the first Newton step stop on the same prediction
// (a start already within ~1e-9 of the root then costs one evaluation); out,
// the c this solve measured (0 if it took fewer than two Newton steps).
//
// power_steps: a monotone approach (f keeps its sign across a Newton step,
// the tangent falling short of the root on a curved f) far from the root (a
// step above kPowerStepFrom |x|) steps instead on the power law f' ~ x^(g-1) that the
// last two slopes measure: the root of f(x) + f'(x) x ((y / x)^g - 1) / g,
// y = x (1 - g f / (x f'))^(1/g) (g = 1 is Newton's step, g -> 0 Newton's in
// log x). A cold multiplier solve (f = log sum q, a mix of linear and
// power-law terms in nu, from a first-order guess) then saves an evaluation
// or two; solves that start near their root have no use for it.
//
// settled(x, f, df): called after each evaluation; true ends the iteration
// at x itself (a caller that needs only which side of some x the root lies
// on: f > 0 puts it below x, f < 0 above).
//
// rough_start: the start may be far from the root, and eval may then
// approximate. eval(x, &f, &df, rough, &f_error) (the 5-argument form) is
// asked for a rough evaluation at the start when rough_start, and after each
// step above kRoughStepFrom |x| until the first exact one; it writes
// f_error > 0 when it approximated (|f - f(x)| <= f_error), else 0. A rough
// evaluation moves the bracket only where its sign is sure (|f| > f_error;
// otherwise the next one is exact), settles only then too, and never ends
// the iteration: its step only brings the exact evaluations near the root.
// Two rough Newton steps in a row measure Newton's constant (while their
// steps stand well above the rough error), which lets the first exact
// evaluation stop on its own predicted error, with a margin (a cold
// multiplier solve of the general dual: four rough evaluations at half the
// cost and one exact, instead of five exact ones).
//
// max_iter bounds the evaluations; a solve that reaches it returns its last
// iterate, not a root, and counts itself in *exhausted (null: uncounted).
//
struct NeverSettled {
  bool operator()(double, double, double) const { return false; }
};

// eval(x, &f, &df) or eval(x, &f, &df, rough, &f_error) (see above).
template <class Eval>
inline void EvaluateAt(const Eval& eval, double x, bool rough, double* f, double* df,
                       double* f_error) {
  *f_error = 0.0;
  if constexpr (std::is_invocable_v<const Eval&, double, double*, double*, bool, double*>) {
    eval(x, f, df, rough, f_error);
  } else {
    (void)rough;
    eval(x, f, df);
  }
}
// The iteration's tolerances (see above).
namespace newton {
constexpr double kBracketTol = 4.4e-16;
constexpr double kPredictedTol = 1e-15;
constexpr double kPowerStepFrom = 1e-3;
// Rough evaluations while the last step exceeds this (relative): the first
// exact one then lands within ~c 1e-4 of the root.
constexpr double kRoughStepFrom = 1e-2;
// The margin on Newton's constant measured by rough steps, for the first
// exact evaluation's predicted stop.
constexpr double kRoughCurvatureMargin = 10.0;

// What the iteration remembers from one evaluation to the next.
struct History {
  double step_before_last;
  double last_step;
  double last_newton = 0.0;  // |the previous step| when it was an exact Newton step, else 0
  bool last_was_newton = false;  // the previous step was Newton's (exact or rough)
  bool first = true;             // the first exact evaluation
  double last_f = HUGE_VAL;      // f at the last evaluation
  double last_x = 0.0, last_df = 0.0;  // where it was, and f' there
  double last_rough = 0.0;  // |the previous step| when it was a rough Newton step, else 0
  double rough_c = 0.0;     // Newton's constant measured by two rough steps (0: none)
};

// Whether Newton's step to next is taken: inside the bracket (NaN, from an
// infinite f or df, fails every comparison) and shrinking fast enough (half
// the step before last), or where f has halved since the last evaluation: a
// start far on a concave (or convex) side converges monotonically, with
// steps that grow at first, and a bisection of a bracket spanning decades
// would throw it far away.
inline bool NewtonStepTaken(const History& h, double lo, double hi, double f, double df,
                            double next) {
  return next > lo && next < hi &&
         (std::fabs(2.0 * f) <= std::fabs(h.step_before_last * df) ||
          std::fabs(2.0 * f) <= std::fabs(h.last_f));
}

// Whether the iteration ends at x - step on the predicted error of that
// iterate: after two exact Newton steps (their quadratic constant), at the
// first exact evaluation after two rough steps (theirs, with a margin), or
// at the first one with the caller's bound c_hint. Writes the constant
// measured to *curvature. A rough evaluation never ends it: its steps measure
// Newton's constant for the first exact one (a step far below the rough
// error's would measure the error instead).
inline bool StopsOnPrediction(History& h, bool approximate, bool newton_ok, double x, double df,
                              double step, double f_error, double c_hint, double* curvature) {
  if (approximate) {
    if (newton_ok && h.last_rough > 0.0 && std::fabs(step) <= 1e-1 * h.last_rough &&
        std::fabs(step) > 30.0 * f_error / df) {
      h.rough_c = std::fabs(step) / (h.last_rough * h.last_rough);
    }
    return false;
  }
  if (newton_ok && h.first && h.rough_c > 0.0 &&
      kRoughCurvatureMargin * h.rough_c * step * step <= kPredictedTol * std::fabs(x)) {
    if (curvature != nullptr) *curvature = h.rough_c;
    return true;
  }
  if (newton_ok && h.last_newton > 0.0 && std::fabs(step) <= 1e-3 * h.last_newton) {
    const double c = std::fabs(step) / (h.last_newton * h.last_newton);
    if (curvature != nullptr) *curvature = c;
    return c * step * step <= kPredictedTol * std::fabs(x);
  }
  return newton_ok && h.first && c_hint > 0.0 &&
         c_hint * step * step <= kPredictedTol * std::fabs(x);
}

// The power-law step that replaces Newton's on a monotone approach far from
// the root (see power_steps above), where the last two slopes measure the
// exponent; writes it to *next and returns true where it lies in the bracket
// and differs from Newton's.
inline bool PowerStep(const History& h, double lo, double hi, double x, double f, double df,
                      double step, double* next) {
  if (!(h.last_was_newton && (f < 0.0) == (h.last_f < 0.0) &&
        std::fabs(step) > kPowerStepFrom * std::fabs(x) && x > 0.0 && h.last_x > 0.0 &&
        h.last_df > 0.0 && x != h.last_x)) {
    return false;
  }
  const double g = 1.0 + LogF64(df / h.last_df) / LogF64(x / h.last_x);
  const double u = -step / x;  // Newton's relative step
  double power_next = *next;
  if (std::fabs(g) < 1e-6) {  // (a pure power law measures g = 0 to rounding, of either sign)
    power_next = x * ExpFullF64(u);
  } else if (g > 0.0 && g <= 4.0 && 1.0 + g * u > 0.0) {
    power_next = x * PowF64(1.0 + g * u, 1.0 / g);
  }
  if (!(power_next > lo && power_next < hi && power_next != *next)) return false;
  *next = power_next;
  return true;
}
}  // namespace newton

template <class Eval, class Settled = NeverSettled>
double SafeguardedNewton(const Eval& eval, double lo, double hi, double x0,
                         double* curvature = nullptr, double newton_tol = 1e-12,
                         int max_iter = 200, const Settled& settled = Settled(),
                         bool power_steps = false, bool rough_start = false,
                         size_t* exhausted = nullptr) {
  using namespace newton;
  const double c_hint = curvature != nullptr ? *curvature : 0.0;
  if (curvature != nullptr) *curvature = 0.0;
  double x = x0;
  History h;
  h.step_before_last = hi - lo;
  h.last_step = h.step_before_last;
  bool rough = rough_start;  // (until the first exact evaluation)
  for (int it = 0; it < max_iter; ++it) {
    double f = 0.0, df = 0.0, f_error = 0.0;
    EvaluateAt(eval, x, rough, &f, &df, &f_error);
    const bool approximate = f_error > 0.0;
    const bool sure = !approximate || std::fabs(f) > f_error;  // of f's sign
    if (sure && (f == 0.0 || settled(x, f, df))) return x;
    // (A rough f within its error of 0: its small step is taken without
    // moving the bracket; the next evaluation is exact.)
    if (sure) (f < 0.0 ? lo : hi) = x;
    const double step = f / df;
    if (!approximate && std::fabs(step) <= newton_tol * std::fabs(x)) return x - step;
    rough = approximate && sure && std::fabs(step) > kRoughStepFrom * std::fabs(x);
    double next = x - step;
    const bool newton_ok = NewtonStepTaken(h, lo, hi, f, df, next);
    if (StopsOnPrediction(h, approximate, newton_ok, x, df, step, f_error, c_hint, curvature)) {
      return next;
    }
    const bool power_step = power_steps && newton_ok && PowerStep(h, lo, hi, x, f, df, step, &next);
    if (!approximate) h.first = false;
    h.step_before_last = h.last_step;
    if (!newton_ok) {
      next = lo > 0.0 && hi > 4.0 * lo ? std::sqrt(lo) * std::sqrt(hi) : lo + 0.5 * (hi - lo);
      if (hi - lo <= kBracketTol * std::fabs(next)) return next;
    }
    // (Quadratic convergence measures c over two Newton steps taken: after a
    // power step the error left is not Newton's.)
    h.last_newton = newton_ok && !power_step && !approximate ? std::fabs(step) : 0.0;
    h.last_was_newton = newton_ok && !power_step;
    h.last_rough = newton_ok && !power_step && approximate ? std::fabs(step) : 0.0;
    h.last_f = f;
    h.last_x = x;
    h.last_df = df;
    h.last_step = next - x;
    x = next;
  }
  if (exhausted != nullptr) ++*exhausted;
  return x;
}

}  // namespace bregman_detail
}  // namespace bd
