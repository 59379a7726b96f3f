// The decoders after the Bregman paper: p-less and p-less-norm, Top-H and
// llama.cpp's adaptive-p. Worked examples whose expected values were computed
// apart from this code (tests/reference/adaptive_vectors.py: each rule in
// float64 Python; its values are quoted beside each case), random rows in both candidate states against the float64
// reference in tests/reference/adaptive_reference.h, and adaptive-p's EMA
// through a sampler's state (reset, clone).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <random>
#include <vector>

#include "decoder.h"
#include "kernels/moments.h"
#include "reference/adaptive_reference.h"
#include "sampler_state.h"
#include "stages/adaptive_p.h"
#include "stages/p_less.h"
#include "stages/top_h.h"
#include "stage_compare.h"

namespace {

namespace aref = adaptive_ref;

ref::Dist RunPLess(const std::vector<float>& row, bd::PLessMode mode, size_t min_keep = 1) {
  Shaper sh;
  bd::Candidates c = sh.Make(row);
  bd::ApplyPLess(c, bd::PLessParams{mode, min_keep}, sh.ws, sh.ctx);
  return sh.Finish(c);
}

ref::Dist RunTopH(const std::vector<float>& row, float coefficient, size_t min_keep = 1) {
  Shaper sh;
  bd::Candidates c = sh.Make(row);
  bd::ApplyTopH(c, bd::TopHParams{coefficient, min_keep}, sh.ws, sh.ctx);
  return sh.Finish(c);
}

}  // namespace

// ---------------------------------------------------------------- p-less

TEST_CASE("ExpSquares: sum e and sum e^2 match scalar double sums (tails, -inf, sizes)") {
  std::mt19937_64 rng(400);
  std::normal_distribution<double> g(0.0, 2.0);
  for (size_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1023, 1024, 1025, 5000}) {
    std::vector<float> v(n + 1);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(g(rng));
    if (n > 2) v[n / 2] = -kInf;
    const float max = n ? *std::max_element(v.begin(), v.begin() + n) : 0.0f;
    for (const float scale : {1.0f, 0.5f, 3.0f}) {
      double e1 = 0.0, e2 = 0.0;
      for (size_t i = 0; i < n; ++i) {
        const double e = std::exp((static_cast<double>(v[i]) - max) * scale);
        e1 += e;
        e2 += e * e;
      }
      const bd::ExpSquareSums s = bd::ExpSquares(v.data(), n, max, scale);
      CHECK(s.sum_e == doctest::Approx(e1).epsilon(1e-6));
      CHECK(s.sum_e2 == doctest::Approx(e2).epsilon(1e-6));
    }
  }
}

TEST_CASE("p-less: worked examples (Tan, Wu, Howard 2025 rule, float64 Python)") {
  // p = (0.35, 0.3, 0.2, 0.15): sum p^2 = 0.275 keeps 0.35 and 0.3
  // -> (0.5384615384615385, 0.46153846153846156); norm: (4 * 0.275 - 1) / 3
  // = 0.0333 keeps all four.
  const std::vector<float> a = FromProbs({0.35f, 0.3f, 0.2f, 0.15f});
  Expect(RunPLess(a, bd::PLessMode::kPLess), {0, 1}, {0.5384615384615385, 0.46153846153846156});
  Expect(RunPLess(a, bd::PLessMode::kNorm), {0, 1, 2, 3}, {0.35, 0.3, 0.2, 0.15});
  // p = (0.5, 0.2, 0.15, 0.1, 0.05): sum p^2 = 0.325 keeps 0.5 alone; norm:
  // (5 * 0.325 - 1) / 4 = 0.15625 keeps 0.5 and 0.2 -> (0.7142857142857143,
  // 0.28571428571428575).
  const std::vector<float> b = FromProbs({0.5f, 0.2f, 0.15f, 0.1f, 0.05f});
  Expect(RunPLess(b, bd::PLessMode::kPLess), {0}, {1.0});
  Expect(RunPLess(b, bd::PLessMode::kNorm), {0, 1}, {0.7142857142857143, 0.28571428571428575});
  // min_keep 3 keeps the three most probable where fewer pass.
  Expect(RunPLess(b, bd::PLessMode::kPLess, 3), {0, 1, 2}, {0.5 / 0.85, 0.2 / 0.85, 0.15 / 0.85});
  // A uniform row: every token passes (p = sum p^2), and norm's threshold is 0.
  const std::vector<float> u(7, 0.25f);
  CHECK(RunPLess(u, bd::PLessMode::kPLess).ids.size() == 7);
  CHECK(RunPLess(u, bd::PLessMode::kNorm).ids.size() == 7);
  // Off: no-op.
  CHECK(RunPLess(b, bd::PLessMode::kOff).ids.size() == 5);
}

