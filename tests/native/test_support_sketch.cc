// SupportSketch (bregman/support_sketch.h) against the exact SIMD passes it
// stands in for: on sorted rows shaped like LLM outputs, flat rows, rows
// with ties and zeros, every general alpha's primal and dual map, and
// multipliers from far below to far above the supports' roots, the
// sketch's sums of the increments and of their slopes lie within
// SupportSketch::kError of sum q (the solvers' contract), with a margin.
// The final q from the blocks' series is each token's map within 1e-13 of q.
// Also: blocks depend on p alone (a support's view is the same whatever
// prefix was extended), and the weights integrate polynomials exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <random>
#include <vector>

#include "bregman/renormalise.h"
#include "bregman/support_sketch.h"
#include "kernels/support_map.h"

namespace {

using bd::bregman_detail::SupportSketch;

std::vector<double> SortedRow(int shape, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::vector<double> logit(n);
  for (size_t i = 0; i < n; ++i) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    switch (shape) {
      case 0: logit[i] = -1.1 * std::log(i + 1.0) + 0.3 * (u - 0.5); break;  // Zipf head
      case 1: logit[i] = 0.5 * gauss(rng); break;                            // flat
      case 2: logit[i] = std::floor(4.0 * gauss(rng)) * 0.25; break;         // ties
      case 3: logit[i] = i % 7 == 0 ? -2000.0 : 3.0 * gauss(rng); break;     // zeros
      default:  // bounded noise, like the fuzzer's: a dense top, many tokens per top block
        logit[i] = 0.6 * (u + std::uniform_real_distribution<double>(0.0, 3.0)(rng) - 2.0);
        break;
    }
  }
  double mx = *std::max_element(logit.begin(), logit.end()), z = 0.0;
  std::vector<double> p(n);
  for (size_t i = 0; i < n; ++i) z += p[i] = std::exp(logit[i] - mx);
  for (double& x : p) x /= z;
  std::sort(p.begin(), p.end(), std::greater<double>());
  return p;
}

}  // namespace

