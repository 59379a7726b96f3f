// Structural properties of sparse Bregman decoding (spec sections 3, 5, 7)
// checked on random rows: greedy (top-k) supports, discrete convexity,
// KL = top-k, monotonicity in lambda, the alpha -> 1 limit, the shape of the
// renormalisation, the k_min/k_max clamps, parameter validation, and the
// workspace / prefix contracts of the decoder.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "bregman/alpha_family.h"
#include "bregman/bregman.h"
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

constexpr double kEps = 2.220446049250313e-16;

Family AnyFamily(Rng& rng) {
  return static_cast<Family>(rng.Int(0, bregman_test::kNumFamilies - 1));
}

struct ModeAlpha {
  bool dual;
  double alpha;
};

// Every mode/alpha combination the decoder supports, special values first.
std::vector<ModeAlpha> AllModes(Rng& rng) {
  std::vector<ModeAlpha> out;
  for (double a : {0.3, 0.5, 0.999, 1.0, 1.001, 1.5, 2.0, 3.0, 5.0}) out.push_back({false, a});
  for (double a : {1.0, 1.001, 1.5, 2.0, 3.0, 5.0}) out.push_back({true, a});
  out.push_back({false, rng.LogUniform(0.3, 5.0)});
  out.push_back({true, rng.Uniform(1.05, 5.0)});
  return out;
}

std::string Describe(bool dual, double alpha, size_t v) {
  return std::string(dual ? "dual" : "primal") + " alpha=" + std::to_string(alpha) +
         " V=" + std::to_string(v);
}

// D(k) for k = 1..V from the production decoder (fixed-k objective).
std::vector<double> ProductionD(bool dual, double alpha, const Sorted& s,
                                bd::BregmanWorkspace& ws) {
  std::vector<double> d;
  for (size_t k = 1; k <= s.p.size(); ++k) {
    d.push_back(Decode(Params(dual, alpha, 0.0, k), s, ws).result.objective);
  }
  return d;
}

// A SortedProbs that records how much of the prefix the decoder asks for.
class CountingProbs final : public bd::SortedProbs {
 public:
  explicit CountingProbs(const std::vector<double>& sorted) : p_(sorted) {}
  size_t Size() const override { return p_.size(); }
  const double* Prefix(size_t need) override {
    max_need = std::max(max_need, need);
    return p_.data();
  }
  double TailPow(size_t k, double alpha) override {
    ++tail_pow_calls;
    bd::SortedProbsArray a(p_.data(), p_.size());
    return a.TailPow(k, alpha);
  }
  size_t max_need = 0;
  int tail_pow_calls = 0;

 private:
  const std::vector<double>& p_;
};

}  // namespace

