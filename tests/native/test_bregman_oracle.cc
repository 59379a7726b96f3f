// Production decoder against the exhaustive oracle (tests/reference) on
// thousands of random rows: every family, V from 1 to 4096, alpha from 0.3
// to 5, primal and dual, lambdas on a log grid scaled to each row's tau range.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "bregman/bregman.h"
#include "bregman/renormalise.h"
#include "native/bregman_test_util.h"
#include "reference/bregman_oracle.h"

namespace {

namespace oracle = bregman_oracle;
using bregman_test::Decode;
using bregman_test::Decoded;
using bregman_test::Family;
using bregman_test::MakeRow;
using bregman_test::MaxAbsDiff;
using bregman_test::Params;
using bregman_test::Rng;
using bregman_test::Sorted;
using bregman_test::SortRow;

// Agreement thresholds. q: both sides solve the same smooth equation to a
// few ulp; 1e-9 is far above that and far below any modelling difference.
// Objective: 1e-9 relative, plus 1e-14 for objectives that are 0 up to
// rounding. The dropped tokens' term is their own sum of p^alpha
// (SortedProbs::TailPow, as the oracle's), except for KL (alpha = 1), whose
// tail is the remaining mass 1 - s_k: a difference, so a few ulp of 1
// however small the tail is (16 ulp of it).
constexpr double kQTol = 1e-9;
constexpr double kObjRelTol = 1e-9;

double ObjAbsTol(double alpha) {
  return 1e-14 + (alpha == 1.0 ? 16.0 * 2.220446049250313e-16 : 0.0);
}

struct Stats {
  size_t tables = 0;
  size_t decisions = 0;     // lambda > 0
  size_t ambiguous = 0;     // of those
  size_t zero_lambda = 0;   // lambda = 0 decisions (checked by rule, below)
  size_t k_mismatch = 0;     // unambiguous decisions with a different k
  size_t q_fail = 0;
  size_t obj_fail = 0;
  size_t fixed_checked = 0;
  size_t fixed_fail = 0;
  size_t sum_fail = 0;
  double max_q_err = 0.0;
  double max_obj_rel_err = 0.0;
  double max_fixed_q_err = 0.0;
  double max_fixed_d_rel_err = 0.0;
  double max_sum_err = 0.0;
};

bool ObjectiveClose(double got, double want, double abs_tol) {
  if (got == want) return true;
  return std::fabs(got - want) <= kObjRelTol * std::fabs(want) + abs_tol;
}

// Lambdas spread log-uniformly over the row's tau range (a factor 3 beyond it
// on either side), plus lambda = 0 now and then. The range covers the taus
// that float64 can decide: k < #positive (beyond it tau is 0 in exact
// arithmetic), a dropped mass of at least 1e-9 (below that the added mass
// 1 - s_k is dominated by the rounding of s_k, and so are the D(k) of those
// k: see oracle::Noise), and tau above the resolution of D.
std::vector<double> Lambdas(Rng& rng, const oracle::Table& t, int count) {
  double lo = HUGE_VAL, hi = 0.0;
  const std::vector<double> taus = oracle::Taus(t);
  std::vector<double> dropped(t.sorted.size() + 1, 0.0);
  for (size_t j = t.sorted.size(); j-- > 0;) dropped[j] = dropped[j + 1] + t.sorted[j];
  for (size_t k = 1; k <= taus.size(); ++k) {
    const double tau = taus[k - 1];
    if (!(t.sorted[k] > 0.0) || !std::isfinite(tau) || dropped[k] < 1e-9) continue;
    if (tau > 1e3 * (oracle::Noise(t, k) + oracle::Noise(t, k + 1))) {
      lo = std::min(lo, tau);
      hi = std::max(hi, tau);
    }
  }
  std::vector<double> out;
  if (!(hi > 0.0)) {
    lo = 1e-3;
    hi = 1.0;
  }
  for (int i = 0; i < count; ++i) out.push_back(rng.LogUniform(lo / 3.0, hi * 3.0));
  if (rng.Uniform() < 0.15) out.push_back(0.0);
  return out;
}

void CheckTable(Rng& rng, Stats& st, bd::BregmanWorkspace& ws, bool dual, double alpha,
                const std::vector<double>& p, int num_lambdas, int num_fixed) {
  const oracle::Table table =
      oracle::MakeTable(dual ? oracle::Mode::kDual : oracle::Mode::kPrimal, alpha, p);
  const Sorted s = SortRow(p);
  const size_t v = p.size();
  const double abs_tol = ObjAbsTol(alpha);
  ++st.tables;
  auto context = [&](double lambda, size_t fixed_k) {
    return std::string(dual ? "dual" : "primal") + " alpha=" + std::to_string(alpha) +
           " V=" + std::to_string(v) + " lambda=" + std::to_string(lambda) +
           " fixed_k=" + std::to_string(fixed_k);
  };

  auto check_sum = [&](const Decoded& d, double lambda, size_t fixed_k) {
    double sum = 0.0;
    bool nonneg = true;
    for (double x : d.q) {
      sum += x;
      nonneg = nonneg && x >= 0.0;
    }
    st.max_sum_err = std::max(st.max_sum_err, std::fabs(sum - 1.0));
    if (!(std::fabs(sum - 1.0) <= 1e-12) || !nonneg) {
      ++st.sum_fail;
      if (st.sum_fail <= 5) FAIL_CHECK("q does not sum to 1: " << context(lambda, fixed_k) << " sum-1=" << sum - 1.0);
    }
  };

  // Adaptive decisions (the dual with alpha <= 1 is decoded too: the core
  // must give k = #positive there even though the JS layer rejects it).
  for (double lambda : Lambdas(rng, table, num_lambdas)) {
    const oracle::Decision want = oracle::Decide(table, lambda);
    const Decoded got = Decode(Params(dual, alpha, lambda), s, ws);
    check_sum(got, lambda, 0);
    if (lambda > 0.0) {
      ++st.decisions;
      if (want.ambiguous) ++st.ambiguous;
    } else {
      ++st.zero_lambda;
      // Spec 7: lambda = 0 keeps exactly the positive tokens, q = p (the
      // oracle may be ambiguous here, see oracle::Noise).
      size_t npos = 0;
      for (double x : p) npos += x > 0.0;
      const double p_err = MaxAbsDiff(got.q, p);
      if (got.result.k != std::max<size_t>(npos, 1) || !(p_err <= 1e-15)) {
        ++st.k_mismatch;
        FAIL_CHECK("lambda = 0: " << context(lambda, 0) << " k " << got.result.k << " npos "
                                  << npos << " |q - p| " << p_err);
      }
    }
    if (got.result.k != want.k) {
      if (!want.ambiguous) {
        ++st.k_mismatch;
        if (st.k_mismatch <= 10) {
          FAIL_CHECK("k mismatch: " << context(lambda, 0) << " got " << got.result.k << " oracle "
                                    << want.k << " margin " << want.margin << " tol "
                                    << want.tolerance);
        }
      }
      // Either k is optimal up to the tolerance: the objectives still agree.
      if (!ObjectiveClose(got.result.objective, want.objective, abs_tol + want.tolerance)) {
        ++st.obj_fail;
        if (st.obj_fail <= 10) FAIL_CHECK("objective (ambiguous k): " << context(lambda, 0));
      }
      continue;
    }
    const double q_err = MaxAbsDiff(got.q, want.q);
    st.max_q_err = std::max(st.max_q_err, q_err);
    if (!(q_err <= kQTol)) {
      ++st.q_fail;
      if (st.q_fail <= 10) FAIL_CHECK("q: " << context(lambda, 0) << " err " << q_err);
    }
    if (std::isfinite(want.objective)) {
      st.max_obj_rel_err = std::max(
          st.max_obj_rel_err,
          std::fabs(got.result.objective - want.objective) /
              std::max(std::fabs(want.objective), abs_tol / kObjRelTol));
    }
    if (!ObjectiveClose(got.result.objective, want.objective, abs_tol)) {
      ++st.obj_fail;
      if (st.obj_fail <= 10) {
        FAIL_CHECK("objective: " << context(lambda, 0) << " got " << got.result.objective
                                 << " oracle " << want.objective);
      }
    }
  }

  // Fixed k: the renormalisation and D(k) at a few random support sizes.
  for (int i = 0; i < num_fixed; ++i) {
    const size_t k = i == 0 ? v : rng.Int(1, v);
    const Decoded got = Decode(Params(dual, alpha, 0.0, k), s, ws);
    const std::vector<double> want_q = oracle::TopKQ(table, k);
    const double want_d = table.d[k - 1];
    ++st.fixed_checked;
    check_sum(got, 0.0, k);
    const double q_err = MaxAbsDiff(got.q, want_q);
    st.max_fixed_q_err = std::max(st.max_fixed_q_err, q_err);
    if (std::isfinite(want_d)) {
      st.max_fixed_d_rel_err =
          std::max(st.max_fixed_d_rel_err, std::fabs(got.result.objective - want_d) /
                                               std::max(std::fabs(want_d), abs_tol / kObjRelTol));
    }
    if (got.result.k != k || !(q_err <= kQTol) || !ObjectiveClose(got.result.objective, want_d, abs_tol)) {
      ++st.fixed_fail;
      if (st.fixed_fail <= 10) {
        FAIL_CHECK("fixed k: " << context(0.0, k) << " q err " << q_err << " D got "
                               << got.result.objective << " oracle " << want_d);
      }
    }
  }
}

double PrimalAlpha(Rng& rng) {
  static const double kSpecial[] = {1.0, 1.5, 2.0, 3.0, 0.5, 0.999, 1.001, 0.3, 5.0};
  if (rng.Uniform() < 0.5) return kSpecial[rng.Int(0, 8)];
  return rng.LogUniform(0.3, 5.0);
}

double DualAlpha(Rng& rng) {
  static const double kSpecial[] = {1.5, 2.0, 3.0, 1.001, 5.0, 1.0};
  const double u = rng.Uniform();
  if (u < 0.5) return kSpecial[rng.Int(0, 5)];
  return rng.Uniform(1.05, 5.0);
}

Family AnyFamily(Rng& rng) {
  return static_cast<Family>(rng.Int(0, bregman_test::kNumFamilies - 1));
}

// ws: the workspace every decode of the test used.
void Report(const char* what, const Stats& st, const bd::BregmanWorkspace& ws) {
  // No multiplier solve may end on its iteration limit (it would return a
  // non-root silently).
  CHECK(ws.probes.exhausted_solves == 0);
  MESSAGE(std::string(what) << ": " << st.tables << " distributions, " << st.decisions
               << " adaptive decisions with lambda > 0 compared (" << st.ambiguous
               << " ambiguous), " << st.zero_lambda << " with lambda = 0, " << st.k_mismatch
               << " k mismatches, " << st.fixed_checked
               << " fixed-k checks; max |q err| " << st.max_q_err << " (fixed k "
               << st.max_fixed_q_err << "), max objective rel err " << st.max_obj_rel_err
               << " (fixed-k D(k) " << st.max_fixed_d_rel_err << "), max |sum q - 1| "
               << st.max_sum_err);
  CHECK(st.k_mismatch == 0);
  CHECK(st.q_fail == 0);
  CHECK(st.obj_fail == 0);
  CHECK(st.fixed_fail == 0);
  CHECK(st.sum_fail == 0);
  // Ambiguity means lambda landed within the numerical resolution of a
  // threshold; with lambdas drawn at random that must stay rare.
  REQUIRE(st.ambiguous * 100 <= st.decisions);
}

}  // namespace