TEST_CASE("support sketch: its sums are the exact passes' within its error bound") {
  const double alphas[] = {0.25, 0.5, 0.75, 0.9, 1.1, 1.25, 1.5, 2.5, 3.0, 3.5, 4.0, 5.0, 8.0, 20.0, 40.0};
  double worst = 0.0, worst_q = 0.0, worst_without_head = 0.0, worst_cost = 0.0;
  size_t priced = 0;  // cases with an in-support divergence in the normal range
  size_t sketched = 0;  // cases where the nodes stood in for most of the support
  size_t headed = 0;    // cases near a pole with blocks mapped one by one and others on nodes
  for (int shape = 0; shape < 5; ++shape) {
    const std::vector<double> p = SortedRow(shape, 60000, 11 + shape);
    for (const size_t k : {size_t{41}, size_t{700}, size_t{9000}, size_t{59999}}) {
      for (const double alpha : alphas) {
        for (const bool primal : {true, false}) {
          if (!primal && !(alpha > 1.0)) continue;
          const double b = alpha - 1.0;
          std::vector<double> pw(k);
          if (primal) {
            bd::bregman_detail::PrimalPowers(p.data(), k, b, pw.data());
          } else {
            bd::bregman_detail::DualPowers(p.data(), k, alpha, pw.data());
          }
          SupportSketch sketch;
          sketch.Reset(primal, alpha);
          sketch.Extend(p.data(), k);
          const SupportSketch::View view = sketch.For(k);
          if (view.nodes * 8 < k) ++sketched;
          double kept = 0.0;
          for (size_t i = 0; i < k; ++i) kept += p[i];
          // Multipliers around the one whose last token's q doubles its p,
          // from 1e-6 to 1e6 times it in half decades: the maps'
          // singularities (|p*| ~ nu^{1/b}) then pass every block in steps
          // of 10^{1/2|b|} (steps of two decades missed the nearest passes:
          // a q 6e-13 off at alpha 0.75 went unseen). For alpha < 1 (primal)
          // also multipliers near the map's pole above p_max (PrimalPoleLimit), q_max^b =
          // p_max^b 4^-j, as far as a root can be (q_max <= 1, q_max^b >= 1):
          // q_max / p_max = 4^{j / -b}, up to 2^64 at alpha = 1/4.
          const double p_last = std::max(p[k - 1], 1e-300);
          std::vector<double> multipliers;
          for (int half = -12; half <= 12; ++half) {
            const double scale = std::pow(10.0, half / 2.0);
            if (primal) {
              // q_last = 2 p_last: b nu = p^b (2^b - 1).
              multipliers.push_back(std::pow(p_last, b) * (std::pow(2.0, b) - 1.0) / b * scale);
            } else {
              // q^{a-2} (q - p) at q = 2 p: 2^{a-2} p^{a-1}.
              multipliers.push_back(std::pow(2.0, alpha - 2.0) * std::pow(p_last, alpha - 1.0) *
                                    scale);
            }
          }
          for (int j = 1; primal && b < 0.0 && pw[0] * std::pow(4.0, -j) >= 1.0; ++j) {
            multipliers.push_back(pw[0] * (1.0 - std::pow(4.0, -j)) / -b);
          }
          for (const double nu : multipliers) {
            if (!(nu > 1e-280 && nu < 1e280)) continue;
            if (!primal && !(nu < 1.0)) continue;
            if (primal && b < 0.0 && !(-b * nu < pw[0])) continue;  // q of p_max finite
            const double shift = primal ? b * nu : nu;
            const double z = primal && b > 0.0 ? std::pow(shift, 1.0 / b) : 0.0;
            auto sum = [&](const double* pp, const double* w, size_t n, const double* weight) {
              return primal ? bd::SumPrimalPowerMap(pp, w, n, b, shift, z, z / shift, weight)
                            : bd::SumDualPowerMap(pp, w, n, alpha, nu, std::pow(nu, 1.0 / b),
                                                  weight);
            };
            // The reference: the exact pass in chunks of 16 tokens, added in
            // long double (one pass over 6e4 tokens rounds by ~1e-13 itself).
            long double incr_ref = 0.0L, slope_ref = 0.0L;
            for (size_t from = 0; from < k; from += 16) {
              const bd::SupportMapSums chunk =
                  sum(p.data() + from, pw.data() + from, std::min<size_t>(16, k - from), nullptr);
              incr_ref += chunk.increment;
              slope_ref += chunk.slope;
            }
            const bd::SupportMapSums exact{static_cast<double>(incr_ref),
                                           static_cast<double>(slope_ref)};
            // The solvers' evaluation of the whole support on the sketch.
            const double exact_above =
                primal ? bd::bregman_detail::PrimalPoleLimit(b, shift) : HUGE_VAL;
            const SupportSketch::View solve_view = sketch.For(k, exact_above);
            if (solve_view.head_end > 0 && solve_view.first_node < view.nodes) ++headed;
            bd::SupportMapSums approx;
            bd::bregman_detail::SumsOverSupport(sketch, p.data(), pw.data(), k, 0, k, 0.0, true,
                                                sum, &approx.increment, &approx.slope, exact_above);
            const double total = kept + exact.increment;
            if (solve_view.head_end > 0) {
              // The nodes alone (no head) are far off there: the head is needed.
              bd::SupportMapSums nodes_only;
              bd::bregman_detail::SumsOverSupport(sketch, p.data(), pw.data(), k, 0, k, 0.0, true,
                                                  sum, &nodes_only.increment, &nodes_only.slope);
              worst_without_head = std::max(
                  worst_without_head, std::fabs(nodes_only.increment - exact.increment) / total);
            }
            const double error = std::fabs(approx.increment - exact.increment) / total;
            const double slope_error =
                std::fabs(approx.slope - exact.slope) / std::max(exact.slope, 1e-300);
            worst = std::max(worst, std::max(error, slope_error));
            INFO("shape " << shape << " k " << k << " alpha " << alpha << " primal " << primal
                          << " nu " << nu << " nodes " << view.nodes << " exact from "
                          << view.exact_from << " head " << solve_view.head_end);
            CHECK(error <= SupportSketch::kError / 10.0);
            CHECK(slope_error <= SupportSketch::kError / 10.0);
            // The final q: every token's map against the blocks' series
            // (ApplyOverSupport), token by token; and the in-support
            // divergence priced on the nodes against every token's, summed
            // in chunks of 16 in long double.
            const double zero_mass = z;
            auto apply = [&](const double* pp, const double* w, size_t n, double* qq, bool price,
                             const double* weight) {
              return primal ? bd::ApplyPrimalPowerMap(
                                  pp, w, n, alpha, shift, zero_mass,
                                  bd::bregman_detail::DivergenceFromZero(alpha, zero_mass), qq,
                                  price, weight)
                            : bd::ApplyDualPowerMap(pp, w, n, alpha, nu, std::pow(nu, 1.0 / b),
                                                    qq, price, weight);
            };
            std::vector<double> q_map(k), q_series(k), q_priced(k);
            long double cost_ref = 0.0L;
            for (size_t from = 0; from < k; from += 16) {
              cost_ref += apply(p.data() + from, pw.data() + from, std::min<size_t>(16, k - from),
                                q_map.data() + from, true, nullptr);
            }
            bd::bregman_detail::ApplyOverSupport(sketch, p.data(), pw.data(), k, q_series.data(),
                                                 apply, exact_above);
            const double cost = bd::bregman_detail::ApplyOverSupport(
                sketch, p.data(), pw.data(), k, q_priced.data(), apply, exact_above, nullptr, true);
            CHECK(q_priced == q_series);  // q's bits do not depend on pricing
            if (cost_ref > 0.0L) {
              // Within 1e-13, past the rounding of subnormal costs (a tiny
              // multiplier's divergences lie near 1e-310: each token's, and
              // each node's, rounds to a multiple of 2^-1074).
              const double cost_abs = std::fabs(static_cast<double>(cost - cost_ref));
              const double subnormal_rounding = static_cast<double>(k) * 0x1p-1074;
              CHECK(cost_abs <= 1e-13 * static_cast<double>(cost_ref) + subnormal_rounding);
              if (cost_ref > 1e-290L) {
                worst_cost = std::max(worst_cost, cost_abs / static_cast<double>(cost_ref));
                ++priced;
              }
            }
            double q_error = 0.0;
            for (size_t i = 0; i < k; ++i) {
              if (q_map[i] == q_series[i]) continue;
              q_error = std::max(q_error, std::fabs(q_series[i] - q_map[i]) / q_map[i]);
            }
            worst_q = std::max(worst_q, q_error);
            CHECK(q_error <= 1e-13);
          }
        }
      }
    }
  }
  MESSAGE("worst relative error of the sketch's sums: " << worst);
  MESSAGE("worst relative error of a token's q from its block's series: " << worst_q);
  MESSAGE("worst relative error of the divergence priced on the nodes: " << worst_cost << " ("
                                                                          << priced << " cases)");
  CHECK(priced >= 1000);
  MESSAGE("worst relative error of the nodes' sums without the head near a pole: "
          << worst_without_head);
  CHECK(sketched >= 50);
  CHECK(headed >= 10);
  CHECK(worst_without_head > 1e-6);
}