TEST_SUITE("bregman") {

TEST_CASE("bregman property: the optimal support is a top-k set (brute force, V <= 7)") {
  Rng rng(0xb00f0001);
  bd::BregmanWorkspace ws;
  size_t supports = 0, rows = 0;
  // Every mode/alpha, three rows each (the dual's oracle nests two
  // bisections, so rows stay few and small).
  std::vector<ModeAlpha> cases;
  for (const ModeAlpha& ma : AllModes(rng)) cases.insert(cases.end(), 3, ma);
  for (const ModeAlpha& ma : cases) {
    const size_t v = rng.Int(2, 7);
    const std::vector<double> p = MakeRow(rng, AnyFamily(rng), v);
    const Sorted s = SortRow(p);
    const oracle::Mode mode = ma.dual ? oracle::Mode::kDual : oracle::Mode::kPrimal;
    INFO(Describe(ma.dual, ma.alpha, v));
    ++rows;

    // Best cost of every support size over all 2^V - 1 supports.
    std::vector<double> best(v + 1, HUGE_VAL);
    for (unsigned mask = 1; mask < (1u << v); ++mask) {
      std::vector<char> keep(v);
      size_t size = 0;
      for (size_t i = 0; i < v; ++i) {
        keep[i] = (mask >> i) & 1u;
        size += keep[i];
      }
      best[size] = std::min(best[size], oracle::SupportCost(mode, ma.alpha, p, keep, nullptr));
      ++supports;
    }
    // The top-m set (sorted order, lower id first on ties) attains it.
    for (size_t m = 1; m <= v; ++m) {
      std::vector<char> keep(v, 0);
      for (size_t j = 0; j < m; ++j) keep[s.order[j]] = 1;
      const double top = oracle::SupportCost(mode, ma.alpha, p, keep, nullptr);
      INFO("size " << m << ": top-m " << top << " best " << best[m]);
      if (std::isinf(best[m])) {
        CHECK(std::isinf(top));
      } else {
        CHECK(top <= best[m] + 1e-12 * std::max(1.0, std::fabs(best[m])));
      }
    }
    // And the decoder's objective is the global optimum of the l0 problem.
    for (double lambda : {1e-4, 1e-3, 1e-2, 0.05, 0.2, 1.0}) {
      if (ma.dual && ma.alpha <= 1.0 && lambda > 1e-3) continue;
      double global = HUGE_VAL;
      for (size_t m = 1; m <= v; ++m) global = std::min(global, best[m] + lambda * m);
      const Decoded d = Decode(Params(ma.dual, ma.alpha, lambda), s, ws);
      INFO("lambda " << lambda);
      CHECK(d.result.objective == doctest::Approx(global).epsilon(1e-9).scale(1.0));
    }
  }
  MESSAGE("brute force: " << rows << " rows, " << supports << " supports priced");
}

TEST_CASE("bregman property: D(k) is nonincreasing and convex in k") {
  Rng rng(0xb00f0002);
  bd::BregmanWorkspace ws;
  size_t checked = 0;
  std::vector<ModeAlpha> cases;
  for (const ModeAlpha& ma : AllModes(rng)) cases.insert(cases.end(), 10, ma);
  for (const ModeAlpha& ma : cases) {
    const size_t v = rng.Int(3, 64);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    const std::vector<double> d = ProductionD(ma.dual, ma.alpha, s, ws);
    INFO(Describe(ma.dual, ma.alpha, v));
    for (size_t k = 1; k < v; ++k) {
      if (std::isinf(d[k - 1])) continue;  // dual alpha = 1 below #positive
      INFO("k " << k << " D " << d[k - 1] << " " << d[k]);
      CHECK(d[k] <= d[k - 1] + 1e-12 * std::max(1.0, d[k - 1]));
      if (k + 1 < v) {
        const double second = d[k + 1] - 2.0 * d[k] + d[k - 1];
        CHECK(second >= -1e-12 * std::max(1.0, d[k - 1]));
        ++checked;
      }
    }
    CHECK(std::fabs(d[v - 1]) <= 1e-15);  // D(V) = 0
  }
  MESSAGE("convexity: " << checked << " second differences checked");
}

TEST_CASE("bregman property: alpha = 1 primal is plain top-k renormalisation") {
  Rng rng(0xb00f0003);
  bd::BregmanWorkspace ws;
  for (int row = 0; row < 300; ++row) {
    const size_t v = rng.Int(1, 200);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    const double lambda = rng.LogUniform(1e-5, 1.0);
    const Decoded d = Decode(Params(false, 1.0, lambda), s, ws);
    // The closed-form rule: smallest k with p_(k+1) <= (e^lambda - 1) s_k.
    size_t want_k = v;
    double kept = 0.0;
    for (size_t k = 1; k < v; ++k) {
      kept += s.p[k - 1];
      if (s.p[k] <= std::expm1(lambda) * kept) {
        want_k = k;
        break;
      }
    }
    INFO("V " << v << " lambda " << lambda);
    CHECK(d.result.k == want_k);
    double s_k = 0.0;
    for (size_t j = 0; j < d.result.k; ++j) s_k += s.p[j];
    for (size_t j = 0; j < d.result.k; ++j) {
      CHECK(ws.q[j] == doctest::Approx(s.p[j] / s_k).epsilon(4 * kEps));
    }
    CHECK(d.result.objective ==
          doctest::Approx(-std::log(s_k) + lambda * d.result.k).epsilon(1e-13));
    // Fixed k too, at a random k.
    const size_t k = rng.Int(1, v);
    Decode(Params(false, 1.0, 0.0, k), s, ws);
    s_k = 0.0;
    for (size_t j = 0; j < k; ++j) s_k += s.p[j];
    for (size_t j = 0; j < k; ++j) CHECK(ws.q[j] == doctest::Approx(s.p[j] / s_k).epsilon(4 * kEps));
  }
}

TEST_CASE("bregman property: a larger lambda never gives a larger k") {
  Rng rng(0xb00f0004);
  bd::BregmanWorkspace ws;
  size_t sweeps = 0;
  for (int row = 0; row < 120; ++row) {
    const size_t v = rng.Int(2, 300);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    std::vector<ModeAlpha> modes = AllModes(rng);
    const ModeAlpha ma = modes[rng.Int(0, modes.size() - 1)];
    if (ma.dual && ma.alpha <= 1.0) continue;
    std::vector<double> lambdas;
    for (int i = 0; i < 24; ++i) lambdas.push_back(rng.LogUniform(1e-9, 2.0));
    std::sort(lambdas.begin(), lambdas.end());
    size_t prev_k = v + 1;
    INFO(Describe(ma.dual, ma.alpha, v));
    for (double lambda : lambdas) {
      const size_t k = Decode(Params(ma.dual, ma.alpha, lambda), s, ws).result.k;
      INFO("lambda " << lambda);
      CHECK(k <= prev_k);
      prev_k = k;
    }
    ++sweeps;
  }
  MESSAGE("monotone in lambda: " << sweeps << " sweeps of 24 lambdas");
}

TEST_CASE("bregman property: alpha -> 1 converges to KL at rate |alpha - 1|") {
  Rng rng(0xb00f0005);
  bd::BregmanWorkspace ws;
  double worst_ratio = 0.0;
  for (int row = 0; row < 80; ++row) {
    const size_t v = rng.Int(2, 100);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    const size_t k = rng.Int(1, v);
    double s_k = 0.0;
    for (size_t j = 0; j < k; ++j) s_k += s.p[j];
    for (bool dual : {false, true}) {
      for (double gap : {1e-3, 1e-5, 1e-7}) {
        for (double sign : {-1.0, 1.0}) {
          if (dual && sign < 0) continue;  // the dual needs alpha >= 1
          const double alpha = 1.0 + sign * gap;
          Decode(Params(dual, alpha, 0.0, k), s, ws);
          double err = 0.0;
          for (size_t j = 0; j < k; ++j) err = std::max(err, std::fabs(ws.q[j] - s.p[j] / s_k));
          INFO(Describe(dual, alpha, v) << " k " << k << " err " << err);
          // q is smooth in alpha: the deviation is |alpha - 1| times a
          // derivative bounded by max x log^2 x-like terms (< 1).
          CHECK(err <= 1.0 * gap + 1e-13);
          worst_ratio = std::max(worst_ratio, err / gap);
        }
      }
    }
    // The decision converges too: away from the KL thresholds, alpha = 1 +-
    // 1e-7 picks the KL k.
    const double lambda = rng.LogUniform(1e-4, 0.5);
    const size_t k_kl = Decode(Params(false, 1.0, lambda), s, ws).result.k;
    double kept = 0.0, closest = HUGE_VAL;
    for (size_t j = 1; j < v && s.p[j] > 0.0; ++j) {
      kept += s.p[j - 1];
      closest = std::min(closest, std::fabs(std::log1p(s.p[j] / kept) - lambda));
    }
    if (closest > 1e-4 * lambda) {
      for (double alpha : {1.0 - 1e-7, 1.0 + 1e-7}) {
        CHECK(Decode(Params(false, alpha, lambda), s, ws).result.k == k_kl);
      }
    }
  }
  MESSAGE("alpha -> 1: max |q - q_KL| / |alpha - 1| = " << worst_ratio);
}

TEST_CASE("bregman property: fixed-support maps add mass and preserve order") {
  Rng rng(0xb00f0006);
  size_t maps = 0;
  for (int row = 0; row < 200; ++row) {
    const size_t v = rng.Int(1, 80);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    const size_t k = rng.Int(1, v);
    std::vector<double> q(k), scratch(k);
    for (const ModeAlpha& ma : AllModes(rng)) {
      const auto div = ma.dual ? bd::BregmanDivergence::kDual : bd::BregmanDivergence::kPrimal;
      const double cost = bd::BregmanRenormalise(div, ma.alpha, s.p.data(), k, q.data(),
                                                 scratch.data());
      INFO(Describe(ma.dual, ma.alpha, v) << " k " << k);
      CHECK(cost >= 0.0);
      double sum = 0.0;
      for (size_t j = 0; j < k; ++j) {
        sum += q[j];
        // Exact: q_i >= p_i. In float64 the kept mass may round above 1 by
        // up to k ulp, and KL then scales by 1/s < 1.
        CHECK(q[j] >= s.p[j] * (1.0 - (k + 2) * kEps));
        if (j > 0) CHECK(q[j] <= q[j - 1] * (1.0 + 4 * kEps));
        if (j > 0 && s.p[j] == s.p[j - 1]) CHECK(q[j] == q[j - 1]);  // ties stay tied
      }
      CHECK(std::fabs(sum - 1.0) <= 1e-12);
      ++maps;
    }
  }
  MESSAGE("renormalisation shape: " << maps << " maps checked");
}

TEST_CASE("bregman property: k_min / k_max clamp the adaptive k") {
  Rng rng(0xb00f0007);
  bd::BregmanWorkspace ws;
  for (int row = 0; row < 200; ++row) {
    const size_t v = rng.Int(1, 60);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    std::vector<ModeAlpha> modes = AllModes(rng);
    const ModeAlpha ma = modes[rng.Int(0, modes.size() - 1)];
    const double lambda = rng.LogUniform(1e-6, 0.5);
    const size_t free_k = Decode(Params(ma.dual, ma.alpha, lambda), s, ws).result.k;
    bd::BregmanParams params = Params(ma.dual, ma.alpha, lambda);
    params.k_min = rng.Int(1, v + 3);
    params.k_max = rng.Uniform() < 0.2 ? SIZE_MAX : rng.Int(params.k_min, v + 5);
    const Decoded d = Decode(params, s, ws);
    const size_t want = std::min(std::min(std::max(free_k, params.k_min), params.k_max), v);
    INFO(Describe(ma.dual, ma.alpha, v) << " lambda " << lambda << " k_min " << params.k_min
                                        << " k_max " << params.k_max << " free k " << free_k);
    CHECK(d.result.k == want);
    // Same q and price as asking for that k directly.
    const Decoded fixed = Decode(Params(ma.dual, ma.alpha, 0.0, want), s, ws);
    CHECK(MaxAbsDiff(d.q, fixed.q) == 0.0);
    if (std::isfinite(fixed.result.objective)) {
      CHECK(d.result.objective ==
            doctest::Approx(fixed.result.objective + lambda * want).epsilon(1e-14));
    }
  }
}

TEST_CASE("bregman property: edge cases of spec section 7") {
  bd::BregmanWorkspace ws;
  Rng rng(0xb00f0008);
  // V = 1: k = 1, q = (1), D = 0.
  {
    const Sorted s = SortRow({1.0});
    for (bool dual : {false, true}) {
      const Decoded d = Decode(Params(dual, 1.5, 0.3), s, ws);
      CHECK(d.result.k == 1);
      CHECK(d.q[0] == 1.0);
      CHECK(d.result.objective == doctest::Approx(0.3));
    }
  }
  for (int row = 0; row < 100; ++row) {
    const size_t v = rng.Int(2, 50);
    const std::vector<double> p = MakeRow(rng, AnyFamily(rng), v);
    const Sorted s = SortRow(p);
    size_t npos = 0;
    for (double x : p) npos += x > 0.0;
    for (const ModeAlpha& ma : AllModes(rng)) {
      INFO(Describe(ma.dual, ma.alpha, v));
      // lambda = 0 keeps exactly the positive tokens and returns q = p.
      const Decoded zero = Decode(Params(ma.dual, ma.alpha, 0.0), s, ws);
      CHECK(zero.result.k == npos);
      CHECK(MaxAbsDiff(zero.q, p) <= 1e-15);
      // k = V: q = p and D(V) = 0.
      const Decoded all = Decode(Params(ma.dual, ma.alpha, 0.0, v), s, ws);
      CHECK(MaxAbsDiff(all.q, p) <= 1e-15);
      CHECK(std::fabs(all.result.objective) <= 1e-15);
      if (ma.dual && ma.alpha <= 1.0) continue;
      // Above the universal k = 1 threshold (spec 4.2): greedy argmax.
      const double a = ma.alpha;
      double lambda1;
      if (ma.dual) {
        lambda1 = 0.62;  // the spec's sup is 0.61 at alpha = 1.5, 0.25 at 2 and 3
      } else {
        lambda1 = a == 1.0 ? std::log(2.0) : (1.0 - std::pow(2.0, 1.0 - a)) / (a * (a - 1.0));
      }
      if (!ma.dual || a >= 1.5) {
        const Decoded one = Decode(Params(ma.dual, a, lambda1 * (1.0 + 1e-9)), s, ws);
        CHECK(one.result.k == 1);
        CHECK(one.q[s.order[0]] == 1.0);
      }
    }
  }
  // Ties: equal probabilities get equal q, and the lower id is kept first.
  {
    const std::vector<double> p = {0.2, 0.3, 0.2, 0.3};
    const Sorted s = SortRow(p);
    for (double alpha : {0.5, 1.0, 1.5, 2.0, 3.0}) {
      const Decoded d = Decode(Params(false, alpha, 0.0, 3), s, ws);
      CHECK(d.q[1] == d.q[3]);
      CHECK(d.q[0] > 0.0);
      CHECK(d.q[2] == 0.0);
    }
  }
  // k_min beyond the positive tokens: zero-probability tokens join the
  // support and get mass when alpha > 1 (spec 7), none when alpha <= 1.
  {
    const std::vector<double> p = {0.6, 0.0, 0.4, 0.0};
    const Sorted s = SortRow(p);
    bd::BregmanParams params = Params(false, 2.0, 0.01);
    params.k_min = 3;
    Decoded d = Decode(params, s, ws);
    CHECK(d.result.k == 3);
    CHECK(d.q[1] == 0.0);  // already q = p: nothing left to add
    params.alpha = 0.5;
    d = Decode(params, s, ws);
    CHECK(d.result.k == 3);
    CHECK(d.q[1] == 0.0);
  }
  // Dual alpha = 1 (adaptive, rejected by validation but defined in the
  // core): k = #positive for every lambda; a fixed k below it costs +inf.
  {
    const std::vector<double> p = {0.5, 0.0, 0.3, 0.2};
    const Sorted s = SortRow(p);
    for (double lambda : {0.0, 0.1, 10.0}) {
      CHECK(Decode(Params(true, 1.0, lambda), s, ws).result.k == 3);
    }
    CHECK(std::isinf(Decode(Params(true, 1.0, 0.0, 2), s, ws).result.objective));
    CHECK(std::isfinite(Decode(Params(true, 1.0, 0.0, 3), s, ws).result.objective));
  }
  // Float32-style inputs whose prefix sums overshoot 1: 1 - s is clamped.
  {
    const std::vector<double> p = {0.5f, 0.3f, 0.2f + 1e-7f};
    const Sorted s = SortRow(p);
    for (double alpha : {0.5, 1.0, 1.5, 2.0, 3.0}) {
      const Decoded d = Decode(Params(false, alpha, 1e-3), s, ws);
      CHECK(std::isfinite(d.result.objective));
      CHECK(d.result.objective >= 0.0);
    }
  }
}

TEST_CASE("bregman property: ValidateBregmanParams") {
  const bd::BregmanParams good = Params(false, 1.5, 0.01);
  CHECK(bd::ValidateBregmanParams(good) == nullptr);
  CHECK(bd::ValidateBregmanParams(Params(true, 1.5, 0.01)) == nullptr);
  CHECK(bd::ValidateBregmanParams(Params(true, 1.0, 0.0, 5)) == nullptr);  // fixed-k dual KL
  CHECK(bd::ValidateBregmanParams(Params(false, 0.3, 0.0)) == nullptr);
  CHECK(bd::ValidateBregmanParams(Params(false, 1.0, 0.0, 3)) == nullptr);

  struct Bad {
    bd::BregmanParams params;
    const char* field;
  };
  std::vector<Bad> bad;
  auto with = [&](auto edit, const char* field) {
    bd::BregmanParams p = good;
    edit(p);
    bad.push_back({p, field});
  };
  with([](bd::BregmanParams& p) { p.alpha = 0.0; }, "alpha");
  with([](bd::BregmanParams& p) { p.alpha = -1.0; }, "alpha");
  with([](bd::BregmanParams& p) { p.alpha = std::nan(""); }, "alpha");
  with([](bd::BregmanParams& p) { p.alpha = HUGE_VAL; }, "alpha");
  with([](bd::BregmanParams& p) {
    p.divergence = bd::BregmanDivergence::kDual;
    p.alpha = 0.5;
  }, "alpha");
  with([](bd::BregmanParams& p) {
    p.divergence = bd::BregmanDivergence::kDual;
    p.alpha = 0.5;
    p.fixed_k = 3;
  }, "alpha");
  with([](bd::BregmanParams& p) {  // adaptive dual needs alpha > 1
    p.divergence = bd::BregmanDivergence::kDual;
    p.alpha = 1.0;
  }, "alpha");
  with([](bd::BregmanParams& p) { p.lambda = -1e-9; }, "lambda");
  with([](bd::BregmanParams& p) { p.lambda = std::nan(""); }, "lambda");
  with([](bd::BregmanParams& p) { p.lambda = HUGE_VAL; }, "lambda");
  with([](bd::BregmanParams& p) { p.k_min = 0; }, "k_min");
  with([](bd::BregmanParams& p) {
    p.k_min = 5;
    p.k_max = 4;
  }, "k_max");
  with([](bd::BregmanParams& p) { p.divergence = static_cast<bd::BregmanDivergence>(7); },
       "divergence");
  for (const Bad& b : bad) {
    const char* msg = bd::ValidateBregmanParams(b.params);
    INFO("expected a message naming " << b.field);
    REQUIRE(msg != nullptr);
    INFO("got: " << msg);
    CHECK(std::strstr(msg, b.field) != nullptr);
  }
  // The adaptive-dual message says why (alpha <= 1 never truncates), below
  // alpha 1 too (it said only "must be >= 1 for the dual divergence" there).
  for (const double alpha : {1.0, 0.9, 0.25}) {
    const char* msg = bd::ValidateBregmanParams(Params(true, alpha, 0.1));
    REQUIRE(msg != nullptr);
    CHECK(std::strstr(msg, "never truncates") != nullptr);
  }
}

TEST_CASE("bregman property: no allocation once the workspace has grown") {
  Rng rng(0xb00f0009);
  const Sorted big = SortRow(MakeRow(rng, Family::kZipf, 3000));
  const Sorted other = SortRow(MakeRow(rng, Family::kDirichlet, 3000));
  for (const ModeAlpha& ma : AllModes(rng)) {
    if (ma.dual && ma.alpha <= 1.0) continue;
    INFO(Describe(ma.dual, ma.alpha, 3000));
    bd::BregmanWorkspace ws;
    // Warm up with a small lambda (large k).
    const bd::BregmanParams warm = Params(ma.dual, ma.alpha, 1e-6);
    const size_t k0 = Decode(warm, big, ws).result.k;
    const size_t q_cap = ws.q.capacity(), s_cap = ws.scratch.capacity();
    const size_t q_size = ws.q.size();  // never shrinks: no zero-filling regrowth either
    const double* q_data = ws.q.data();
    const double* s_data = ws.scratch.data();
    for (int rep = 0; rep < 5; ++rep) {
      CHECK(Decode(warm, big, ws).result.k == k0);  // same k
      const size_t k = Decode(Params(ma.dual, ma.alpha, 1e-3), big, ws).result.k;  // smaller
      CHECK(k <= k0);
      Decode(Params(ma.dual, ma.alpha, 0.0, std::max<size_t>(1, k0 / 2)), big, ws);
      Decode(Params(ma.dual, ma.alpha, 1e-2), other, ws);
    }
    CHECK(ws.q.capacity() == q_cap);
    CHECK(ws.q.size() == q_size);
    CHECK(ws.scratch.capacity() == s_cap);
    CHECK(ws.q.data() == q_data);
    CHECK(ws.scratch.data() == s_data);
  }
}

TEST_CASE("bregman property: the decoder reads only the prefix it needs") {
  Rng rng(0xb00f000a);
  bd::BregmanWorkspace ws;
  for (int row = 0; row < 150; ++row) {
    const size_t v = rng.Int(1, 2000);
    const Sorted s = SortRow(MakeRow(rng, AnyFamily(rng), v));
    std::vector<ModeAlpha> modes = AllModes(rng);
    const ModeAlpha ma = modes[rng.Int(0, modes.size() - 1)];
    INFO(Describe(ma.dual, ma.alpha, v));
    {
      CountingProbs probs(s.p);
      const bd::BregmanResult r =
          bd::DecodeBregman(Params(ma.dual, ma.alpha, rng.LogUniform(1e-6, 0.5)), probs, ws);
      INFO("adaptive k " << r.k << " max prefix " << probs.max_need);
      // Galloping probes stay below 2k*, and each probe reads one more.
      CHECK(probs.max_need <= std::min(v, 2 * r.k));
      CHECK(probs.tail_pow_calls <= (ma.alpha == 1.0 ? 0 : 1));
    }
    {
      const size_t k = rng.Int(1, v);
      CountingProbs probs(s.p);
      bd::DecodeBregman(Params(ma.dual, ma.alpha, 0.0, k), probs, ws);
      INFO("fixed k " << k << " max prefix " << probs.max_need);
      CHECK(probs.max_need <= std::min(v, k + 1));
    }
  }
}

TEST_CASE("bregman property: PowAlpha's algebraic forms match pow within 2 ulp") {
  // The exponents with algebraic forms, and one without (pow itself).
  const double exps[] = {0.5, -0.5, 1.5, 2.0, -1.0, 1.0, 0.75};
  Rng rng(0xb00f000b);
  for (double e : exps) {
    INFO("e = " << e);
    CHECK(bd::bregman_detail::PowAlpha(0.0, e) == std::pow(0.0, e));
    CHECK(bd::bregman_detail::PowAlpha(1.0, e) == 1.0);
    for (int i = 0; i < 2000; ++i) {
      // Probabilities and multipliers: 1e-300 .. 1, plus a few above 1.
      const double x = rng.LogUniform(1e-300, 4.0);
      const double want = std::pow(x, e);
      const double got = bd::bregman_detail::PowAlpha(x, e);
      INFO("x = " << x);
      CHECK(std::fabs(got - want) <= 2.0 * (std::nextafter(want, HUGE_VAL) - want));
    }
  }
}

}  // TEST_SUITE

