// The general solvers' hints from the adaptive search (src/bregman/renormalise.h):
// a start one Newton step from a solved neighbouring support (AnchoredStart)
// and the repricing of a probe at its own multiplier (known). Both may only
// save evaluations: the root, q and the cost stay those of a solve without
// them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "bregman/bregman.h"
#include "bregman/renormalise.h"

namespace {

using bd::BregmanDivergence;
using bd::bregman_detail::Multiplier;
using bd::bregman_detail::Renormalise;

// A sorted LLM-like distribution: Zipf 1.1 with a little deterministic noise.
std::vector<double> SortedZipf(size_t n) {
  std::vector<double> p(n);
  double z = 0.0;
  for (size_t i = 0; i < n; ++i) {
    p[i] = std::pow(static_cast<double>(i + 1), -1.1) * (1.0 + 0.01 * std::sin(0.7 * i));
    z += p[i];
  }
  for (double& v : p) v /= z;
  for (size_t i = 1; i < n; ++i) p[i] = std::min(p[i], p[i - 1]);  // keep it sorted
  return p;
}

// A divergence and alpha to solve for.
struct Family {
  BregmanDivergence div;
  double alpha;
};

struct Solve {
  double cost;
  std::vector<double> q;
  Multiplier nu;
};

Solve Run(BregmanDivergence div, double alpha, const std::vector<double>& p, size_t k,
          const Multiplier& hint) {
  Solve s{0.0, std::vector<double>(k), hint};
  std::vector<double> scratch(k);
  s.cost = Renormalise(div, alpha, p.data(), k, s.q.data(), scratch.data(), &s.nu);
  return s;
}

// The per-token powers the search hands every solve, over the whole sorted
// prefix (an anchor above k reads them past k).
std::vector<double> PowersFor(const Family& f, const std::vector<double>& p) {
  std::vector<double> powers(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    powers[i] = f.div == BregmanDivergence::kPrimal
                    ? bd::bregman_detail::PrimalPower(p[i], f.alpha - 1.0)
                    : bd::bregman_detail::DualPower(p[i], f.alpha);
  }
  return powers;
}

// A family's powers over p, a hint carrying them, and the anchor's solve.
struct Anchored {
  std::vector<double> powers;
  Multiplier base;
  Solve anchor;
};
Anchored SolveAnchor(const Family& f, const std::vector<double>& p, size_t k) {
  Anchored a;
  a.powers = PowersFor(f, p);
  a.base.powers = a.powers.data();
  a.anchor = Run(f.div, f.alpha, p, k, a.base);
  return a;
}

}  // namespace