TEST_CASE("support sketch: blocks are p's, not the prefix's; weights integrate polynomials") {
  const std::vector<double> p = SortedRow(1, 20000, 5);
  SupportSketch whole, piecewise;
  whole.Reset(true, 2.5);
  piecewise.Reset(true, 2.5);
  whole.Extend(p.data(), p.size());
  for (size_t n = 100; n < p.size(); n = n * 3 / 2) piecewise.Extend(p.data(), n);
  piecewise.Extend(p.data(), p.size());
  for (size_t k = 1; k <= p.size(); k += 97) {
    SupportSketch only_k;
    only_k.Reset(true, 2.5);
    only_k.Extend(p.data(), k);
    const SupportSketch::View a = whole.For(k), b = piecewise.For(k), c = only_k.For(k);
    REQUIRE(a.nodes == c.nodes);
    REQUIRE(a.exact_from == c.exact_from);
    REQUIRE(b.nodes == c.nodes);
    REQUIRE(b.exact_from == c.exact_from);
    CHECK(a.exact_from < k);
    CHECK(k - a.exact_from <= SupportSketch::kMaxBlock);
    for (size_t i = 0; i < a.nodes; ++i) {
      REQUIRE(whole.node_p()[i] == only_k.node_p()[i]);
      REQUIRE(whole.weight()[i] == only_k.weight()[i]);
    }
  }
  // sum_i p_i^j over the sketched tokens equals sum_l w_l x_l^j for j < 8
  // (the quadrature is interpolatory of degree 7), to rounding.
  const size_t k = p.size();
  const SupportSketch::View v = whole.For(k);
  CHECK(v.nodes * 10 < v.exact_from);
  for (int j = 0; j < 8; ++j) {
    long double direct = 0.0L, nodes = 0.0L;
    for (size_t i = 0; i < v.exact_from; ++i) direct += std::pow(static_cast<long double>(p[i]), j);
    for (size_t i = 0; i < v.nodes; ++i) {
      nodes += whole.weight()[i] * std::pow(static_cast<long double>(whole.node_p()[i]), j);
    }
    CHECK(std::fabs(static_cast<double>((nodes - direct) / direct)) < 1e-12);
  }
}

