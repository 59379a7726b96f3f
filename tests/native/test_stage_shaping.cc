// The distribution-shaping stages (typical, epsilon, eta, top-n-sigma, XTC,
// dynamic temperature, mirostat v2) and their moment kernels: hand-worked
// cases (llama.cpp's tests/test-sampling.cpp ported, boundaries written out),
// and random rows in both candidate states against the float64 reference in
// tests/reference/shaping_reference.h.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "candidates.h"
#include "kernels/moments.h"
#include "kernels/row_scan.h"
#include "kernels/threshold.h"
#include "reference/shaping_reference.h"
#include "rng.h"
#include "stages/dynamic_temperature.h"
#include "stages/epsilon_eta.h"
#include "stages/mirostat.h"
#include "stages/stages.h"
#include "stages/top_n_sigma.h"
#include "stages/typical.h"
#include "stages/xtc.h"
#include "workspace.h"

#include "stage_compare.h"

// ---------------------------------------------------------------- kernels

TEST_CASE("moment kernels match scalar double sums (tails, -inf, sizes)") {
  std::mt19937_64 rng(101);
  std::normal_distribution<double> g(0.0, 2.0);
  for (size_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1023, 1024, 1025, 5000}) {
    std::vector<float> v(n + 1), w(n + 1);
    for (size_t i = 0; i < n; ++i) {
      v[i] = static_cast<float>(g(rng));
      w[i] = static_cast<float>(std::fabs(g(rng)));
    }
    if (n > 2) v[n / 2] = -kInf;
    const float max = n ? *std::max_element(v.begin(), v.begin() + n) : 0.0f;
    for (float scale : {1.0f, 0.5f, 3.0f}) {
      double se = 0.0, sex = 0.0;
      for (size_t i = 0; i < n; ++i) {
        if (v[i] == -kInf) continue;
        const double x = (static_cast<double>(v[i]) - max) * scale;
        se += std::exp(x);
        sex += std::exp(x) * x;
      }
      std::vector<float> out(n + 1, -1.0f);
      const bd::ExpMomentSums s = bd::ExpMoments(v.data(), n, max, scale, out.data());
      CHECK(s.sum_e == doctest::Approx(se).epsilon(1e-6));
      CHECK(std::fabs(s.sum_ex - sex) <= 1e-6 * (std::fabs(sex) + se));
      const bd::ExpMomentSums s2 = bd::ExpMoments(v.data(), n, max, scale, nullptr);
      CHECK(s2.sum_e == s.sum_e);
      for (size_t i = 0; i < n; ++i) {
        // The exponent is formed in float (half an ulp of |x| each step), so
        // the relative error grows with |x|.
        if (v[i] == -kInf) {
          CHECK(out[i] == 0.0f);
          continue;
        }
        const double x = (static_cast<double>(v[i]) - max) * scale;
        const double want = std::exp(x);
        CHECK(std::fabs(out[i] - want) <= 3e-7 * (1.0 + std::fabs(x)) * want + 1e-37);
      }
      CHECK(out[n] == -1.0f);  // nothing written past n
    }
    const float lo = -0.5f, hi = 1.25f;
    size_t cnt = 0;
    double sw = 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (v[i] >= lo && v[i] <= hi) {
        ++cnt;
        sw += w[i];
      }
    }
    const bd::BandTotals b = bd::BandSum(v.data(), w.data(), n, lo, hi);
    CHECK(b.count == cnt);
    CHECK(b.sum_w == doctest::Approx(sw).epsilon(1e-6));
    size_t fin = 0;
    double s1 = 0.0, s2 = 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (v[i] == -kInf) continue;
      ++fin;
      s1 += v[i] - 0.25;
      s2 += (v[i] - 0.25) * (v[i] - 0.25);
    }
    const bd::FiniteMomentSums m = bd::FiniteMoments(v.data(), n, 0.25f);
    CHECK(m.count == fin);
    CHECK(std::fabs(m.sum_d - s1) <= 1e-5 * (s2 + 1.0));
    CHECK(m.sum_d2 == doctest::Approx(s2).epsilon(1e-6));
  }
}

// ---------------------------------------------------------------- typical

TEST_CASE("typical: llama.cpp test_typical cases") {
  Shaper sh;
  // test_typical({0.97, 0.01, 0.01, 0.01}, {0.97}, 0.5)
  bd::Candidates c = sh.Make(FromProbs({0.97f, 0.01f, 0.01f, 0.01f}));
  bd::ApplyTypical(c, bd::TypicalParams{0.5f, 0}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0}, {1.0});
  // test_typical({0.4, 0.2, 0.2, 0.2}, {0.2, 0.2, 0.2}, 0.5): H = 1.3322,
  // |-log 0.2 - H| = 0.277 < |-log 0.4 - H| = 0.416. llama.cpp leaves p
  // unnormalised; here the survivors are renormalised.
  c = sh.Make(FromProbs({0.4f, 0.2f, 0.2f, 0.2f}));
  bd::ApplyTypical(c, bd::TypicalParams{0.5f, 0}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {1, 2, 3}, {1.0 / 3, 1.0 / 3, 1.0 / 3});
}