TEST_CASE("solver hints: an anchored start saves evaluations, a known multiplier all of them, and neither changes the answer") {
  const std::vector<double> p = SortedZipf(60000);
  constexpr size_t kAnchor = 40000;
  // SIMD maps (dual 1.5, primal 0.5, 3, 1.25) and the scalar loops (the rest).
  const Family families[] = {
      {BregmanDivergence::kDual, 1.5},    {BregmanDivergence::kDual, 2.5},
      {BregmanDivergence::kDual, 3.0},    {BregmanDivergence::kPrimal, 0.5},
      {BregmanDivergence::kPrimal, 3.0},  {BregmanDivergence::kPrimal, 1.25},
      {BregmanDivergence::kPrimal, 0.3},  {BregmanDivergence::kPrimal, 2.5},
  };
  for (const Family& f : families) {
    CAPTURE(f.alpha);
    CAPTURE(f.div == BregmanDivergence::kPrimal);
    const Anchored setup = SolveAnchor(f, p, kAnchor);
    const Multiplier& base = setup.base;
    const Solve& anchor = setup.anchor;
    REQUIRE(anchor.nu.value > 0.0);
    REQUIRE(anchor.nu.slope > 0.0);
    // As in the search: the neighbour's quadratic constant, with a margin,
    // lets a start close enough stop after one evaluation. A cold solve
    // whose first steps are rough measures none; an anchored one measures
    // its start's error ratio (anchor_curvature), which bounds it too.
    double curvature = 100.0 * anchor.nu.curvature;
    if (!(curvature > 0.0)) {
      Multiplier first = base;
      first.anchor_k = kAnchor;
      first.anchor_nu = anchor.nu.value;
      first.anchor_slope = anchor.nu.slope;
      const Solve measured = Run(f.div, f.alpha, p, kAnchor + 3, first);
      curvature = 100.0 * measured.nu.measured_anchor_curvature;
    }
    REQUIRE(curvature > 0.0);
    for (size_t k : {kAnchor + 600, kAnchor - 600, kAnchor + 3, kAnchor + 1, kAnchor - 1}) {
      CAPTURE(k);
      const Solve plain = Run(f.div, f.alpha, p, k, base);
      // What the search did before: Newton from the neighbour's nu.
      Multiplier from_neighbour = base;
      from_neighbour.start = anchor.nu.value;
      from_neighbour.curvature = curvature;
      const Solve started = Run(f.div, f.alpha, p, k, from_neighbour);
      Multiplier hint = base;
      hint.anchor_k = kAnchor;
      hint.anchor_nu = anchor.nu.value;
      hint.anchor_slope = anchor.nu.slope;
      hint.curvature = curvature;
      const Solve anchored = Run(f.div, f.alpha, p, k, hint);
      CHECK(anchored.nu.evaluations <= started.nu.evaluations);
      const size_t gap = k > kAnchor ? k - kAnchor : kAnchor - k;
      if (gap == 1) {
        // One step from the anchor lands within its quadratic error of
        // the root: the first evaluation's step is certified.
        CHECK(anchored.nu.evaluations == 1);
        CHECK(anchored.nu.evaluations < started.nu.evaluations);
      }
      CHECK(std::fabs(anchored.nu.value - plain.nu.value) <= 1e-13 * plain.nu.value);
      CHECK(std::fabs(anchored.cost - plain.cost) <= 1e-11 * plain.cost);

      // The probe's own multiplier, priced again: no evaluation, and q is
      // the plain solve's bit for bit (the same nu, the same apply pass).
      Multiplier again = base;
      again.upper = again.lower = again.start = plain.nu.value;
      again.known = true;
      const Solve known = Run(f.div, f.alpha, p, k, again);
      CHECK(known.nu.evaluations == 0);
      CHECK(known.nu.value == plain.nu.value);
      CHECK(known.cost == plain.cost);
      CHECK(std::memcmp(known.q.data(), plain.q.data(), k * sizeof(double)) == 0);
    }
  }
}