TEST_SUITE("bregman") {

TEST_CASE("bregman oracle: small V, every family, primal and dual") {
  Rng rng(0x5eed0001);
  Stats st;
  bd::BregmanWorkspace ws;
  for (int row = 0; row < 1500; ++row) {
    const size_t v = rng.Uniform() < 0.1 ? rng.Int(1, 3) : rng.Int(2, 12);
    const std::vector<double> p = MakeRow(rng, AnyFamily(rng), v);
    const bool dual = rng.Uniform() < 0.35;
    const double alpha = dual ? DualAlpha(rng) : PrimalAlpha(rng);
    CheckTable(rng, st, ws, dual, alpha, p, 8, 2);
  }
  Report("small V", st, ws);
}

TEST_CASE("bregman oracle: medium V") {
  Rng rng(0x5eed0002);
  Stats st;
  bd::BregmanWorkspace ws;
  for (int row = 0; row < 160; ++row) {
    const bool dual = row % 4 == 3;
    const size_t v = dual ? rng.Int(13, 40) : rng.Int(13, 160);
    const std::vector<double> p = MakeRow(rng, AnyFamily(rng), v);
    const double alpha = dual ? DualAlpha(rng) : PrimalAlpha(rng);
    CheckTable(rng, st, ws, dual, alpha, p, 10, 3);
  }
  Report("medium V", st, ws);
}

TEST_CASE("bregman oracle: large V") {
  Rng rng(0x5eed0003);
  Stats st;
  bd::BregmanWorkspace ws;
  struct Case {
    size_t v;
    Family family;
    bool dual;
    double alpha;
  };
  // The oracle is O(V^2) per row: the largest rows use the alphas whose maps
  // it evaluates without transcendental functions per coordinate.
  const Case cases[] = {
      {4096, Family::kZipf, false, 1.0},     {2048, Family::kZipf, false, 2.0},
      {1024, Family::kDirichlet, false, 3.0}, {1024, Family::kZipf, false, 1.5},
      {384, Family::kZipf, false, 0.7},      {384, Family::kDirichlet, false, 2.5},
      {256, Family::kZipf, false, 1.001},    {96, Family::kZipf, true, 3.0},
      {96, Family::kZipf, true, 1.5},        {64, Family::kDirichlet, true, 2.2},
  };
  for (const Case& c : cases) {
    CheckTable(rng, st, ws, c.dual, c.alpha, MakeRow(rng, c.family, c.v), 12, 3);
  }
  Report("large V", st, ws);
}

TEST_CASE("bregman oracle: large alphas, multipliers below the double range") {
  // A head of a few tokens and a tail spanning 1e-14 .. 1e-6 (and zeros):
  // at alpha 20-100 many supports' multipliers lie below 1e-290 (primal
  // nu ~ (rem / k)^{alpha-1}), where both solvers work in log scale and the
  // oracle bisects on the zero-probability gain instead.
  Rng rng(0x5eed0004);
  Stats st;
  bd::BregmanWorkspace ws;
  size_t below_range = 0;  // supports solved in log scale, over every table
  for (int row = 0; row < 60; ++row) {
    const size_t head = rng.Int(1, 4), v = head + rng.Int(4, 40);
    std::vector<double> p(v);
    for (size_t i = 0; i < v; ++i) {
      p[i] = i < head ? rng.Gamma(1.0) : rng.Uniform() < 0.1 ? 0.0 : rng.LogUniform(1e-14, 1e-6);
    }
    double tail = 0.0, mass = 0.0;
    for (size_t i = head; i < v; ++i) tail += p[i];
    for (size_t i = 0; i < head; ++i) mass += p[i];
    for (size_t i = 0; i < head; ++i) p[i] *= (1.0 - tail) / mass;
    rng.Shuffle(p);
    const bool dual = row % 2 == 1;
    static const double kAlphas[] = {12.0, 20.0, 40.0, 60.0, 100.0};
    const double alpha = kAlphas[rng.Int(0, 4)];
    const Sorted s = SortRow(p);
    double kept = 0.0;
    for (size_t k = 1; k <= v; ++k) {
      kept += s.p[k - 1];
      const double rem = 1.0 - kept;
      if (k >= 2 && rem > 0.0 && bd::bregman_detail::MultiplierBelowRange(alpha, rem, k)) {
        ++below_range;
      }
    }
    CheckTable(rng, st, ws, dual, alpha, p, 10, 4);
  }
  Report("large alphas", st, ws);
  MESSAGE(below_range << " supports with a multiplier below the double range");
  CHECK(below_range >= 100);
}

TEST_CASE("bregman oracle: alpha < 1 near the primal map's pole (concentrated q, dense top)") {
  // Primal alpha < 1 gives the top tokens q >> p (q_max / p_max ~ 3500 at
  // alpha = 1/4, k = 41 on a noise row of 32 000): the map (p^b + b nu)^{1/b}
  // then has its pole just above p_max, and the top block's nodes cannot
  // stand for its tokens (the fuzzer's row: q 25 % off and out of order
  // before the head, PrimalPoleLimit). Fixed k and adaptive decodes against
  // the oracle's renormalisation of the same top k.
  Rng rng(0x5eed0005);
  bd::BregmanWorkspace ws;
  double worst = 0.0;
  size_t checked = 0;
  for (int row = 0; row < 3; ++row) {
    std::vector<double> p(32000);
    const double spread = 0.5 + row;
    for (double& x : p) {
      x = std::exp(spread * (rng.Uniform() + rng.Uniform() + rng.Uniform() + rng.Uniform() - 2.0));
    }
    bregman_test::Normalise(p);
    const Sorted s = SortRow(p);
    for (const double alpha : {0.1, 0.25, 0.4, 0.5, 0.75}) {
      std::vector<bd::BregmanParams> runs;
      for (const size_t k : {size_t{5}, size_t{41}, size_t{300}, size_t{3000}}) {
        runs.push_back(Params(false, alpha, 0.0, k));
      }
      for (const double lambda : {1e-6, 1e-4, 1e-2}) {
        bd::BregmanParams adaptive = Params(false, alpha, lambda);
        adaptive.k_max = 3000;
        runs.push_back(adaptive);
      }
      for (const bd::BregmanParams& params : runs) {
        const Decoded d = Decode(params, s, ws);
        const size_t k = d.result.k;
        std::vector<double> q(k);
        oracle::Renormalise(oracle::Mode::kPrimal, alpha, s.p.data(), k, q.data());
        double err = 0.0;
        for (size_t j = 0; j < k; ++j) {
          err = std::max(err, std::fabs(d.q[s.order[j]] - q[j]) / q[j]);
        }
        INFO("row " << row << " alpha " << alpha << " k " << k << " lambda " << params.lambda
                    << " q_max / p_max " << q[0] / s.p[0]);
        CHECK(err <= kQTol);
        worst = std::max(worst, err);
        ++checked;
      }
    }
  }
  MESSAGE("alpha < 1 near the pole: " << checked << " decodes, worst relative q error " << worst);
}

TEST_CASE("large supports: the objective priced on the sketch is the oracle's") {
  // Fixed supports of thousands of tokens, where the decoder prices the
  // kept divergences through the sketch's nodes (ApplyOverSupport) and the
  // dropped tokens' zeroing costs from their own sum of p^alpha (TailCost),
  // against the oracle's bisection and plain sums.
  Rng rng(0x5eed0007);
  bd::BregmanWorkspace ws;
  double worst = 0.0;
  size_t checked = 0;
  for (int row = 0; row < 2; ++row) {
    std::vector<double> p(12000);
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] = row == 0 ? std::exp(1.5 * (rng.Uniform() + rng.Uniform() - 1.0))  // flat
                      : std::pow(static_cast<double>(i + 1), -1.1) * (1.0 + 0.3 * rng.Uniform());
    }
    bregman_test::Normalise(p);
    const Sorted s = SortRow(p);
    struct Form { bool dual; double alpha; };
    for (const Form f : {Form{false, 0.3}, Form{false, 2.5}, Form{true, 1.7}, Form{true, 4.0}}) {
      const oracle::Mode mode = f.dual ? oracle::Mode::kDual : oracle::Mode::kPrimal;
      for (const size_t k : {size_t{2500}, size_t{11000}}) {
        const Decoded d = Decode(Params(f.dual, f.alpha, 0.0, k), s, ws);
        REQUIRE(d.result.k == k);
        std::vector<double> q(k);
        const oracle::Renormalised r = oracle::Renormalise(mode, f.alpha, s.p.data(), k, q.data());
        double dropped = 0.0;
        for (size_t j = p.size(); j-- > k;) dropped += oracle::ZeroCost(mode, f.alpha, s.p[j]);
        const double want = r.in_support + dropped;
        // Relative to the objective however small: the tail is summed from
        // the dropped tokens (at alpha 4 on the Zipf row k = 11 000 leaves
        // an objective of 1.9e-19; its tail as the row's sum less the kept
        // head's was 1e-18 off).
        const double diff = std::fabs(d.result.objective - want);
        INFO("row " << row << " dual " << f.dual << " alpha " << f.alpha << " k " << k << " got "
                    << d.result.objective << " want " << want);
        CHECK(diff <= 1e-12 * want);  // (worst 7.5e-13: alpha 4, Zipf, k = 11 000)
        worst = std::max(worst, diff / want);
        ++checked;
      }
    }
  }
  MESSAGE("large supports: " << checked << " objectives, worst relative error " << worst);
  CHECK(checked == 16);
}

}  // TEST_SUITE