TEST_CASE("typical: boundaries (strict cum > p), min_keep, ties, states") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.2f, 0.2f, 0.2f});
  auto run = [&](float p, size_t min_keep, size_t top_k = 0) {
    bd::Candidates c = sh.Make(row);
    if (top_k) bd::ApplyTopK(c, top_k, sh.ws);
    bd::ApplyTypical(c, bd::TypicalParams{p, min_keep}, sh.ws, sh.ctx);
    return sh.Finish(c);
  };
  // Distance order: ids 1, 2, 3 (0.2 each, ties by id), then id 0.
  Expect(run(0.2f, 1), {1, 2}, {0.5, 0.5});              // cum 0.2 is not > 0.2
  Expect(run(0.19f, 1), {1}, {1.0});
  Expect(run(0.4f, 1), {1, 2, 3}, {1 / 3.0, 1 / 3.0, 1 / 3.0});  // 0.4 not > 0.4
  Expect(run(0.39f, 1), {1, 2}, {0.5, 0.5});
  Expect(run(0.6f, 1), {0, 1, 2, 3}, {0.4, 0.2, 0.2, 0.2});  // 0.6 not > 0.6: all
  Expect(run(0.0f, 1), {1}, {1.0});
  Expect(run(0.0f, 3), {1, 2, 3}, {1 / 3.0, 1 / 3.0, 1 / 3.0});
  // The same from a list (after top-k 4, and top-k 3 which drops id 3).
  Expect(run(0.39f, 1, 4), {1, 2}, {0.5, 0.5});
  // {0.5, 0.3, 0.1, 0.1} after top-k 3: p = {5/9, 3/9, 1/9}, H = 0.936888,
  // distances 0.3491, 0.1617, 1.2603: order 1, 0, 2.
  bd::Candidates c3 = sh.Make(FromProbs({0.5f, 0.3f, 0.1f, 0.1f}));
  bd::ApplyTopK(c3, 3, sh.ws);
  bd::ApplyTypical(c3, bd::TypicalParams{0.3f, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c3), {1}, {1.0});
  c3 = sh.Make(FromProbs({0.5f, 0.3f, 0.1f, 0.1f}));
  bd::ApplyTopK(c3, 3, sh.ws);
  bd::ApplyTypical(c3, bd::TypicalParams{0.5f, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c3), {0, 1}, {0.625, 0.375});
  // min_keep (llama.cpp: i >= min_keep - 1 before stopping).
  bd::Candidates c = sh.Make(FromProbs({0.97f, 0.01f, 0.01f, 0.01f}));
  bd::ApplyTypical(c, bd::TypicalParams{0.5f, 3}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0, 1, 2}, {0.97 / 0.99, 0.01 / 0.99, 0.01 / 0.99});
  // All-equal logits: every distance is 0, so ids decide.
  const std::vector<float> flat(10, 0.5f);
  c = sh.Make(flat);
  bd::ApplyTypical(c, bd::TypicalParams{0.35f, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0, 1, 2, 3}, {0.25, 0.25, 0.25, 0.25});
  c = sh.Make(flat);
  bd::ApplyTypical(c, bd::TypicalParams{0.3f, 1}, sh.ws, sh.ctx);  // 3 x 0.1 is not > 0.3
  CHECK(sh.Finish(c).ids.size() == 4);
  c = sh.Make(flat);
  bd::ApplyTypical(c, bd::TypicalParams{0.29f, 1}, sh.ws, sh.ctx);
  CHECK(sh.Finish(c).ids.size() == 3);
  // No-ops: p >= 1, a single candidate (the row stays lazy).
  c = sh.Make(row);
  bd::ApplyTypical(c, bd::TypicalParams{1.0f, 1}, sh.ws, sh.ctx);
  CHECK(!c.truncated);
  c = sh.Make({-kInf, 2.0f, -kInf});
  bd::ApplyTypical(c, bd::TypicalParams{0.1f, 1}, sh.ws, sh.ctx);
  CHECK(!c.truncated);
  Expect(sh.Finish(c), {1}, {1.0});
}

TEST_CASE("typical: random rows match the float64 reference") {
  const Tally t = Sweep(201, [](Tally& tally, const std::vector<float>& row, size_t top_k,
                                double temp, int variant, std::mt19937_64& rng) {
    const float ps[] = {0.2f, 0.5f, 0.9f, 0.95f, 0.99f, 0.999f};
    for (int j = 0; j < 2; ++j) {
      const float p = ps[(variant + 3 * j) % 6];
      const size_t min_keep = (rng() % 4 == 0) ? 1 + rng() % 20 : 1;
      CompareCase(
          tally, row, top_k, temp,
          [&](bd::Candidates& c, Shaper& sh) {
            bd::ApplyTypical(c, bd::TypicalParams{p, min_keep}, sh.ws, sh.ctx);
          },
          [&](const ref::Logits& l, const ref::Cands& rc) { return ref::Typical(l, rc, p, min_keep); });
    }
  });
  Report("typical", t);
  CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
}

TEST_CASE("typical: a 128K LLM row (bisection path) matches the reference") {
  std::mt19937_64 rng(202);
  const std::vector<float> row = LlmRow(128000, rng, 1.0);
  Tally tally;
  for (float p : {0.5f, 0.9f, 0.99f}) {
    CompareCase(
        tally, row, 0, 1.0,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyTypical(c, bd::TypicalParams{p, 1}, sh.ws, sh.ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) { return ref::Typical(l, rc, p, 1); });
  }
  Report("typical 128K", tally);
  CHECK(tally.ambiguous + tally.float_ambiguous == 0);
}

