// SafeguardedNewton (src/bregman/root_finding.h) against roots known in
// closed form: convergence, the quadratic constant it measures, and the
// one-evaluation stop a neighbour's constant allows.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "bregman/root_finding.h"

namespace {

using bd::bregman_detail::SafeguardedNewton;

// f(x) = log(x^m / r): increasing on (0, inf), root r^{1/m}. Newton's error
// map e' = (f'' / 2f') e^2 = -(1 / 2x) e^2, so c = 1 / (2 root) for every m.
struct PowerLog {
  double m, r;
  int* evals;
  void operator()(double x, double* f, double* df) const {
    ++*evals;
    *f = m * std::log(x) - std::log(r);
    *df = m / x;
  }
  double Root() const { return std::pow(r, 1.0 / m); }
};

// f(x) = x^3 - r (convex): root cbrt(r), c = f'' / 2f' = 1 / root.
struct Cubic {
  double r;
  int* evals;
  void operator()(double x, double* f, double* df) const {
    ++*evals;
    *f = x * x * x - r;
    *df = 3.0 * x * x;
  }
  double Root() const { return std::cbrt(r); }
};

// The roots are limited by the rounding of f itself (log r is ~14 for the
// smallest r here, and 1/m amplifies it): 1e-14 relative covers every case.
constexpr double kRootTol = 1e-14;

template <class F>
void CheckSolves(const F& f, double root) {
  CAPTURE(root);
  // From far away: bracketed, converges to the root; the measured constant
  // is Newton's (within the factor a finite step's estimate allows).
  double c = 0.0;
  const double x = SafeguardedNewton(f, root * 1e-3, root * 1e3, root * 7.0, &c);
  CHECK(std::fabs(x - root) <= kRootTol * root);
  REQUIRE(c > 0.0);
  CHECK(c * root > 0.1);
  CHECK(c * root < 10.0);

  // From 1e-9 off the root: without a constant, two evaluations (the step
  // is not yet below tolerance); with the measured one (times a margin),
  // one, and the same root.
  for (double off : {1e-9, -3e-10, 2e-11}) {
    const double x0 = root * (1.0 + off);
    int& evals = *f.evals;
    evals = 0;
    double none = 0.0;
    const double plain = SafeguardedNewton(f, root * 0.5, root * 2.0, x0, &none);
    const int plain_evals = evals;
    evals = 0;
    double hinted_c = 100.0 * c;
    const double hinted = SafeguardedNewton(f, root * 0.5, root * 2.0, x0, &hinted_c);
    CAPTURE(off);
    CHECK(plain_evals == 2);
    CHECK(evals == 1);
    CHECK(std::fabs(hinted - root) <= kRootTol * root);
    CHECK(std::fabs(plain - root) <= kRootTol * root);
    CHECK(std::fabs(hinted - plain) <= 4.0 * std::nextafter(plain, INFINITY) - 4.0 * plain);
  }

  // A start too far for one step to be exact: the constant does not stop
  // it early (it takes the usual path and converges).
  int& evals = *f.evals;
  evals = 0;
  double hinted_c = 100.0 * c;
  const double x2 = SafeguardedNewton(f, root * 0.5, root * 2.0, root * (1.0 + 1e-4), &hinted_c);
  CHECK(evals > 1);
  CHECK(std::fabs(x2 - root) <= kRootTol * root);
}

}  // namespace

TEST_CASE("SafeguardedNewton: roots, the measured quadratic constant, the one-step stop") {
  int evals = 0;
  for (double m : {1.0, 2.0, 0.5}) {
    for (double r : {1e-6, 0.3, 42.0}) {
      const PowerLog f{m, r, &evals};
      CheckSolves(f, f.Root());
    }
  }
  for (double r : {1e-9, 2.0, 1e6}) {
    const Cubic f{r, &evals};
    CheckSolves(f, f.Root());
  }
}

TEST_CASE("SafeguardedNewton: a start far on the concave side keeps its Newton steps") {
  // f(x) = cbrt(x) - cbrt(r) on (0, 1): from x0 = r / 30 Newton rises
  // monotonically toward r, its steps growing at first (the general dual
  // maps' sum at alpha > 2 from the first-order guess). Halving f each step
  // keeps them: a bisection of (x, 1) would jump decades past r and cost
  // ~8 more evaluations coming back.
  for (const double r : {1e-13, 1e-6, 0.01}) {
    int evals = 0;
    auto f = [&](double x, double* fx, double* dfx) {
      ++evals;
      *fx = std::cbrt(x) - std::cbrt(r);
      *dfx = 1.0 / (3.0 * std::cbrt(x) * std::cbrt(x));
    };
    const double x = SafeguardedNewton(f, 0.0, 1.0, r / 30.0);
    CAPTURE(r);
    CHECK(std::fabs(x - r) <= kRootTol * r);
    CHECK(evals <= 8);
  }
}