TEST_CASE("solver hints: an anchored start moved by a neighbour's quadratic term needs fewer evaluations, same root") {
  // The one Newton step from the anchor leaves an error of about kappa s^2
  // (s the step); kappa, measured (signed) by one anchored solve, moves the
  // next anchored start by kappa s^2, so it lands within ~s^3 and its first
  // evaluation's step is certified more often. The root stays the plain
  // solve's; the ratio is about the same between neighbouring supports.
  const std::vector<double> p = SortedZipf(60000);
  constexpr size_t kAnchor = 40000;
  const Family families[] = {{BregmanDivergence::kDual, 2.5}, {BregmanDivergence::kDual, 4.0},
                             {BregmanDivergence::kPrimal, 0.25}, {BregmanDivergence::kPrimal, 4.0}};
  int fewer = 0, cases = 0;
  for (const Family& f : families) {
    CAPTURE(f.alpha);
    CAPTURE(f.div == BregmanDivergence::kPrimal);
    const Anchored setup = SolveAnchor(f, p, kAnchor);
    const Multiplier& base = setup.base;
    Multiplier from_anchor = base;
    from_anchor.anchor_k = kAnchor;
    from_anchor.anchor_nu = setup.anchor.nu.value;
    from_anchor.anchor_slope = setup.anchor.nu.slope;
    const Solve measured = Run(f.div, f.alpha, p, kAnchor + 2, from_anchor);
    const double kappa = measured.nu.measured_anchor_correction;
    REQUIRE(kappa != 0.0);
    from_anchor.curvature =
        100.0 * std::max(setup.anchor.nu.curvature, measured.nu.measured_anchor_curvature);
    for (size_t k : {kAnchor + 1, kAnchor + 5, kAnchor + 12, kAnchor - 1, kAnchor - 5, kAnchor - 12}) {
      CAPTURE(k);
      const Solve plain = Run(f.div, f.alpha, p, k, base);
      const Solve uncorrected = Run(f.div, f.alpha, p, k, from_anchor);
      Multiplier hint = from_anchor;
      hint.anchor_correction = kappa;
      const Solve corrected = Run(f.div, f.alpha, p, k, hint);
      CHECK(corrected.nu.evaluations <= uncorrected.nu.evaluations);
      fewer += corrected.nu.evaluations < uncorrected.nu.evaluations;
      ++cases;
      CHECK(std::fabs(corrected.nu.value - plain.nu.value) <= 1e-13 * plain.nu.value);
      // Both measure the uncorrected start's ratio: about the same kappa.
      if (uncorrected.nu.measured_anchor_correction != 0.0 &&
          corrected.nu.measured_anchor_correction != 0.0) {
        CHECK(corrected.nu.measured_anchor_correction ==
              doctest::Approx(uncorrected.nu.measured_anchor_correction).epsilon(0.05));
        CHECK(corrected.nu.measured_anchor_correction == doctest::Approx(kappa).epsilon(0.5));
      }
    }
  }
  MESSAGE(fewer << " of " << cases << " anchored solves took fewer evaluations with the correction");
  CHECK(fewer >= cases / 4);
}

TEST_CASE("solver hints: a start just below the lower bound starts at the bound") {
  // An anchored start can land a little below a neighbour's lower bound
  // that sits about at the root: the solve then starts at the bound, not at
  // the first-order guess or the bracket's middle decades away (a search's
  // solve took 25 evaluations climbing back from there).
  const std::vector<double> p = SortedZipf(60000);
  for (const Family& f : {Family{BregmanDivergence::kDual, 2.5}, Family{BregmanDivergence::kDual, 4.0},
                          Family{BregmanDivergence::kPrimal, 0.25}}) {
    CAPTURE(f.alpha);
    const Anchored setup = SolveAnchor(f, p, 1789);
    const double root = setup.anchor.nu.value;
    Multiplier hint = setup.base;
    hint.lower = root * (1.0 - 1e-11);
    hint.start = root * (1.0 - 1e-6);  // below the bound
    const Solve s = Run(f.div, f.alpha, p, 1789, hint);
    CHECK(s.nu.evaluations <= 3);
    CHECK(std::fabs(s.nu.value - root) <= 1e-13 * root);
  }
}

