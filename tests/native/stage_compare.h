// The shared harness of the stage tests: a candidate set over a row, random
// row shapes, and the comparison of a production stage with its float64
// reference over a sweep of sizes, shapes, truncations and temperatures
// (a disagreement counts as ambiguous where the reference's margin is below
// the production arithmetic's resolution).
#pragma once

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
#include "kernels/row_scan.h"
#include "kernels/threshold.h"
#include "reference/shaping_reference.h"
#include "stages/stages.h"
#include "workspace.h"

namespace {

namespace ref = shaping_ref;
constexpr float kInf = std::numeric_limits<float>::infinity();

// A candidate set over a private copy of `row`, built as decoder.cc's
// RunChain does.
struct Shaper {
  bd::Workspace ws;
  bd::StageContext ctx;

  bd::Candidates Make(const std::vector<float>& row) {
    ws.Reserve(row.size());
    std::memcpy(ws.row.data(), row.data(), row.size() * sizeof(float));
    bd::Candidates c;
    c.row = ws.row.data();
    c.vocab = row.size();
    c.row_max = bd::ScanRow(c.row, row.size()).max;
    c.row_finite = bd::CountAtLeast(c.row, row.size(), -FLT_MAX);
    c.ids = ws.ids.data();
    c.logits = ws.logits.data();
    return c;
  }

  // The survivors in canonical order with their probabilities (float64).
  ref::Dist Finish(bd::Candidates& c) {
    bd::EnsureSorted(c, c.Count(), ws);
    bd::TruncateToSorted(c, c.Count());
    ref::Dist d;
    double z = 0.0;
    for (size_t i = 0; i < c.size; ++i) {
      d.ids.push_back(c.ids[i]);
      d.probs.push_back(std::exp((static_cast<double>(c.logits[i]) - c.logits[0]) / c.temperature));
      z += d.probs.back();
    }
    for (double& p : d.probs) p /= z;
    return d;
  }
};

std::vector<float> FromProbs(std::initializer_list<float> probs) {
  std::vector<float> row;
  for (float p : probs) row.push_back(std::log(p));
  return row;
}

void Expect(const ref::Dist& got, const std::vector<int32_t>& ids, const std::vector<double>& probs,
            double tol = 1e-6) {
  REQUIRE(got.ids.size() == ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    CHECK(got.ids[i] == ids[i]);
    CHECK(got.probs[i] == doctest::Approx(probs[i]).epsilon(tol));
  }
}

// LLM-like logits: a Zipf-shaped head over a Gaussian floor, random order.
std::vector<float> LlmRow(size_t v, std::mt19937_64& rng, double s) {
  std::vector<float> row(v);
  std::normal_distribution<double> noise(0.0, 0.3);
  for (size_t i = 0; i < v; ++i) row[i] = static_cast<float>(-s * std::log(i + 1.0) + noise(rng));
  std::shuffle(row.begin(), row.end(), rng);
  return row;
}

// kind 0: Zipf; 1: nearly flat; 2: Zipf with bans and ties; 3: wide Gaussian.
std::vector<float> RandomRow(size_t v, int kind, std::mt19937_64& rng) {
  if (kind == 1 || kind == 3) {
    std::normal_distribution<double> g(0.0, kind == 1 ? 0.05 : 3.0);
    std::vector<float> row(v);
    for (float& x : row) x = static_cast<float>(g(rng));
    return row;
  }
  std::vector<float> row = LlmRow(v, rng, 0.8 + 0.1 * static_cast<double>(rng() % 6));
  if (kind == 2 && v > 4) {
    row[0] = -kInf;
    row[v / 2] = -kInf;
    row[1] = row[2];
    for (size_t i = 3; i + v / 3 < v; i += 7) row[i] = row[i + v / 3];
  }
  return row;
}

// Every case is compared; a disagreement is excused (and counted) only when
// the reference's own decision was within 1e-9 (a tie) or 1e-6 (the ~1e-7
// resolution of the production float-lane sums) of flipping.
struct Tally {
  int cases = 0;
  int ambiguous = 0;        // disagreed, reference margin < 1e-9
  int float_ambiguous = 0;  // disagreed, reference margin < 1e-6
};

// One random case: production stage `apply` vs reference `reference`, from
// the full row or after a top-k, optionally after a temperature.
void CompareCase(Tally& tally, const std::vector<float>& row, size_t top_k, double temperature,
                 const std::function<void(bd::Candidates&, Shaper&)>& apply,
                 const std::function<ref::Result(const ref::Logits&, const ref::Cands&)>& reference) {
  Shaper sh;
  bd::Candidates c = sh.Make(row);
  ref::Cands rc = ref::All(row);
  if (top_k > 0) {
    bd::ApplyTopK(c, top_k, sh.ws);
    rc = ref::TopK(row, rc, top_k);
  }
  if (temperature != 1.0) {
    bd::ApplyTemperature(c, static_cast<float>(temperature));
    rc.temperature = static_cast<float>(temperature);
  }
  apply(c, sh);
  const ref::Result want_r = reference(row, rc);
  ++tally.cases;
  const ref::Dist got = sh.Finish(c);
  const ref::Dist want = ref::Finish(row, want_r.c);
  bool same = got.ids == want.ids;
  for (size_t i = 0; same && i < got.ids.size(); ++i) same = std::fabs(got.probs[i] - want.probs[i]) <= 1e-6;
  if (!same && want_r.margin < 1e-9) {  // an exact tie the arithmetic may break
    ++tally.ambiguous;
    return;
  }
  if (!same && want_r.margin < 1e-6) {  // within the float sums' resolution
    ++tally.float_ambiguous;
    return;
  }
  INFO("V=" << row.size() << " top_k=" << top_k << " T=" << temperature
            << " got k=" << got.ids.size() << " want k=" << want.ids.size()
            << " margin=" << want_r.margin);
  REQUIRE(got.ids == want.ids);
  for (size_t i = 0; i < got.ids.size(); ++i) REQUIRE(std::fabs(got.probs[i] - want.probs[i]) <= 1e-6);
}

// Every row shape, vocabulary size, state and temperature, for one stage.
template <class MakeParams>
Tally Sweep(uint64_t seed, MakeParams make) {
  std::mt19937_64 rng(seed);
  Tally tally;
  for (size_t v : {1, 2, 3, 5, 17, 64, 100, 1000, 5000}) {
    for (int kind = 0; kind < 4; ++kind) {
      const std::vector<float> row = RandomRow(v, kind, rng);
      for (int variant = 0; variant < 6; ++variant) {
        const size_t top_k = (variant % 2 == 1) ? 1 + rng() % (v + 1) : 0;
        const double temperature = variant >= 4 ? 0.7 : 1.0;
        make(tally, row, top_k, temperature, variant, rng);
      }
    }
  }
  return tally;
}

void Report(const char* stage, const Tally& t) {
  MESSAGE(std::string(stage) << ": " << t.cases << " random cases vs the float64 reference; "
                             << t.ambiguous << " disagreed at a tie (margin < 1e-9), "
                             << t.float_ambiguous << " within float resolution (margin < 1e-6)");
}

}  // namespace