TEST_CASE("typical: the row's band cut keeps what the general walk keeps, and matches the reference") {
  // Rows where the band path runs (the full row, a bracket from the
  // histogram or the bisection): LLM-shaped, flat Gaussians (most of the row
  // survives, the case it exists for) and logits on a 1/8 grid (many tokens
  // at exactly the stop's distance: the ties past the stopping id must go).
  std::mt19937_64 rng(203);
  std::vector<std::vector<float>> rows;
  for (size_t v : {2000, 9000, 70000, 262144}) {
    rows.push_back(LlmRow(v, rng, 1.1));
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<float> flat(v), grid(v);
    for (float& x : flat) x = static_cast<float>(g(rng));
    for (float& x : grid) x = std::round(static_cast<float>(g(rng)) * 8.0f) / 8.0f;
    rows.push_back(flat);
    rows.push_back(grid);  // (every third row)
  }
  Tally tally;
  int cases = 0, same = 0;
  size_t banded = 0, smooth_cases = 0;  // cases the band path decided, of the cases not on a grid
  size_t rings_vs_reference = 0;  // reference cases whose first bracket came from a ring
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<float>& row = rows[r];
    const bool on_grid = r % 3 == 2;
    for (float p : {0.2f, 0.5f, 0.9f, 0.99f}) {
      for (size_t min_keep : {size_t{1}, size_t{300}}) {
        for (double temp : {1.0, 0.7}) {
          auto apply = [&](bd::Candidates& c, Shaper& sh) {
            bd::ApplyTypical(c, bd::TypicalParams{p, min_keep}, sh.ws, sh.ctx);
          };
          // (The reference's margin search is quadratic on flat rows: up to 9000.)
          if (row.size() <= 9000) {
            bool ringed = false;
            auto apply_counting_rings = [&](bd::Candidates& c, Shaper& sh) {
              const size_t rings = sh.ws.probes.typical_histogram_rings;
              apply(c, sh);
              ringed = sh.ws.probes.typical_histogram_rings > rings;
            };
            CompareCase(tally, row, 0, temp, apply_counting_rings,
                        [&](const ref::Logits& l, const ref::Cands& rc) {
                          return ref::Typical(l, rc, p, min_keep);
                        });
            rings_vs_reference += ringed;
          }
          // The same case by both paths.
          ref::Dist by[2];
          for (int band = 0; band < 2; ++band) {
            Shaper sh;
            sh.ws.tuning.typical_row_bands = band == 1;
            bd::Candidates c = sh.Make(row);
            if (temp != 1.0) bd::ApplyTemperature(c, static_cast<float>(temp));
            const size_t hits = sh.ws.probes.typical_row_band_hits;
            apply(c, sh);
            if (band == 1 && !on_grid) {
              banded += sh.ws.probes.typical_row_band_hits - hits;
              ++smooth_cases;
            }
            by[band] = sh.Finish(c);
          }
          ++cases;
          same += by[0].ids == by[1].ids;
        }
      }
    }
  }
  Report("typical by bands", tally);
  MESSAGE(same << " of " << cases << " cases kept the same tokens by both paths");
  // A's mass is summed in float lanes (as z is) instead of one by one in
  // double: a cut may move only where the walk's margin is below ~1e-7.
  CHECK(cases - same <= cases / 50);
  CHECK(tally.ambiguous + tally.float_ambiguous <= tally.cases / 50);
  // Off the grid the band path decides every case; on it, a bracket's
  // annulus can hold no token at all (whole distance levels fall outside),
  // and the general walk takes the next round.
  MESSAGE(banded << " of " << smooth_cases << " cases off the grid cut by the band path");
  CHECK(banded == smooth_cases);
  // Flat rows of 9000 take a ring around the sampled stop (the first
  // bracket without the full histogram): against the reference too.
  MESSAGE(rings_vs_reference << " reference cases bracketed by a ring");
  CHECK(rings_vs_reference > 0);
}

// ---------------------------------------------------------------- epsilon / eta

TEST_CASE("epsilon: cutoff, exact boundary, min_keep (HF EpsilonLogitsWarper)") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.3f, 0.2f, 0.1f});
  bd::Candidates c = sh.Make(row);
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.15f, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  // Equal logits give p = 0.25 exactly: p == epsilon is kept.
  const std::vector<float> flat(4, 1.5f);
  c = sh.Make(flat);
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.25f, 1}, sh.ws, sh.ctx);
  CHECK(!c.truncated);
  CHECK(sh.Finish(c).ids.size() == 4);
  // Just above: nobody passes, so the min_keep most probable (ties: lower id).
  const float above = std::nextafter(0.25f, 1.0f);
  c = sh.Make(flat);
  bd::ApplyEpsilon(c, bd::EpsilonParams{above, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0}, {1.0});
  c = sh.Make(flat);
  bd::ApplyEpsilon(c, bd::EpsilonParams{above, 2}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0, 1}, {0.5, 0.5});
  // epsilon above p_max with min_keep 3; min_keep 0 acts as 1.
  c = sh.Make(row);
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.5f, 3}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  c = sh.Make(row);
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.5f, 0}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0}, {1.0});
  // Off, and a single candidate.
  c = sh.Make(row);
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.0f, 1}, sh.ws, sh.ctx);
  CHECK(!c.truncated);
  c = sh.Make({-kInf, 0.0f});
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.9f, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {1}, {1.0});
  // A list state: after top-k 3, p = {4/9, 3/9, 2/9}; 0.25 drops id 2.
  c = sh.Make(row);
  bd::ApplyTopK(c, 3, sh.ws);
  bd::ApplyEpsilon(c, bd::EpsilonParams{0.25f, 1}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {0, 1}, {4 / 7.0, 3 / 7.0});
}