TEST_CASE("solver hints: a settling probe stops at a bound on the decided side, and a test that never settles changes nothing but the general maps' Newton path") {
  const std::vector<double> p = SortedZipf(20000);
  constexpr size_t kK = 12000;
  const Family families[] = {
      {BregmanDivergence::kDual, 1.5},   {BregmanDivergence::kDual, 2.5},
      {BregmanDivergence::kDual, 3.0},   {BregmanDivergence::kPrimal, 0.5},
      {BregmanDivergence::kPrimal, 3.0}, {BregmanDivergence::kPrimal, 0.3},
      {BregmanDivergence::kPrimal, 4.0},
  };
  // decided() answers from ctx: 0 never, 1 always; it checks q_last against
  // the map at nu (the last coordinate's q there) on the way.
  struct Ctx {
    int mode;
    int calls;
  };
  auto decided = [](const void* c, double nu, double q_last, bool, bool) {
    Ctx& ctx = *const_cast<Ctx*>(static_cast<const Ctx*>(c));
    ++ctx.calls;
    return ctx.mode == 1 && nu > 0.0 && q_last > 0.0;
  };
  for (const Family& f : families) {
    CAPTURE(f.alpha);
    CAPTURE(f.div == BregmanDivergence::kPrimal);
    Multiplier plain;
    plain.last_only = true;
    const Solve exact = Run(f.div, f.alpha, p, kK, plain);
    REQUIRE(exact.nu.value > 0.0);
    REQUIRE(exact.nu.evaluations >= 2);

    Ctx never{0, 0};
    const bd::bregman_detail::SigmaTest never_test{decided, &never};
    Multiplier with_never = plain;
    with_never.settle = &never_test;
    const Solve same = Run(f.div, f.alpha, p, kK, with_never);
    CHECK_FALSE(same.nu.settled);
    // A probe's first evaluation may be rough (the support's sketch;
    // counted), and is then redone exactly only near the root: the Newton
    // path may differ, the root does not (the plain solve's tolerance). The
    // test is asked once per evaluation, and at the two ends of a rough
    // evaluation's error interval near the root.
    CHECK(never.calls <= 3 * same.nu.evaluations);
    CHECK(std::fabs(same.nu.value - exact.nu.value) <= 1e-12 * exact.nu.value);
    CHECK(std::fabs(same.q[kK - 1] - exact.q[kK - 1]) <= 1e-12 * exact.q[kK - 1]);

    for (double start : {0.8, 1.25}) {  // below and above the root
      Ctx always{1, 0};
      const bd::bregman_detail::SigmaTest always_test{decided, &always};
      Multiplier probe = plain;
      probe.settle = &always_test;
      probe.start = exact.nu.value * start;
      // (No bounds: a bound that settles the test ends the solve before any
      // evaluation, checked below.)
      const Solve bound = Run(f.div, f.alpha, p, kK, probe);
      CAPTURE(start);
      CHECK(bound.nu.settled);
      CHECK(bound.nu.evaluations == 1);
      CHECK(bound.nu.value == probe.start);
      // The side: an upper bound lies above the root, a lower one below.
      CHECK(bound.nu.settled_upper == (start > 1.0));
      // q_last at the bound is the map's, on the same side of the root's q.
      if (bound.nu.settled_upper) {
        CHECK(bound.q[kK - 1] > exact.q[kK - 1]);
      } else {
        CHECK(bound.q[kK - 1] < exact.q[kK - 1]);
      }
      // The estimate (one Newton step from the bound) is much closer.
      CHECK(std::fabs(bound.nu.estimate_nu - exact.nu.value) <
            0.5 * std::fabs(bound.nu.value - exact.nu.value));
      CHECK(bound.nu.estimate_q_last > 0.0);

      // A neighbour's bound that settles the test ends the solve with no
      // evaluation: at the bound, on its side, the estimate being the start.
      for (const bool upper : {true, false}) {
        Ctx at_bound{1, 0};
        const bd::bregman_detail::SigmaTest at_bound_test{decided, &at_bound};
        Multiplier bounded = plain;
        bounded.settle = &at_bound_test;
        bounded.start = exact.nu.value * start;
        (upper ? bounded.upper : bounded.lower) = exact.nu.value * (upper ? 2.0 : 0.5);
        const Solve pre = Run(f.div, f.alpha, p, kK, bounded);
        CAPTURE(upper);
        CHECK(pre.nu.settled);
        CHECK(pre.nu.evaluations == 0);
        CHECK(at_bound.calls == 1);
        CHECK(pre.nu.settled_upper == upper);
        CHECK(pre.nu.value == exact.nu.value * (upper ? 2.0 : 0.5));
        CHECK(pre.nu.estimate_nu == bounded.start);
        if (upper) {
          CHECK(pre.q[kK - 1] > exact.q[kK - 1]);
        } else {
          CHECK(pre.q[kK - 1] < exact.q[kK - 1]);
        }
      }
    }
  }
}