namespace {

// A sorted row of n probabilities from a 64-bit LCG (the same on every
// target): 0 an LLM-like Zipf head with noise, 1 flat, 2 a few high logits
// over a flat floor.
std::vector<double> SortedLcgRow(int shape, size_t n, uint64_t seed) {
  std::vector<double> p(n);
  uint64_t state = seed;
  double z = 0.0;
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    const double logit = shape == 0   ? -1.1 * std::log(i + 1.0) + 0.3 * (u - 0.5)
                         : shape == 1 ? 0.5 * (u - 0.5)
                                      : 8.0 * u * u;
    z += p[i] = std::exp(logit);
  }
  for (double& x : p) x /= z;
  std::sort(p.begin(), p.end(), std::greater<double>());
  return p;
}

// The largest lambda, by halvings of log10 lambda over [-300, 1], whose
// adaptive k on the sorted p reaches target (decoded in ws).
double LambdaReaching(bd::BregmanParams params, const std::vector<double>& p,
                      bd::BregmanWorkspace& ws, size_t target, int halvings) {
  double lo = -300.0, hi = 1.0;
  for (int it = 0; it < halvings; ++it) {
    const double mid = 0.5 * (lo + hi);
    params.lambda = std::pow(10.0, mid);
    bd::SortedProbsArray probs(p.data(), p.size());
    (bd::DecodeBregman(params, probs, ws).k >= target ? lo : hi) = mid;
  }
  return std::pow(10.0, lo);
}