TEST_CASE("eta: entropy cutoff min(eta, sqrt(eta) e^-H) (HF EtaLogitsWarper)") {
  // p = {0.4, 0.3, 0.2, 0.1}: H = 1.279854 nats, e^-H = 0.278078.
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.3f, 0.2f, 0.1f});
  auto run = [&](float eta, size_t min_keep) {
    bd::Candidates c = sh.Make(row);
    bd::ApplyEta(c, bd::EtaParams{eta, min_keep}, sh.ws, sh.ctx);
    return sh.Finish(c);
  };
  // eta 0.1: cutoff min(0.1, 0.316228 * 0.278078 = 0.087936): all kept.
  Expect(run(0.1f, 1), {0, 1, 2, 3}, {0.4, 0.3, 0.2, 0.1});
  // eta 0.2: cutoff 0.124360 drops 0.1.
  Expect(run(0.2f, 1), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  // eta 0.5: cutoff 0.196631 still keeps 0.2.
  Expect(run(0.5f, 1), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  // eta 0.9: cutoff 0.263808 keeps 0.4 and 0.3; min_keep 3 brings back 0.2.
  Expect(run(0.9f, 1), {0, 1}, {4 / 7.0, 3 / 7.0});
  Expect(run(0.9f, 3), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  // Off.
  bd::Candidates c = sh.Make(row);
  bd::ApplyEta(c, bd::EtaParams{0.0f, 1}, sh.ws, sh.ctx);
  CHECK(!c.truncated);
}

TEST_CASE("epsilon and eta: random rows match the float64 reference") {
  const Tally te = Sweep(301, [](Tally& tally, const std::vector<float>& row, size_t top_k,
                                 double temp, int variant, std::mt19937_64& rng) {
    const float eps[] = {3e-4f, 1e-3f, 0.01f, 0.05f, 0.2f, 0.6f};
    const float e = eps[variant % 6];
    const size_t min_keep = (rng() % 3 == 0) ? 1 + rng() % 10 : 1;
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyEpsilon(c, bd::EpsilonParams{e, min_keep}, sh.ws, sh.ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) { return ref::Epsilon(l, rc, e, min_keep); });
  });
  Report("epsilon", te);
  CHECK(te.ambiguous + te.float_ambiguous <= te.cases / 50);
  const Tally th = Sweep(302, [](Tally& tally, const std::vector<float>& row, size_t top_k,
                                 double temp, int variant, std::mt19937_64& rng) {
    const float etas[] = {3e-4f, 2e-3f, 0.01f, 0.1f, 0.5f, 0.9f};
    const float e = etas[variant % 6];
    const size_t min_keep = (rng() % 3 == 0) ? 1 + rng() % 10 : 1;
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyEta(c, bd::EtaParams{e, min_keep}, sh.ws, sh.ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) { return ref::Eta(l, rc, e, min_keep); });
  });
  Report("eta", th);
  CHECK(th.ambiguous + th.float_ambiguous <= th.cases / 50);
}

// ---------------------------------------------------------------- top-n-sigma

TEST_CASE("top-n-sigma: llama.cpp test_top_n_sigma cases and boundaries") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.1f, 0.2f, 0.3f, 0.4f});
  auto run = [&](const std::vector<float>& r, float n, float temp = 1.0f) {
    bd::Candidates c = sh.Make(r);
    if (temp != 1.0f) bd::ApplyTemperature(c, temp);
    bd::ApplyTopNSigma(c, bd::TopNSigmaParams{n}, sh.ws, sh.ctx);
    return sh.Finish(c);
  };
  // test_top_n_sigma(..., {0, 0, 0.428571, 0.571429}, 1): mean -1.508072,
  // sigma 0.520626, cut -1.436917 keeps log 0.3 and log 0.4.
  Expect(run(row, 1.0f), {3, 2}, {0.4 / 0.7, 0.3 / 0.7});
  // n = 0 is a no-op (PR #13345), n = 3 keeps all.
  Expect(run(row, 0.0f), {3, 2, 1, 0}, {0.4, 0.3, 0.2, 0.1});
  Expect(run(row, 3.0f), {3, 2, 1, 0}, {0.4, 0.3, 0.2, 0.1});
  // Temperature does not move the cut (sigma scales with it).
  Expect(run(row, 1.0f, 0.5f), {3, 2}, {0.16 / 0.25, 0.09 / 0.25});
  // Banned tokens take no part in the mean and sigma.
  std::vector<float> banned = row;
  banned.push_back(-kInf);
  banned.insert(banned.begin(), -kInf);
  Expect(run(banned, 1.0f), {4, 3}, {0.4 / 0.7, 0.3 / 0.7});
  // Exact boundary: {1, 1, -1, -1} has mean 0, sigma 1; the cut 1 - 2 = -1 is kept.
  const std::vector<float> pm = {1.0f, 1.0f, -1.0f, -1.0f};
  CHECK(run(pm, 2.0f).ids.size() == 4);
  CHECK(run(pm, std::nextafter(2.0f, 0.0f)).ids.size() == 2);
  CHECK(run(pm, 1.5f).ids == std::vector<int32_t>{0, 1});
  // All equal: sigma 0 keeps every candidate; a single candidate is a no-op.
  CHECK(run(std::vector<float>(7, 0.25f), 1.0f).ids.size() == 7);
  CHECK(run({-kInf, 0.5f}, 1.0f).ids == std::vector<int32_t>{1});
  // A list state: after top-k 3 the logits are log {0.4, 0.3, 0.2}: mean
  // -1.243234, sigma 0.284335, cut -1.200625 now drops log 0.3 = -1.203973.
  bd::Candidates c = sh.Make(row);
  bd::ApplyTopK(c, 3, sh.ws);
  bd::ApplyTopNSigma(c, bd::TopNSigmaParams{1.0f}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {3}, {1.0});
  c = sh.Make(row);
  bd::ApplyTopK(c, 3, sh.ws);
  bd::ApplyTopNSigma(c, bd::TopNSigmaParams{1.5f}, sh.ws, sh.ctx);
  Expect(sh.Finish(c), {3, 2}, {0.4 / 0.7, 0.3 / 0.7});
}

TEST_CASE("top-n-sigma: random rows match the float64 reference") {
  const Tally t = Sweep(401, [](Tally& tally, const std::vector<float>& row, size_t top_k,
                                double temp, int variant, std::mt19937_64&) {
    const float ns[] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 0.1f};
    const float n = ns[variant % 6];
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyTopNSigma(c, bd::TopNSigmaParams{n}, sh.ws, sh.ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) { return ref::TopNSigma(l, rc, n); });
  });
  Report("top-n-sigma", t);
  CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
}

// ---------------------------------------------------------------- XTC