TEST_CASE("SafeguardedNewton: power steps close a cold multiplier solve in fewer evaluations") {
  // f(x) = log(a x^g + b x) - log(t): a cold multiplier equation's shape (a
  // sum of power-law and linear increments, in log), from a first-order
  // guess far below the root. With power_steps the same root (to rounding),
  // in fewer evaluations (a pure power law, b = 0, in one power step).
  for (const double g : {1.0 / 3.0, 0.5, 2.0 / 3.0}) {
    for (const double b : {0.0, 0.1, 1.0}) {
      int plain_evals = 0, power_evals = 0;
      auto make = [&](int* evals) {
        return [=](double x, double* fx, double* dfx) {
          ++*evals;
          const double s = std::pow(x, g) + b * x;
          *fx = std::log(s) - std::log(3.0);
          *dfx = (g * std::pow(x, g - 1.0) + b) / s;
        };
      };
      double c_plain = 0.0, c_power = 0.0;  // (a constant is measured only over two Newton steps)
      const double x0 = 1e-3;
      const double plain = SafeguardedNewton(make(&plain_evals), 0.0, 1e6, x0, &c_plain);
      const double power = SafeguardedNewton(make(&power_evals), 0.0, 1e6, x0, &c_power, 1e-12, 200,
                                             bd::bregman_detail::NeverSettled(), true);
      CAPTURE(g);
      CAPTURE(b);
      CHECK(std::fabs(power - plain) <= kRootTol * plain);
      CHECK(power_evals < plain_evals);
      if (b == 0.0) CHECK(power_evals <= 3);
      MESSAGE("g " << g << " b " << b << ": " << plain_evals << " -> " << power_evals
                   << " evaluations");
    }
  }
}

TEST_CASE("SafeguardedNewton: rough evaluations far from the root, exact ones to finish") {
  // The same cold multiplier shape, evaluated roughly on request (f moved
  // by up to its stated error, of either sign: an adversarial rough map)
  // while Newton's steps are large. The root is the exact-only solve's (to
  // rounding: the exact evaluations finish it), no solve stops on a rough
  // evaluation, fewer exact evaluations are made, and a rough f within its
  // error of 0 does not move the bracket the wrong way.
  for (const double g : {1.0 / 3.0, 0.5, 2.0 / 3.0}) {
    for (const double b : {0.0, 0.1, 1.0}) {
      for (const double error : {1e-8, 1e-6}) {
        for (const double sign : {1.0, -1.0}) {
          int exact_evals = 0, rough_evals = 0, plain_evals = 0;
          bool last_rough = false;
          auto shape = [=](double x, double* fx, double* dfx) {
            const double s = std::pow(x, g) + b * x;
            *fx = std::log(s) - std::log(3.0);
            *dfx = (g * std::pow(x, g - 1.0) + b) / s;
          };
          auto plain = [&](double x, double* fx, double* dfx) {
            ++plain_evals;
            shape(x, fx, dfx);
          };
          auto rough = [&](double x, double* fx, double* dfx, bool want_rough, double* f_error) {
            shape(x, fx, dfx);
            last_rough = want_rough;
            if (want_rough) {
              ++rough_evals;
              *fx += sign * error;  // the worst the stated error allows
              *f_error = error;
            } else {
              ++exact_evals;
            }
          };
          double c_plain = 0.0, c_rough = 0.0;
          const double x0 = 1e-3;
          const double want = SafeguardedNewton(plain, 0.0, 1e6, x0, &c_plain, 1e-12, 200,
                                                bd::bregman_detail::NeverSettled(), true);
          const double got = SafeguardedNewton(rough, 0.0, 1e6, x0, &c_rough, 1e-12, 200,
                                               bd::bregman_detail::NeverSettled(), true, true);
          CAPTURE(g);
          CAPTURE(b);
          CAPTURE(error);
          CAPTURE(sign);
          CHECK(std::fabs(got - want) <= kRootTol * want);
          CHECK(!last_rough);  // the last evaluation was exact
          CHECK(rough_evals >= 2);
          CHECK(exact_evals < plain_evals);
          CHECK(exact_evals + rough_evals <= plain_evals + 2);
        }
      }
    }
  }
  // A rough f within its error of the root: its sign is unsure, so the
  // bracket keeps both sides and the exact evaluations still find the root.
  int calls = 0;
  auto near = [&](double x, double* fx, double* dfx, bool want_rough, double* f_error) {
    ++calls;
    *fx = std::log(x / 2.0);
    *dfx = 1.0 / x;
    if (want_rough) {
      *fx = -*fx + 1e-9;  // the wrong sign, within the error
      *f_error = 1e-3;
    }
  };
  const double x = SafeguardedNewton(near, 1.0, 4.0, 2.0 * (1.0 + 1e-4), nullptr, 1e-12, 200,
                                     bd::bregman_detail::NeverSettled(), false, true);
  CHECK(std::fabs(x - 2.0) <= kRootTol * 2.0);
}