// A general solver to test: divergence and alpha.
struct Mode {
  bd::BregmanDivergence divergence;
  double alpha;
};

}  // namespace

TEST_SUITE("bregman") {

TEST_CASE("bregman property: the adaptive q is the fixed-k q of the same support, bit for bit") {
  // The search's exact solves are cold (as a fixed-k decode's) so that the
  // final solve can reuse them (decode.cc, PerK::FinalFor), and the
  // support's sketch depends on p alone: whatever path the search took, q
  // must be the fixed-k decode's, in a fresh workspace or a used one.
  const Mode modes[] = {{bd::BregmanDivergence::kPrimal, 0.25}, {bd::BregmanDivergence::kPrimal, 4.0},
                        {bd::BregmanDivergence::kPrimal, 0.5},  {bd::BregmanDivergence::kDual, 2.5},
                        {bd::BregmanDivergence::kDual, 1.25},   {bd::BregmanDivergence::kDual, 1.5},
                        {bd::BregmanDivergence::kDual, 3.0}};
  size_t compared = 0;
  for (int shape = 0; shape < 2; ++shape) {
    const size_t n = 40000;
    const std::vector<double> p = SortedLcgRow(shape, n, 99 + shape);
    bd::BregmanWorkspace used;  // carries the earlier decodes' state
    for (const Mode& m : modes) {
      bd::BregmanParams params;
      params.divergence = m.divergence;
      params.alpha = m.alpha;
      for (const size_t target : {size_t{300}, n / 3}) {
        // The largest lambda whose k reaches the target.
        params.lambda = LambdaReaching(params, p, used, target, 50);
        params.fixed_k = 0;
        bd::SortedProbsArray probs(p.data(), n);
        const bd::BregmanResult adaptive = bd::DecodeBregman(params, probs, used);
        const std::vector<double> q_adaptive(used.q.begin(), used.q.begin() + adaptive.k);
        CAPTURE(shape);
        CAPTURE(m.alpha);
        CAPTURE(adaptive.k);
        // The multiplier is the sketch's root (SupportSketch): sum q = 1
        // within its error, far below the 1e-12 it is allowed.
        long double sum_q = 0.0L;
        for (double x : q_adaptive) sum_q += x;
        CHECK(std::fabs(static_cast<double>(sum_q - 1.0L)) <= 1e-13);
        bd::BregmanParams fixed = params;
        fixed.fixed_k = adaptive.k;
        bd::BregmanWorkspace fresh;
        bd::SortedProbsArray probs2(p.data(), n);
        REQUIRE(bd::DecodeBregman(fixed, probs2, fresh).k == adaptive.k);
        CHECK(std::memcmp(fresh.q.data(), q_adaptive.data(), adaptive.k * sizeof(double)) == 0);
        bd::SortedProbsArray probs3(p.data(), n);
        REQUIRE(bd::DecodeBregman(fixed, probs3, used).k == adaptive.k);
        CHECK(std::memcmp(used.q.data(), q_adaptive.data(), adaptive.k * sizeof(double)) == 0);
        ++compared;
      }
    }
  }
  CHECK(compared == 28);
}

}  // TEST_SUITE