TEST_CASE("xtc: llama.cpp test_xtc cases, ties, min_keep, threshold edges") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.3f, 0.2f, 0.1f});
  // llama.cpp uses probability 0.99 with its seeded rng; 1 always acts here.
  auto run = [&](const std::vector<float>& r, float threshold, size_t min_keep, size_t top_k = 0) {
    bd::Candidates c = sh.Make(r);
    if (top_k) bd::ApplyTopK(c, top_k, sh.ws);
    bd::ApplyXtc(c, bd::XtcParams{1.0f, threshold, min_keep}, sh.ws, sh.ctx);
    return sh.Finish(c);
  };
  // "XTC should": {0.1}, {0.2, 0.1}, {0.3, 0.2, 0.1} (llama.cpp leaves them
  // unnormalised; here renormalised).
  Expect(run(row, 0.09f, 0), {3}, {1.0});
  Expect(run(row, 0.19f, 0), {2, 3}, {2 / 3.0, 1 / 3.0});
  Expect(run(row, 0.29f, 0), {1, 2, 3}, {0.5, 1 / 3.0, 1 / 6.0});
  // "XTC should not": only 0.4 reaches 0.39.
  Expect(run(row, 0.39f, 0), {0, 1, 2, 3}, {0.4, 0.3, 0.2, 0.1});
  // threshold > 0.5: off. threshold 0.5 with two tokens at exactly 0.5: the
  // first (lower id) goes, the last of the tie stays.
  Expect(run(row, 0.51f, 1), {0, 1, 2, 3}, {0.4, 0.3, 0.2, 0.1});
  Expect(run({0.75f, 0.75f}, 0.5f, 1), {1}, {1.0});
  // threshold <= 0: every token is a top choice; the least probable stays.
  Expect(run(row, 0.0f, 1), {3}, {1.0});
  // min_keep, all or nothing: 0.19 would leave 2 tokens.
  Expect(run(row, 0.19f, 3), {0, 1, 2, 3}, {0.4, 0.3, 0.2, 0.1});
  Expect(run(row, 0.19f, 2), {2, 3}, {2 / 3.0, 1 / 3.0});
  // A list: after top-k 3, p = {4/9, 3/9, 2/9} all >= 0.19: only id 2 stays.
  Expect(run(row, 0.19f, 1, 3), {2}, {1.0});
  // Ties below the cut are untouched; ties inside Q keep the highest id.
  Expect(run({1.0f, 1.0f, 1.0f, -3.0f}, 0.2f, 1), {2, 3},
         {1.0 / (1.0 + std::exp(-4.0)), std::exp(-4.0) / (1.0 + std::exp(-4.0))});
  // A single candidate.
  Expect(run({-kInf, 0.0f}, 0.1f, 1), {1}, {1.0});
  // Banned tokens are not candidates: min_keep does not count them. llama.cpp
  // keeps masked tokens in its array (bans, top-n-sigma's mask) and its
  // size - pos_last >= min_keep counts them: on this row (4 banned) with
  // threshold 0.19 and min_keep 3 it keeps {0.2, 0.1} (8 - 2 >= 3); here
  // 4 - 2 < 3 removes nothing (a deviation, docs/samplers.md).
  std::vector<float> banned = row;
  banned.insert(banned.begin(), 4, -kInf);
  Expect(run(banned, 0.19f, 3), {4, 5, 6, 7}, {0.4, 0.3, 0.2, 0.1});
  Expect(run(banned, 0.19f, 2), {6, 7}, {2 / 3.0, 1 / 3.0});
}

TEST_CASE("xtc: acts with its own salted uniform, at the configured rate") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.3f, 0.2f, 0.1f});
  int acted = 0;
  for (uint64_t step = 0; step < 1000; ++step) {
    sh.ctx.seed = 12345;
    sh.ctx.step = step;
    bd::Candidates c = sh.Make(row);
    bd::ApplyXtc(c, bd::XtcParams{0.3f, 0.19f, 1}, sh.ws, sh.ctx);
    const bool did = sh.Finish(c).ids.size() == 2;
    CHECK(did == (bd::UniformDraw(12345 ^ bd::kXtcSalt, step) <= 0.3f));
    acted += did ? 1 : 0;
  }
  CHECK(acted > 240);
  CHECK(acted < 360);
  // probability 0: never.
  bd::Candidates c = sh.Make(row);
  bd::ApplyXtc(c, bd::XtcParams{0.0f, 0.19f, 1}, sh.ws, sh.ctx);
  CHECK(!c.truncated);
  CHECK(c.row_finite == 4);
}

TEST_CASE("xtc: random rows match the float64 reference") {
  const Tally t = Sweep(501, [](Tally& tally, const std::vector<float>& row, size_t top_k,
                                double temp, int variant, std::mt19937_64& rng) {
    const float ths[] = {0.05f, 0.1f, 0.2f, 0.3f, 0.5f, 0.01f};
    const float th = ths[variant % 6];
    const size_t min_keep = (rng() % 3 == 0) ? 1 + rng() % 5 : 1;
    bd::StageContext ctx;
    ctx.seed = rng();
    ctx.step = rng() % 100;
    const float prob = 0.5f;
    const bool act = bd::UniformDraw(ctx.seed ^ bd::kXtcSalt, ctx.step) <= prob;
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyXtc(c, bd::XtcParams{prob, th, min_keep}, sh.ws, ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) { return ref::Xtc(l, rc, act, prob, th, min_keep); });
  });
  Report("xtc", t);
  CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
}

// ---------------------------------------------------------------- dynamic temperature

