// Golden vectors of spec section 10 (50 configurations x 7 lambdas, computed
// with 40-digit arithmetic) and the worked tables of spec section 3.3.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "bregman/bregman.h"
#include "bregman_golden.inc"
#include "native/bregman_test_util.h"

namespace {

using bregman_test::Decode;
using bregman_test::Decoded;
using bregman_test::MaxAbsDiff;
using bregman_test::Params;
using bregman_test::Sorted;
using bregman_test::SortRow;

// q is rounded to 6 decimals in the JSON, so a correct q is within half a unit
// of the last place; objectives and D(k) are exact to the double written.
constexpr double kQTol = 5e-7 + 1e-12;
constexpr double kObjTol = 1e-6;
constexpr double kDTol = 1e-9;

std::vector<double> ToVector(const double* x, size_t n) { return std::vector<double>(x, x + n); }

bool SameObjective(double got, double want, double tol) {
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

}  // namespace

TEST_SUITE("bregman") {

TEST_CASE("bregman golden: adaptive k, q and objective for every vector") {
  bd::BregmanWorkspace ws;
  double max_q_err = 0.0, max_obj_err = 0.0;
  size_t checked = 0;
  for (size_t ci = 0; ci < bregman_golden::kNumConfigs; ++ci) {
    const auto& c = bregman_golden::kConfigs[ci];
    const Sorted s = SortRow(ToVector(c.p, c.n));
    for (size_t si = 0; si < c.num_solutions; ++si) {
      const auto& sol = c.solutions[si];
      INFO(c.name << (c.dual ? " dual" : " primal") << " alpha=" << c.alpha
                  << " lambda=" << sol.lambda);
      const Decoded d = Decode(Params(c.dual, c.alpha, sol.lambda), s, ws);
      CHECK(d.result.k == sol.k);
      const double q_err = MaxAbsDiff(d.q, ToVector(sol.q, c.n));
      CHECK(q_err <= kQTol);
      CHECK(SameObjective(d.result.objective, sol.objective, kObjTol));
      max_q_err = std::max(max_q_err, q_err);
      max_obj_err = std::max(max_obj_err, std::fabs(d.result.objective - sol.objective));
      ++checked;
    }
  }
  CHECK(checked == 350);
  MESSAGE("golden adaptive: " << checked << " vectors; max |q err| " << max_q_err
                              << ", max |objective err| " << max_obj_err);
}

TEST_CASE("bregman golden: fixed k = golden k reproduces q; fixed k prices D(k)") {
  bd::BregmanWorkspace ws;
  double max_q_err = 0.0, max_d_err = 0.0;
  for (size_t ci = 0; ci < bregman_golden::kNumConfigs; ++ci) {
    const auto& c = bregman_golden::kConfigs[ci];
    const Sorted s = SortRow(ToVector(c.p, c.n));
    for (size_t si = 0; si < c.num_solutions; ++si) {
      const auto& sol = c.solutions[si];
      INFO(c.name << (c.dual ? " dual" : " primal") << " alpha=" << c.alpha
                  << " fixed k=" << sol.k);
      const Decoded d = Decode(Params(c.dual, c.alpha, 0.0, sol.k), s, ws);
      CHECK(d.result.k == sol.k);
      const double q_err = MaxAbsDiff(d.q, ToVector(sol.q, c.n));
      CHECK(q_err <= kQTol);
      max_q_err = std::max(max_q_err, q_err);
      double sum = 0.0;
      for (double x : d.q) sum += x;
      CHECK(std::fabs(sum - 1.0) <= 1e-12);
    }
    // Every k, including those no lambda selects: D(k) against the table.
    for (size_t k = 1; k <= c.n; ++k) {
      INFO(c.name << (c.dual ? " dual" : " primal") << " alpha=" << c.alpha << " k=" << k);
      const Decoded d = Decode(Params(c.dual, c.alpha, 0.0, k), s, ws);
      CHECK(SameObjective(d.result.objective, c.d_k[k - 1], kDTol));
      if (std::isfinite(c.d_k[k - 1])) {
        max_d_err = std::max(max_d_err, std::fabs(d.result.objective - c.d_k[k - 1]));
      }
    }
  }
  MESSAGE("golden fixed k: max |q err| " << max_q_err << ", max |D(k) err| " << max_d_err);
}

TEST_CASE("bregman golden: worked renormalisation tables of spec 3.3") {
  struct Row {
    bool dual;
    double alpha;
    std::vector<double> q;
  };
  const std::vector<double> p1 = {0.5, 0.1, 0.05, 0.01};
  const std::vector<Row> table1 = {
      {false, 0.5, {0.809541, 0.122299, 0.057526, 0.010634}},
      {false, 1.0, {0.757576, 0.151515, 0.075758, 0.015152}},
      {false, 1.5, {0.665500, 0.180543, 0.110411, 0.043545}},
      {false, 2.0, {0.585, 0.185, 0.135, 0.095}},
      {true, 2.0, {0.585, 0.185, 0.135, 0.095}},
      {false, 3.0, {0.521017, 0.177367, 0.154787, 0.146830}},
      {true, 1.5, {0.652480, 0.180113, 0.113633, 0.053774}},
      {true, 3.0, {0.529948, 0.185539, 0.153436, 0.131078}},
      {true, 1.0, {0.757576, 0.151515, 0.075758, 0.015152}},
  };
  const std::vector<double> p2 = {0.4, 0.25, 0.2};
  const std::vector<Row> table2 = {
      {false, 0.5, {0.482524, 0.289531, 0.227945}},
      {false, 1.0, {0.470588, 0.294118, 0.235294}},
      {false, 1.5, {0.459639, 0.297583, 0.242778}},
      {false, 2.0, {0.45, 0.30, 0.25}},
      {false, 3.0, {0.434763, 0.302521, 0.262715}},
      {true, 1.5, {0.459226, 0.297684, 0.243090}},
      {true, 3.0, {0.436453, 0.302581, 0.260966}},
  };
  // (No structured binding: C++17 lambdas, which INFO uses, cannot capture one.)
  for (const auto& example : {std::make_pair(p1, table1), std::make_pair(p2, table2)}) {
    const std::vector<double>& p = example.first;
    for (const Row& row : example.second) {
      INFO((row.dual ? "dual" : "primal") << " alpha=" << row.alpha << " k=" << p.size());
      std::vector<double> q(p.size()), scratch(p.size());
      const double cost = bd::BregmanRenormalise(
          row.dual ? bd::BregmanDivergence::kDual : bd::BregmanDivergence::kPrimal, row.alpha,
          p.data(), p.size(), q.data(), scratch.data());
      CHECK(MaxAbsDiff(q, row.q) <= kQTol);
      CHECK(cost >= 0.0);
    }
  }
}

TEST_CASE("bregman golden: the spec's zero-in-support example") {
  // Kept [0.3, 0.3, 0] at alpha = 2 gives [0.4333, 0.4333, 0.1333] (spec 7).
  const double p[] = {0.3, 0.3, 0.0};
  double q[3], scratch[3];
  bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, 2.0, p, 3, q, scratch);
  CHECK(q[0] == doctest::Approx(0.3 + 0.4 / 3).epsilon(1e-12));
  CHECK(q[2] == doctest::Approx(0.4 / 3).epsilon(1e-12));
  // Primal KL and alpha < 1 leave it at 0.
  bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, 1.0, p, 3, q, scratch);
  CHECK(q[2] == 0.0);
  bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, 0.5, p, 3, q, scratch);
  CHECK(q[2] == 0.0);
  CHECK(q[0] == doctest::Approx(0.5).epsilon(1e-12));
}

}  // TEST_SUITE