TEST_CASE("p-less: the threshold of each mode") {
  CHECK(bd::PLessThreshold(bd::PLessMode::kPLess, 0.275, 4) == 0.275);
  CHECK(bd::PLessThreshold(bd::PLessMode::kNorm, 0.275, 4) == doctest::Approx(0.1 / 3).epsilon(1e-12));
  CHECK(bd::PLessThreshold(bd::PLessMode::kNorm, 0.25, 4) == 0.0);
}

TEST_CASE("p-less and p-less-norm: random rows match the float64 reference") {
  for (const bool norm : {false, true}) {
    const Tally t = Sweep(norm ? 402 : 401, [&](Tally& tally, const std::vector<float>& row, size_t top_k,
                                               double temp, int, std::mt19937_64& rng) {
      const size_t min_keep = (rng() % 3 == 0) ? 1 + rng() % 10 : 1;
      const bd::PLessMode mode = norm ? bd::PLessMode::kNorm : bd::PLessMode::kPLess;
      CompareCase(
          tally, row, top_k, temp,
          [&](bd::Candidates& c, Shaper& sh) { bd::ApplyPLess(c, bd::PLessParams{mode, min_keep}, sh.ws, sh.ctx); },
          [&](const ref::Logits& l, const ref::Cands& rc) { return aref::PLess(l, rc, norm, min_keep); });
    });
    Report(norm ? "p-less-norm" : "p-less", t);
    CHECK(t.cases == 216);  // 9 sizes x 4 row shapes x 6 variants
    CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
  }
}

// ---------------------------------------------------------------- top-h

TEST_CASE("top-h: worked examples (Baghaei Potraghloo et al. 2025 rule, float64 Python)") {
  // p = (0.4, 0.25, 0.15, 0.1, 0.06, 0.04), H(p) = 1.5254760660622515 nats;
  // the renormalised prefixes' entropies are 0.666278442414676 (2 tokens),
  // 1.0239287996389361 (3), 1.2589910288554198 (4), 1.4140957482584153 (5).
  const std::vector<float> row = FromProbs({0.4f, 0.25f, 0.15f, 0.1f, 0.06f, 0.04f});
  // alpha 0.3: bound 0.45764 < 0.66628: the first token alone.
  Expect(RunTopH(row, 0.3f), {0}, {1.0});
  // alpha 0.5: bound 0.76274 keeps 2 -> (0.6153846153846154, 0.3846153846153846).
  Expect(RunTopH(row, 0.5f), {0, 1}, {0.6153846153846154, 0.3846153846153846});
  // alpha 0.8: bound 1.22038 keeps 3 -> (0.5, 0.3125, 0.1875).
  Expect(RunTopH(row, 0.8f), {0, 1, 2}, {0.5, 0.3125, 0.1875});
  // alpha 1: every token (the whole set's entropy is H(p)); min_keep 4 at 0.3.
  CHECK(RunTopH(row, 1.0f).ids.size() == 6);
  CHECK(RunTopH(row, 0.3f, 4).ids.size() == 4);
  CHECK(RunTopH(row, 0.0f).ids.size() == 6);
}

TEST_CASE("top-h: random rows match the float64 reference") {
  const Tally t = Sweep(403, [](Tally& tally, const std::vector<float>& row, size_t top_k, double temp,
                                int variant, std::mt19937_64& rng) {
    const float alphas[] = {0.05f, 0.2f, 0.4f, 0.6f, 0.8f, 0.95f};
    const float a = alphas[variant % 6];
    const size_t min_keep = (rng() % 3 == 0) ? 1 + rng() % 10 : 1;
    CompareCase(
        tally, row, top_k, temp,
        [&](bd::Candidates& c, Shaper& sh) { bd::ApplyTopH(c, bd::TopHParams{a, min_keep}, sh.ws, sh.ctx); },
        [&](const ref::Logits& l, const ref::Cands& rc) { return aref::TopH(l, rc, a, min_keep); });
  });
  Report("top-h", t);
  CHECK(t.cases == 216);  // 9 sizes x 4 row shapes x 6 variants
  CHECK(t.ambiguous + t.float_ambiguous <= t.cases / 50);
}

TEST_CASE("top-h: a 128K LLM row keeps the reference's prefix") {
  std::mt19937_64 rng(404);
  for (const double s : {0.6, 1.0, 1.4}) {
    const std::vector<float> row = LlmRow(131072, rng, s);
    Tally tally;
    for (const float a : {0.2f, 0.5f, 0.8f}) {
      CompareCase(
          tally, row, 0, 1.0,
          [&](bd::Candidates& c, Shaper& sh) { bd::ApplyTopH(c, bd::TopHParams{a, 1}, sh.ws, sh.ctx); },
          [&](const ref::Logits& l, const ref::Cands& rc) { return aref::TopH(l, rc, a, 1); });
    }
    CHECK(tally.ambiguous + tally.float_ambiguous == 0);
  }
}