TEST_SUITE("bregman") {

TEST_CASE("bregman property: tau from the multipliers agrees with tau from the costs") {
  // The general solvers decide tau_k <= lambda on sigma_{k+1} plus the
  // Hermite integral of the dual function's slope between the two supports'
  // multipliers (decode.cc, PerK::LagrangianTau), without pricing either
  // support. Against the two costs' difference (the check mode prices both),
  // over k from a few to n/3: the difference must stay well inside the error
  // bound the decision trusts, and k and q must be what the costs alone give.
  const Mode modes[] = {{bd::BregmanDivergence::kPrimal, 0.25}, {bd::BregmanDivergence::kPrimal, 0.7},
                        {bd::BregmanDivergence::kPrimal, 4.0},  {bd::BregmanDivergence::kDual, 1.25},
                        {bd::BregmanDivergence::kDual, 2.5},    {bd::BregmanDivergence::kDual, 4.0}};
  const size_t n = 12000;
  size_t decided = 0;  // over every workspace's decodes
  size_t compared = 0;
  double worst = 0.0;
  for (int shape = 0; shape < 3; ++shape) {
    const std::vector<double> p = SortedLcgRow(shape, n, 7 + shape);
    for (const Mode& m : modes) {
      bd::BregmanParams params;
      params.divergence = m.divergence;
      params.alpha = m.alpha;
      for (const size_t target : {size_t{3}, size_t{30}, size_t{300}, size_t{3000}, n / 3}) {
        bd::BregmanWorkspace ws;
        // A lambda where k is about the target (16 halvings: not at a tie).
        params.lambda = LambdaReaching(params, p, ws, target, 16);
        CAPTURE(shape);
        CAPTURE(m.alpha);
        CAPTURE(target);
        ws.tuning.lagrangian_check = true;
        ws.probes.lagrangian_worst = 0.0;
        bd::SortedProbsArray probs(p.data(), n);
        const bd::BregmanResult checked = bd::DecodeBregman(params, probs, ws);
        worst = std::max(worst, ws.probes.lagrangian_worst);
        decided += ws.probes.lagrangian_decided;
        for (const bool objective : {true, false}) {
          bd::BregmanWorkspace a, b;
          b.tuning.lagrangian_tau = false;
          bd::SortedProbsArray pa(p.data(), n), pb(p.data(), n);
          const bd::BregmanResult with = bd::DecodeBregman(params, pa, a, objective);
          const bd::BregmanResult without = bd::DecodeBregman(params, pb, b, objective);
          decided += a.probes.lagrangian_decided + b.probes.lagrangian_decided;
          REQUIRE(with.k == without.k);
          CHECK(with.k == checked.k);
          CHECK(std::memcmp(a.q.data(), b.q.data(), with.k * sizeof(double)) == 0);
          if (objective) CHECK(with.objective == without.objective);
          ++compared;
        }
      }
    }
  }
  MESSAGE("worst |multipliers' tau - costs' tau| / error bound: " << worst);
  CHECK(worst <= 0.25);
  CHECK(compared == 3 * 6 * 5 * 2);
  // The multipliers decided most searches' last step (not only the costs).
  CHECK(decided >= 60);
}

}  // TEST_SUITE