TEST_CASE("dynamic temperature: llama.cpp test_temp_ext cases and the entropy map") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.1f, 0.2f, 0.3f, 0.4f});
  auto run = [&](const std::vector<float>& r, bd::DynamicTemperatureParams p, float before = 1.0f) {
    bd::Candidates c = sh.Make(r);
    if (before != 1.0f) bd::ApplyTemperature(c, before);
    bd::ApplyDynamicTemperature(c, p, sh.ws, sh.ctx);
    return c;
  };
  // test_temp_ext(..., 1.0, 0.0, 1.0): plain temperature 1, unchanged.
  bd::Candidates c = run(row, {1.0f, 0.0f, 1.0f});
  CHECK(c.temperature == 1.0);
  Expect(sh.Finish(c), {3, 2, 1, 0}, {0.4, 0.3, 0.2, 0.1});
  // test_temp_ext(..., {0, 0, 0, 1}, 0.0, 0.0, 1.0): temperature 0 is greedy.
  c = run(row, {0.0f, 0.0f, 1.0f});
  Expect(sh.Finish(c), {3}, {1.0});
  // Plain temperature 2 (range 0).
  c = run(row, {2.0f, 0.0f, 1.0f});
  CHECK(c.temperature == 2.0);
  // p = {0.97, 0.01 x 3}: H = 0.167701, H / log 4 = 0.120970.
  const std::vector<float> peaked = FromProbs({0.97f, 0.01f, 0.01f, 0.01f});
  c = run(peaked, {1.0f, 0.5f, 1.0f});  // T = 0.5 + 1.0 * 0.120970
  CHECK(c.temperature == doctest::Approx(0.6209703664).epsilon(1e-6));
  Expect(sh.Finish(c), {0, 1, 2, 3}, {0.9981083712, 0.0006305429, 0.0006305429, 0.0006305429}, 1e-5);
  c = run(peaked, {1.0f, 0.5f, 2.0f});  // T = 0.5 + 1.0 * 0.120970^2
  CHECK(c.temperature == doctest::Approx(0.5146338296).epsilon(1e-6));
  Expect(sh.Finish(c), {0, 1, 2, 3}, {0.9995865837, 0.0001378054, 0.0001378054, 0.0001378054}, 1e-5);
  // min_T clamps at 0: temperature 0.2, range 0.5 -> T = 0.7 * 0.120970.
  c = run(peaked, {0.2f, 0.5f, 1.0f});
  CHECK(c.temperature == doctest::Approx(0.0846792565).epsilon(1e-6));
  // Uniform: H = H_max, so T = max_T.
  c = run(std::vector<float>(4, 0.0f), {1.0f, 0.5f, 1.0f});
  CHECK(c.temperature == doctest::Approx(1.5).epsilon(1e-6));
  // A single candidate: unchanged (llama.cpp returns before any temperature).
  c = run({-kInf, 3.0f, -kInf}, {1.0f, 0.5f, 1.0f});
  CHECK(c.temperature == 1.0);
  // Composition: H of the law tempered by 2, then the factor multiplies.
  c = run(peaked, {1.0f, 0.5f, 1.0f}, 2.0f);
  {
    std::vector<double> q = {std::pow(0.97, 0.5), std::pow(0.01, 0.5), std::pow(0.01, 0.5), std::pow(0.01, 0.5)};
    double zq = 0.0, h = 0.0;
    for (double x : q) zq += x;
    for (double x : q) h -= (x / zq) * std::log(x / zq);
    CHECK(c.temperature == doctest::Approx(2.0 * (0.5 + h / std::log(4.0))).epsilon(1e-6));
  }
  // A vanishing temperature (min_T = 0, H ~ 1e-85) is greedy.
  c = run({0.0f, -200.0f, -kInf}, {0.2f, 0.5f, 1.0f});
  Expect(sh.Finish(c), {0}, {1.0});
}

TEST_CASE("dynamic temperature: random rows match the float64 reference") {
  const Tally t = Sweep(601, [](Tally& tally, const std::vector<float>& row, size_t top_k,
                                double temp, int variant, std::mt19937_64&) {
    const float temps[] = {1.0f, 0.8f, 1.2f, 0.3f, 1.0f, 2.0f};
    const float ranges[] = {0.5f, 0.3f, 1.0f, 0.5f, 0.0f, 0.25f};
    const float exps[] = {1.0f, 2.0f, 0.5f, 1.0f, 1.0f, 1.5f};
    const bd::DynamicTemperatureParams p{temps[variant % 6], ranges[variant % 6], exps[variant % 6]};
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyDynamicTemperature(c, p, sh.ws, sh.ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) {
          return ref::DynamicTemperature(l, rc, p.temperature, p.range, p.exponent);
        });
  });
  Report("dynamic temperature", t);
  CHECK(t.ambiguous + t.float_ambiguous == 0);
}

// ---------------------------------------------------------------- mirostat

namespace {

// The mirostat truncation of `version` (1 or 2) at mu, as the registry
// applies it.
void ApplyMirostatAt(int version, float mu, bd::Candidates& c, Shaper& sh) {
  bd::MirostatState s;
  s.mu = mu;
  const bd::MirostatParams p{5.0f, 0.1f, version};
  if (version == 1) {
    bd::ApplyMirostatV1(c, p, s, sh.ws, sh.ctx);
  } else {
    bd::ApplyMirostat(c, p, s, sh.ws, sh.ctx);
  }
}

// Random rows of the stage sweep (seed) against the float64 reference of
// `version`, at six values of mu.
Tally MirostatSweep(uint64_t seed, int version) {
  return Sweep(seed, [version](Tally& tally, const std::vector<float>& row, size_t top_k,
                               double temp, int variant, std::mt19937_64&) {
    const float mus[] = {10.0f, 5.0f, 3.0f, 1.0f, 15.0f, 7.5f};
    const float mu = mus[variant % 6];
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { ApplyMirostatAt(version, mu, c, sh); },
        [&](const ref::Logits& l, const ref::Cands& rc) {
          return version == 1 ? ref::MirostatV1(l, rc, mu) : ref::Mirostat(l, rc, mu);
        });
  });
}

}  // namespace