// ---------------------------------------------------------------- adaptive-p

namespace {

// A decoder call with only adaptive-p on (and the temperature given).
bd::DecodeOptions AdaptiveOptions(float target, float decay, float temperature = 1.0f) {
  bd::DecodeOptions o;
  o.adaptive_p.target = target;
  o.adaptive_p.decay = decay;
  o.temperature = temperature;
  o.seed = 7;
  return o;
}

// The distribution a decode() returns, as ref::Dist (ids in its order).
ref::Dist Decoded(bd::Decoder& d) {
  ref::Dist out;
  for (size_t i = 0; i < d.k(); ++i) {
    out.ids.push_back(d.ids()[i]);
    out.probs.push_back(d.probs()[i]);
  }
  return out;
}

// The reference's distribution by id.
std::vector<double> ByIdReference(const std::vector<float>& row, double temperature, double adapted) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < row.size(); ++i) ids.push_back(static_cast<int32_t>(i));
  return aref::AdaptiveDraw(shaping_ref::Probs(row, ids, temperature), adapted);
}

void ExpectDecodedMatches(bd::Decoder& d, const std::vector<double>& want) {
  const ref::Dist got = Decoded(d);
  REQUIRE(got.ids.size() == want.size());
  for (size_t i = 0; i < got.ids.size(); ++i) {
    CHECK(got.probs[i] == doctest::Approx(want[got.ids[i]]).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("adaptive-p: worked example and EMA (llama.cpp PR 17927 rule, float64 Python)") {
  // p = (0.5, 0.3, 0.2), target 0.3, decay 0.9, fresh state (adapted 0.3):
  // q = (0.04619659496099442, 0.6648575185602565, 0.2889458864787491).
  const std::vector<float> row = FromProbs({0.5f, 0.3f, 0.2f});
  bd::Decoder d;
  bd::DecodeOptions o = AdaptiveOptions(0.3f, 0.9f);
  REQUIRE(d.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  ExpectDecodedMatches(d, {0.04619659496099442, 0.6648575185602565, 0.2889458864787491});
  // After drawing the token of p 0.5: ws = 3.2, tw = 10, adapted 0.28;
  // q = (0.028537915820381638, 0.6091904951180378, 0.3622715890615806).
  bd::SamplerState s;
  s.Reset(o.mirostat, o.adaptive_p);
  CHECK(bd::AdaptivePTarget(s.adaptive_p(), o.adaptive_p) == doctest::Approx(0.3).epsilon(1e-7));
  bd::AdaptivePUpdate(s.adaptive_p(), o.adaptive_p, 0.5);
  // (decay is the float 0.9f: within 1e-7 of the Python's 0.9.)
  CHECK(s.adaptive_p().weighted_sum == doctest::Approx(3.2).epsilon(1e-6));
  CHECK(s.adaptive_p().total_weight == doctest::Approx(10.0).epsilon(1e-6));
  CHECK(bd::AdaptivePTarget(s.adaptive_p(), o.adaptive_p) == doctest::Approx(0.28).epsilon(1e-6));
  REQUIRE(d.Decode(row.data(), row.size(), o, &s) == bd::StatusCode::kOk);
  ExpectDecodedMatches(d, {0.028537915820381638, 0.6091904951180378, 0.3622715890615806});
}

TEST_CASE("adaptive-p: sample() updates the sampler's EMA with the drawn token's original p") {
  std::mt19937_64 rng(405);
  const std::vector<float> row = LlmRow(5000, rng, 1.0);
  const float temperature = 1.3f;
  bd::DecodeOptions o = AdaptiveOptions(0.2f, 0.8f, temperature);
  bd::SamplerState s;
  s.Reset(o.mirostat, o.adaptive_p);
  aref::AdaptiveState want = aref::AdaptiveReset(0.2, static_cast<double>(0.8f));
  std::vector<int32_t> ids;
  for (size_t i = 0; i < row.size(); ++i) ids.push_back(static_cast<int32_t>(i));
  const std::vector<double> p = shaping_ref::Probs(row, ids, temperature);
  bd::Decoder d;
  for (int step = 0; step < 40; ++step) {
    // The distribution this step draws from is the reference's at its target.
    REQUIRE(d.Decode(row.data(), row.size(), o, &s) == bd::StatusCode::kOk);
    ExpectDecodedMatches(d, aref::AdaptiveDraw(p, aref::AdaptiveTarget(want, 0.2)));
    REQUIRE(d.Sample(row.data(), row.size(), o, &s) == bd::StatusCode::kOk);
    aref::AdaptiveUpdate(want, static_cast<double>(0.8f), p[d.token()]);
    CHECK(s.adaptive_p().weighted_sum == doctest::Approx(want.weighted_sum).epsilon(1e-6));
    CHECK(s.adaptive_p().total_weight == doctest::Approx(want.total_weight).epsilon(1e-9));
  }
  // No token of this row reaches p 0.2 (its largest p is far below): the
  // EMA stays below the target and the adapted target rises to its clamp.
  CHECK(bd::AdaptivePTarget(s.adaptive_p(), o.adaptive_p) > 0.3);
  // clone() = copy: both continue alike; reset() restores the converged EMA.
  bd::SamplerState copy = s;
  bd::Decoder d2;
  for (int step = 0; step < 5; ++step) {
    REQUIRE(d.Sample(row.data(), row.size(), o, &s) == bd::StatusCode::kOk);
    REQUIRE(d2.Sample(row.data(), row.size(), o, &copy) == bd::StatusCode::kOk);
    CHECK(d.token() == d2.token());
    CHECK(s.adaptive_p().weighted_sum == copy.adaptive_p().weighted_sum);
  }
  s.Reset(o.mirostat, o.adaptive_p);
  CHECK(s.adaptive_p().weighted_sum == doctest::Approx(0.2f / (1.0 - 0.8f)).epsilon(1e-12));
  CHECK(s.adaptive_p().total_weight == doctest::Approx(1.0 / (1.0 - 0.8f)).epsilon(1e-12));
}

TEST_CASE("adaptive-p: after a truncation, greedy, off, and its checks") {
  std::mt19937_64 rng(406);
  const std::vector<float> row = LlmRow(3000, rng, 1.2);
  bd::Decoder d;
  // After min_p, the transform sees the survivors' renormalised p.
  bd::DecodeOptions o = AdaptiveOptions(0.1f, 0.9f);
  o.min_p = 0.02f;
  REQUIRE(d.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  {
    std::vector<int32_t> ids;
    const float max = *std::max_element(row.begin(), row.end());
    for (size_t i = 0; i < row.size(); ++i)
      if (row[i] >= max + std::log(0.02f)) ids.push_back(static_cast<int32_t>(i));
    const std::vector<double> q = aref::AdaptiveDraw(shaping_ref::Probs(row, ids, 1.0), 0.1);
    const ref::Dist got = Decoded(d);
    REQUIRE(got.ids.size() == ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const size_t j = static_cast<size_t>(std::find(got.ids.begin(), got.ids.end(), ids[i]) - got.ids.begin());
      REQUIRE(j < got.ids.size());
      CHECK(got.probs[j] == doctest::Approx(q[i]).epsilon(1e-5));
    }
  }
  // Greedy (temperature 0): the first maximum, and the EMA takes p = 1.
  bd::SamplerState s;
  bd::DecodeOptions g = AdaptiveOptions(0.1f, 0.5f, 0.0f);
  s.Reset(g.mirostat, g.adaptive_p);
  REQUIRE(d.Sample(row.data(), row.size(), g, &s) == bd::StatusCode::kOk);
  CHECK(d.token() == static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
  CHECK(s.adaptive_p().weighted_sum == doctest::Approx(1.0 + 0.5 * 0.2).epsilon(1e-7));
  // Off (negative target): the plain distribution.
  bd::DecodeOptions off = AdaptiveOptions(-1.0f, 0.9f);
  REQUIRE(d.Decode(row.data(), row.size(), off) == bd::StatusCode::kOk);
  CHECK(d.k() == row.size());
  // Checks name the option.
  bd::DecodeOptions bad = AdaptiveOptions(1.5f, 0.9f);
  CHECK(d.Check(bad) == bd::StatusCode::kRangeError);
  CHECK(std::string(d.error()).find("adaptive_target") != std::string::npos);
  bad = AdaptiveOptions(0.3f, 0.995f);
  CHECK(d.Check(bad) == bd::StatusCode::kRangeError);
  CHECK(std::string(d.error()).find("adaptive_decay") != std::string::npos);
  bad = AdaptiveOptions(0.3f, 0.9f);
  bad.mirostat_enabled = true;
  CHECK(d.Check(bad) == bd::StatusCode::kRangeError);
  bad = AdaptiveOptions(-1.0f, 0.9f);
  bad.top_h.coefficient = 1.5f;
  CHECK(d.Check(bad) == bd::StatusCode::kRangeError);
  CHECK(std::string(d.error()).find("top_h") != std::string::npos);
}