TEST_CASE("bregman property: primal at a large alpha (k = 1 priced, far coordinates' mass)") {
  // Checked against an mpmath reference written from the spec.
  // (1) A support of one: d(1, p) = [1 - p^a - a p^{a-1} (1 - p)] / (a (a - 1)),
  // which is 1 / (a (a - 1)) to double precision once p^{a-1} < 2^-53. R(1)
  // came out inf where a log(1/p) passes ~709 (p^a underflows, g overflows),
  // so k = 1 was never chosen (four equal tokens: alpha 514 on).
  // (2) Fixed supports of equal tokens: q = 1/k each, by symmetry. Where
  // (q/p)^{a-1} passes 2^1000 the map takes the zero coordinate's gain for q
  // and summed it as the increment, dropping p: q of 8 x 1/8 at k = 2 came
  // out 3/8 each at alpha 400 (and a deficit of ~2e-5 on 1e5 equal tokens
  // from alpha ~64).
  bd::BregmanWorkspace ws;
  const std::vector<double> quarter(4, 0.25);
  for (double alpha : {514.0, 1000.0, 2000.0}) {
    CAPTURE(alpha);
    const double d1 = 1.0 / (alpha * (alpha - 1.0));  // D(1): the dropped tokens' p^a / a underflow
    bd::SortedProbsArray probs(quarter.data(), quarter.size());
    const bd::BregmanResult big = bd::DecodeBregman(Params(false, alpha, 0.1), probs, ws);
    CHECK(big.k == 1);
    CHECK(big.objective == doctest::Approx(d1 + 0.1).epsilon(1e-12));
    // lambda = D(1) / 2.5: C(1) = 1.4 D(1), C(2) = 0.8 D(1) + D(2) (D(2) < 1e-150), C(3) = 1.2 D(1).
    const bd::BregmanResult two = bd::DecodeBregman(Params(false, alpha, d1 / 2.5), probs, ws);
    CHECK(two.k == 2);
    CHECK(two.objective == doctest::Approx(0.8 * d1).epsilon(1e-9));
    std::vector<double> q(1), scratch(1);
    CHECK(bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, alpha, quarter.data(), 1, q.data(),
                                 scratch.data()) == doctest::Approx(d1).epsilon(1e-12));
  }
  for (size_t n : {8, 100000}) {
    const std::vector<double> p(n, 1.0 / static_cast<double>(n));
    for (double alpha : {64.0, 100.0, 200.0, 400.0, 1000.0}) {
      for (size_t k : {2, 3, 7}) {
        CAPTURE(n);
        CAPTURE(alpha);
        CAPTURE(k);
        bd::SortedProbsArray probs(p.data(), n);
        const bd::BregmanResult r = bd::DecodeBregman(Params(false, alpha, 0.0, k), probs, ws);
        REQUIRE(r.k == k);
        double sum = 0.0;
        for (size_t i = 0; i < k; ++i) {
          CHECK(ws.q[i] == doctest::Approx(1.0 / static_cast<double>(k)).epsilon(1e-12));
          sum += ws.q[i];
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-12));
      }
    }
  }
  // Large supports, where the sketch's weighted nodes stand for most tokens:
  // 1e5 tokens, k = 2000, alpha 80 (multipliers in range: the map, not the
  // log-scale path, so its far cut; sum q came out 0.98 flat and 0.969
  // sloped without it). Flat: q = 1/k. Sloped (p_i ~ e^{-1e-5 i}): sum q = 1
  // and the KKT condition q_i^b - p_i^b = b nu alike for every kept token,
  // as b log q_i + log(1 - (p_i / q_i)^b).
  for (bool sloped : {false, true}) {
    CAPTURE(sloped);
    std::vector<double> p(100000);
    double z = 0.0;
    for (size_t i = 0; i < p.size(); ++i) z += p[i] = sloped ? std::exp(-1e-5 * static_cast<double>(i)) : 1.0;
    for (double& v : p) v /= z;
    const size_t k = 2000;
    const double alpha = 80.0, b = alpha - 1.0;
    bd::SortedProbsArray probs(p.data(), p.size());
    REQUIRE(bd::DecodeBregman(Params(false, alpha, 0.0, k), probs, ws).k == k);
    double sum = 0.0, lo = HUGE_VAL, hi = -HUGE_VAL;
    for (size_t i = 0; i < k; ++i) {
      sum += ws.q[i];
      const double kkt = b * std::log(ws.q[i]) + std::log1p(-std::pow(p[i] / ws.q[i], b));
      lo = std::min(lo, kkt);
      hi = std::max(hi, kkt);
      if (!sloped) CHECK(ws.q[i] * static_cast<double>(k) == doctest::Approx(1.0).epsilon(1e-11));
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-11));
    CHECK(hi - lo < 1e-9 * std::fabs(lo));
  }
  // Kept tokens whose p^b is subnormal (found by the fuzzer: alpha 400, a
  // softmax of 17 logits, k = 2). p^b held a few significant bits, and the
  // map divides by it, so q = p (1 + b nu / p^b)^{1/b} took its rounding:
  // p = 0.1843 (p^b = e^-675) got q = 0.49998 and p = 0.1558 (p^b = e^-741.8)
  // got 0.50002. Reference: q_i = (p_i^b + s)^{1/b} with sum q = 1 solved for
  // log s by bisection in long double, whose range holds every p^b here.
  // Tokens placed by their p^b = e^-c, across the subnormal range
  // (c 708-745) and either side of it.
  {
    const double cs[] = {600.0, 675.0, 700.0, 709.0, 715.0, 730.0, 741.8, 744.0, 746.0, 800.0};
    size_t checked = 0;
    for (double alpha : {20.0, 64.0, 100.0, 200.0, 400.0, 1000.0}) {
      const double b = alpha - 1.0;
      for (size_t first = 0; first < std::size(cs); ++first) {
        for (size_t k : {2, 3, 4}) {
          if (first + k > std::size(cs)) continue;
          std::vector<double> kept(k);
          double mass = 0.0;
          for (size_t i = 0; i < k; ++i) mass += kept[i] = std::exp(-cs[first + i] / b);
          if (mass > 0.999) continue;
          CAPTURE(alpha);
          CAPTURE(first);
          CAPTURE(k);
          const long double lb = b;
          auto sum_q = [&](long double log_s) {
            long double total = 0.0L;
            for (double v : kept) {
              total += std::exp(std::log(std::exp(lb * std::log(static_cast<long double>(v))) +
                                         std::exp(log_s)) / lb);
            }
            return total;
          };
          long double lo = -12000.0L, hi = 0.0L;  // sum q(lo) < 1 <= sum q(hi)
          for (int it = 0; it < 200; ++it) {
            const long double mid = 0.5L * (lo + hi);
            (sum_q(mid) >= 1.0L ? hi : lo) = mid;
          }
          std::vector<double> q(k), scratch(k);
          bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, alpha, kept.data(), k, q.data(),
                                 scratch.data());
          for (size_t i = 0; i < k; ++i) {
            const long double v = kept[i];
            const long double want =
                std::exp(std::log(std::exp(lb * std::log(v)) + std::exp(hi)) / lb);
            CHECK(q[i] == doctest::Approx(static_cast<double>(want)).epsilon(1e-12));
            // In order up to rounding: near-equal q (s dominating every p^b) may
            // come out an ulp apart either way.
            if (i > 0) CHECK(q[i] <= q[i - 1] * (1.0 + 0x1p-51));
          }
          ++checked;
        }
      }
    }
    CHECK(checked > 100);
    // The fuzzer's row itself, adaptive: k = 2, q in order.
    const double logits[] = {-1.4089601,   -2.45330191, -2.53103399, -0.959130585, -0.712757409,
                             -2.85882783,  -0.737298667, -2.82437015, -1.72855246, -2.98530793,
                             -2.60467243,  -2.25679326,  -2.72389913, -0.544811487, -2.01394844,
                             -2.49000669};
    std::vector<double> row(std::begin(logits), std::end(logits));
    std::sort(row.begin(), row.end(), std::greater<double>());
    double z = 0.0;
    for (double& v : row) z += v = std::exp(v - logits[13]);
    for (double& v : row) v /= z;
    bd::SortedProbsArray probs(row.data(), row.size());
    const bd::BregmanResult r = bd::DecodeBregman(Params(false, 400.0, 1e-6), probs, ws);
    CHECK(r.k == 2);
    CHECK(ws.q[0] >= ws.q[1]);
  }
  // d(1, p) near alpha = 1 with a tiny p (a direct BregmanRenormalise call; in
  // a decode p_max >= 1/V): the form for alpha L > 700 must not drop alpha
  // r^{alpha-1} (without it 999 comes out for 502 at alpha 1.001).
  // Reference: the closed form in long double.
  struct Case {
    double alpha, log_inv_p;
  };
  for (const Case& c : {Case{1.001, 700.0}, Case{1.01, 695.0}, Case{1.0001, 709.0},
                        Case{1.5, 700.0}, Case{2.0, 351.0}, Case{56.0, 12.6},
                        Case{514.0, std::log(4.0)}, Case{2000.0, 0.5}}) {
    const double alpha = c.alpha, log_inv_p = c.log_inv_p;
    CAPTURE(alpha);
    const double p0 = std::exp(-log_inv_p);
    const long double a = alpha, pl = p0;
    const long double want =
        (1.0L - std::pow(pl, a) - a * std::pow(pl, a - 1.0L) * (1.0L - pl)) / (a * (a - 1.0L));
    std::vector<double> q(1), scratch(1);
    const double got =
        bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, alpha, &p0, 1, q.data(), scratch.data());
    CHECK(got == doctest::Approx(static_cast<double>(want)).epsilon(1e-13));
  }
}