TEST_CASE("mirostat v2: truncation by surprise, at least one token, and the mu update") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.3f, 0.2f, 0.1f});
  auto run = [&](const std::vector<float>& r, float mu, size_t top_k = 0) {
    bd::Candidates c = sh.Make(r);
    if (top_k) bd::ApplyTopK(c, top_k, sh.ws);
    ApplyMirostatAt(2, mu, c, sh);
    return sh.Finish(c);
  };
  // Surprises (bits): 1.3219, 1.7370, 2.3219, 3.3219.
  Expect(run(row, 2.0f), {0, 1}, {4 / 7.0, 3 / 7.0});
  Expect(run(row, 10.0f), {0, 1, 2, 3}, {0.4, 0.3, 0.2, 0.1});
  Expect(run(row, 0.5f), {0}, {1.0});   // none passes: the most probable
  Expect(run(row, -3.0f), {0}, {1.0});
  // Uniform 4: every surprise is exactly 2 bits; surprise == mu is kept.
  const std::vector<float> flat(4, 0.0f);
  CHECK(run(flat, 2.0f).ids.size() == 4);
  Expect(run(flat, std::nextafter(2.0f, 0.0f)), {0}, {1.0});
  // A list: after top-k 3, p = {4/9, 3/9, 2/9}: surprises 1.17, 1.58, 2.17.
  Expect(run(row, 2.0f, 3), {0, 1}, {4 / 7.0, 3 / 7.0});
  // Update: mu -= eta (-log2 p - tau) = 2 - 0.1 (log2(7/4) - 5).
  bd::MirostatState s;
  s.mu = 2.0f;
  bd::MirostatUpdate(s, bd::MirostatParams{5.0f, 0.1f}, 4.0 / 7.0);
  CHECK(s.mu == doctest::Approx(2.4192645078).epsilon(1e-6));
  bd::MirostatReset(s, bd::MirostatParams{3.0f, 0.1f});
  CHECK(s.mu == 6.0f);
  CHECK(bd::MirostatState{}.mu == 2.0f * bd::MirostatParams{}.tau);
}

TEST_CASE("mirostat v2: random rows match the float64 reference") {
  const Tally t = MirostatSweep(701, 2);
  Report("mirostat", t);
  CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
}