TEST_CASE("support sketch: blocks follow their rules (cells, eighths past kDenseBlock, kMaxBlock)") {
  // The rules restated token by token, as the sketch's header states them:
  // token i opens a block when its float64 bits leave p[i-1]'s cell, or its
  // eighth of the cell once the open block holds kDenseBlock tokens, or when
  // the open block holds kMaxBlock. Cells: 2^-bits of a binade, bits >= 1
  // the least with 3 2^{bits-1} >= |alpha - 1|. Every support's view must
  // start its token-by-token block where these rules put it, whether the
  // prefix was extended at once or in pieces.
  auto bits = [](double x) {
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
  };
  size_t compared = 0, dense_closes = 0, full_closes = 0;
  for (int shape = 0; shape < 5; ++shape) {
    const std::vector<double> p = SortedRow(shape, 30000, 40 + shape);
    for (const double alpha : {0.5, 1.5, 2.5, 4.0, 4.5, 8.0, 30.0}) {
      const double b = std::fabs(alpha - 1.0);
      int cell_bits = 1;
      while (cell_bits < 21 && 3.0 * static_cast<double>(1 << (cell_bits - 1)) < b) ++cell_bits;
      const int cell_shift = 52 - cell_bits, eighth_shift = cell_shift - 3;
      std::vector<size_t> start_of(p.size());  // the start of the block holding token i
      size_t open = 0;
      for (size_t i = 1; i < p.size(); ++i) {
        const uint64_t now = bits(p[i]), before = bits(p[i - 1]);
        const size_t held = i - open;
        const bool cell = (now >> cell_shift) != (before >> cell_shift);
        const bool eighth = held >= SupportSketch::kDenseBlock &&
                            (now >> eighth_shift) != (before >> eighth_shift);
        if (held >= SupportSketch::kMaxBlock || cell || eighth) {
          dense_closes += !cell && eighth;
          full_closes += !cell && !eighth;
          open = i;
        }
        start_of[i] = open;
      }
      SupportSketch whole, piecewise;
      whole.Reset(alpha > 1.0 && shape % 2 == 0 ? false : true, alpha);
      piecewise.Reset(alpha > 1.0 && shape % 2 == 0 ? false : true, alpha);
      whole.Extend(p.data(), p.size());
      for (size_t n = 37; n < p.size(); n = n * 5 / 3 + 11) piecewise.Extend(p.data(), n);
      piecewise.Extend(p.data(), p.size());
      for (size_t k = 1; k <= p.size(); k += (k < 3000 ? 1 : 7)) {
        INFO("shape " << shape << " alpha " << alpha << " k " << k);
        REQUIRE(whole.For(k).exact_from == start_of[k - 1]);
        REQUIRE(piecewise.For(k).exact_from == start_of[k - 1]);
        ++compared;
      }
    }
  }
  MESSAGE(compared << " views compared; " << dense_closes << " eighth closes, " << full_closes
                   << " full blocks");
  CHECK(dense_closes > 0);
  CHECK(full_closes > 0);
}