TEST_CASE("mirostat 1.0: k from the head's Zipf exponent, worked examples") {
  Shaper sh;
  const std::vector<float> row = FromProbs({0.4f, 0.3f, 0.2f, 0.1f});
  auto run = [&](const std::vector<float>& r, float mu, size_t top_k = 0) {
    bd::Candidates c = sh.Make(r);
    if (top_k) bd::ApplyTopK(c, top_k, sh.ws);
    ApplyMirostatAt(1, mu, c, sh);
    return sh.Finish(c);
  };
  // p = 0.4, 0.3, 0.2, 0.1, V = 4 (float64 Python, apart): s = 0.774053942110;
  // k = 3.19430051381 at mu 2, 1.30459356459 at mu 1, 7.82125257202 at mu 3,
  // 0.833729103854 at mu 0.5.
  CHECK(bd::MirostatV1K(0.7740539421101141, 2.0, 4) == doctest::Approx(3.1943005138056466).epsilon(1e-12));
  CHECK(bd::MirostatV1K(0.7740539421101141, 10.0, 4) == doctest::Approx(4126.483254709417).epsilon(1e-12));
  Expect(run(row, 2.0f), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  Expect(run(row, 1.0f), {0}, {1.0});
  Expect(run(row, 3.0f), {0, 1, 2, 3}, {0.4, 0.3, 0.2, 0.1});
  Expect(run(row, 0.5f), {0}, {1.0});  // k < 1: the most probable
  // A list (after top-k 3: p = 4/9, 3/9, 2/9, V still 4): s = 0.564170..,
  // k = 3.72817.. at mu 2, not below the 3 left: all kept.
  Expect(run(row, 2.0f, 3), {0, 1, 2}, {4 / 9.0, 3 / 9.0, 2 / 9.0});
  // s = 1 exactly takes the limit 2^mu / ln V: p_i proportional to 1/(i+1).
  CHECK(bd::MirostatV1K(1.0, 3.0, 1000) == doctest::Approx(8.0 / std::log(1000.0)).epsilon(1e-12));
  // One candidate: kept whatever mu.
  Expect(run(FromProbs({1.0f}), 0.0f), {0}, {1.0});
}

TEST_CASE("mirostat 1.0: random rows match the float64 reference") {
  const Tally t = MirostatSweep(703, 1);
  Report("mirostat 1.0", t);
  CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
}

TEST_CASE("typical: the histogram of a sampled distance band gives the full histogram's cut") {
  // The first bracket's histogram covers only a band around the centre that
  // a sample of the candidates says holds the stop; where it falls short the full
  // histogram completes it. Either way the buckets read are the full
  // histogram's sums, so the kept tokens and their probabilities must be
  // the same bits as without the band. Rows: LLM-shaped as the bench's (a
  // Gaussian floor with a Zipf head: the band holds the stop), the same with
  // the sample's positions (16 runs of 256 candidates, evenly spread) raised
  // to just outside the typical set (the sample overstates the tail's mass,
  // which the band's margin absorbs), flat (the band
  // would hold too much of the row: the full histogram at once), and flat
  // with the sample misled into a reach short of the stop (the histogram is
  // redone with the full reach); on the row and on a list. A band fixed far too short (16 buckets) checks the
  // completion on every row. On the row, the cut then takes its annulus and
  // survivors from the band's tokens instead of the row. Flat rows take a
  // ring around the sampled stop instead of a band; its hole is weighed by
  // BandSum's float-lane sums rather than its buckets' double sums, and a
  // band's (or ring's) inner band is weighed from its own list rather than
  // by BandSum over the row (float-lane sums grouped otherwise), so a cut can
  // move where the walk's margin is below ~1e-7 of the mass (inside
  // kExceedFuzz): such a case must differ by the one token at the stop, with
  // the smaller set's mass within 2e-6 of p (long double). The wasm build's
  // rows (libc++'s normal_distribution) have one such case.
  std::mt19937_64 rng(907);
  std::normal_distribution<double> g(0.0, 1.0);
  struct Row {
    std::vector<float> v;
    bool list;
  };
  std::vector<Row> rows;
  for (size_t v : {size_t{70000}, size_t{262144}}) {
    for (int shape = 0; shape < 4; ++shape) {
      std::vector<float> row(v);
      for (float& x : row) x = static_cast<float>((shape >= 2 ? 1.0 : 1.5) * g(rng));
      if (shape == 3) {
        // Flat, with the sample's positions near the centre (~1): for
        // p = 0.5 the sample puts the stop within ~0.17 and cuts the
        // histogram's reach to ~0.5, short of the true stop (~0.67): the
        // full reach is taken again.
        for (size_t run = 0; run < 16; ++run) {
          for (size_t i = run * (v / 16); i < run * (v / 16) + 256; ++i) {
            row[i] = i % 10 < 3 ? 0.75f : 1.0f;
          }
        }
      }
      if (shape < 2) {
        for (size_t r = 0; r < 1000; ++r) {
          row[rng() % v] = static_cast<float>(12.0 - 1.1 * std::log(r + 1.0));
        }
      }
      if (shape == 1) {
        for (size_t run = 0; run < 16; ++run) {
          for (size_t i = run * (v / 16); i < run * (v / 16) + 256; ++i) row[i] = 2.5f;
        }
      }
      rows.push_back({row, false});
      rows.push_back({row, true});
    }
  }
  int cases = 0, same = 0, at_stop = 0;
  // x and y nested, one token apart, the smaller one's mass within 2e-6 of p.
  auto moved_at_stop = [](const std::vector<float>& v, double temp, float p, const ref::Dist& x,
                          const ref::Dist& y) {
    const ref::Dist& small = x.ids.size() < y.ids.size() ? x : y;
    const ref::Dist& large = x.ids.size() < y.ids.size() ? y : x;
    if (large.ids.size() != small.ids.size() + 1) return false;
    std::vector<int32_t> a = small.ids, b = large.ids;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (!std::includes(b.begin(), b.end(), a.begin(), a.end())) return false;
    const float max = *std::max_element(v.begin(), v.end());
    long double z = 0.0L, m = 0.0L;
    for (float l : v) z += std::exp(static_cast<long double>(l - max) / temp);
    for (int32_t i : a) m += std::exp(static_cast<long double>(v[i] - max) / temp);
    return std::fabs(static_cast<double>(m / z) - p) <= 2e-6;
  };
  bd::StageProbes total;  // summed over the cases' workspaces
  for (const Row& row : rows) {
    for (float p : {0.5f, 0.9f, 0.99f}) {
      for (double temp : {1.0, 0.7}) {
       // The sampled band or ring; a band far too short; rings whose hole
       // holds the stop, which hold it, which fall short of it (the sampled
       // reach puts it near bucket 1365 of 4096).
       const uint32_t forced_rings[][2] = {{0, 0}, {0, 16}, {2400, 3000}, {1000, 1800}, {300, 700}};
       for (const auto& forced : forced_rings) {
        ref::Dist by[2];
        for (int band = 0; band < 2; ++band) {
          Shaper sh;
          sh.ws.tuning.typical_forced_ring_first = forced[0];
          sh.ws.tuning.typical_forced_ring_limit = forced[1];
          sh.ws.tuning.typical_histogram_bands = band == 1;
          bd::Candidates c = sh.Make(row.v);
          // A list: all but the 7 lowest tokens.
          if (row.list) bd::ApplyTopK(c, row.v.size() - 7, sh.ws);
          if (temp != 1.0) bd::ApplyTemperature(c, static_cast<float>(temp));
          bd::ApplyTypical(c, bd::TypicalParams{p, 1}, sh.ws, sh.ctx);
          by[band] = sh.Finish(c);
          const bd::StageProbes& got = sh.ws.probes;
          total.typical_histogram_band_hits += got.typical_histogram_band_hits;
          total.typical_histogram_band_misses += got.typical_histogram_band_misses;
          total.typical_band_list_cuts += got.typical_band_list_cuts;
          total.typical_histogram_reach_misses += got.typical_histogram_reach_misses;
          total.typical_histogram_rings += got.typical_histogram_rings;
          total.typical_histogram_ring_misses += got.typical_histogram_ring_misses;
        }
        ++cases;
        const bool identical = by[0].ids == by[1].ids && by[0].probs == by[1].probs;
        same += identical;
        if (!identical) {
          INFO("V=" << row.v.size() << " list=" << row.list << " p=" << p << " T=" << temp
                    << " forced ring " << forced[0] << "-" << forced[1] << ": " << by[0].ids.size()
                    << " tokens without the band, " << by[1].ids.size() << " with it");
          CHECK(moved_at_stop(row.v, temp, p, by[0], by[1]));
          ++at_stop;
        }
       }
      }
    }
  }
  const size_t hits = total.typical_histogram_band_hits;
  const size_t misses = total.typical_histogram_band_misses;
  const size_t list_cuts = total.typical_band_list_cuts;
  const size_t reach_misses = total.typical_histogram_reach_misses;
  const size_t rings = total.typical_histogram_rings;
  const size_t ring_misses = total.typical_histogram_ring_misses;
  MESSAGE(same << " of " << cases << " cases identical (" << at_stop
               << " moved by the one token at the stop); band histograms " << hits << " held the stop, "
               << misses << " fell short; " << list_cuts << " cuts from the band's tokens; "
               << reach_misses << " sampled reaches fell short; " << rings << " rings, "
               << ring_misses << " with the stop in the hole");
  CHECK(same + at_stop == cases);
  CHECK(at_stop <= 2);
  CHECK(hits > 0);
  CHECK(misses > 0);
  CHECK(list_cuts > 0);
  CHECK(reach_misses > 0);
  CHECK(rings > 0);
  CHECK(ring_misses > 0);
}
