// The decoder end to end (greedy, temperature, top-k, top-p, min-p, Bregman,
// the seeded draw, errors, the allocation-free steady state) against the
// float64 reference chain in tests/reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "bregman/bregman.h"
#include "decoder.h"
#include "stages/stages.h"
#include "test_hooks.h"
#include "reference/bregman_oracle.h"
#include "reference/sampler_reference.h"
#include "rng.h"
#include "walk_probs.h"
#include "draw_twin.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// LLM-like logits: a Zipf-shaped head over a Gaussian floor, random order.
std::vector<float> LlmRow(size_t v, std::mt19937_64& rng, double s = 1.1) {
  std::vector<float> row(v);
  std::normal_distribution<double> noise(0.0, 0.3);
  for (size_t i = 0; i < v; ++i) row[i] = static_cast<float>(-s * std::log(i + 1.0) + noise(rng));
  std::shuffle(row.begin(), row.end(), rng);
  return row;
}

void CheckMatches(bd::Decoder& dec, const ref::Dist& want, double tol = 1e-6) {
  REQUIRE(dec.k() == want.ids.size());
  double sum = 0.0;
  for (size_t i = 0; i < want.ids.size(); ++i) {
    REQUIRE(dec.ids()[i] == want.ids[i]);
    REQUIRE(std::fabs(dec.probs()[i] - want.probs[i]) <= tol);
    sum += dec.probs()[i];
  }
  CHECK(std::fabs(sum - 1.0) <= 1e-6);
}

}  // namespace

TEST_CASE("greedy (temperature 0) returns the first maximum") {
  bd::Decoder dec;
  std::vector<float> row = {0.5f, 3.0f, -1.0f, 3.0f, -kInf};
  bd::DecodeOptions o;
  o.temperature = 0.0f;
  REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.token() == 1);
  CHECK(dec.logprob() == 0.0);
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 1);
  CHECK(dec.ids()[0] == 1);
  CHECK(dec.probs()[0] == 1.0f);
}

TEST_CASE("greedy in a custom order: stages after temperature see only its first maximum (llama.cpp's temp 0)") {
  // llama.cpp's temp sampler at 0 (llama_sampler_temp_impl) sets every logit
  // but the first maximum to -inf, so the stages after it in the chain act on
  // that one token and the draw returns it. Answers are llama.cpp's.
  bd::Decoder dec;
  auto greedy = [&dec](const std::vector<float>& row, bd::DecodeOptions o,
                       std::initializer_list<bd::StageId> order) {
    o.temperature = 0.0f;
    o.order_len = 0;
    for (bd::StageId s : order) o.order[o.order_len++] = s;
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    const int32_t token = dec.token();
    REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    REQUIRE(dec.k() == 1);
    CHECK(dec.ids()[0] == token);
    return token;
  };
  using bd::StageId;
  const std::vector<int32_t> history = {0};
  bd::DecodeOptions pen;
  pen.penalties.repetition = 10.0f;  // {2, 1} -> {0.2, 1} before the temperature
  pen.history = history.data();
  pen.history_len = history.size();
  CHECK(greedy({2.0f, 1.0f}, pen, {StageId::kPenalties, StageId::kTemperature}) == 1);
  CHECK(greedy({2.0f, 1.0f}, pen, {StageId::kTemperature, StageId::kPenalties}) == 0);

  bd::DecodeOptions xtc;  // both tokens are top choices: XTC removes token 0
  xtc.xtc.probability = 1.0f;
  xtc.xtc.threshold = 0.1f;
  CHECK(greedy({0.0f, -0.1f}, xtc, {StageId::kXtc, StageId::kTemperature}) == 1);
  CHECK(greedy({0.0f, -0.1f}, xtc, {StageId::kTemperature, StageId::kXtc}) == 0);

  bd::DecodeOptions typ;  // typical 0.15 on {0.4, 0.1 x 6} keeps two 0.1 tokens
  typ.typical.p = 0.15f;
  const std::vector<float> row = {std::log(4.0f), 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  CHECK(greedy(row, typ, {StageId::kTypical, StageId::kTemperature}) != 0);
  CHECK(greedy(row, typ, {StageId::kTemperature, StageId::kTypical}) == 0);

  const std::vector<int32_t> ids = {1};
  const std::vector<float> bias = {5.0f};
  bd::DecodeOptions lb;
  lb.logit_bias.ids = ids.data();
  lb.logit_bias.bias = bias.data();
  lb.logit_bias.n = 1;
  CHECK(greedy({2.0f, 1.0f, 0.0f}, lb, {StageId::kLogitBias, StageId::kTemperature}) == 1);
  CHECK(greedy({2.0f, 1.0f, 0.0f}, lb, {StageId::kTemperature, StageId::kLogitBias}) == 0);
  // Ties: the first maximum (the lowest id) is the one that stays.
  CHECK(greedy({1.0f, 3.0f, 3.0f}, lb, {StageId::kTemperature, StageId::kLogitBias}) == 1);
}

TEST_CASE("decode with temperature / top-k / top-p / min-p matches the float64 chain") {
  std::mt19937_64 rng(11);
  bd::Decoder dec;
  int cases = 0;
  for (size_t v : {1, 2, 3, 7, 16, 17, 100, 1000, 4096, 32000}) {
    for (int rep = 0; rep < 6; ++rep) {
      std::vector<float> row = LlmRow(v, rng, 0.6 + 0.2 * rep);
      if (rep == 3 && v > 4) {  // bans and ties
        row[0] = -kInf;
        row[1] = row[2];
      }
      for (int variant = 0; variant < 8; ++variant) {
        bd::DecodeOptions o;
        ref::ChainOptions r;
        const float temps[] = {1.0f, 0.5f, 2.0f, 0.7f};
        o.temperature = temps[variant % 4];
        r.temperature = o.temperature;
        if (variant == 1 || variant == 5) { o.top_k = r.top_k = 1 + static_cast<int>(rng() % (v + 2)); }
        if (variant == 2 || variant == 5) { o.top_p = 0.9f; r.top_p = 0.9; }
        if (variant == 3 || variant == 6) { o.min_p = 0.05f; r.min_p = 0.05; }
        if (variant == 6) { o.min_keep = r.min_keep = 3; }
        if (variant == 7) { o.top_k = r.top_k = 40; o.top_p = 0.5f; r.top_p = 0.5; o.min_p = 0.1f; r.min_p = 0.1; }
        CAPTURE(v);
        CAPTURE(rep);
        CAPTURE(variant);
        REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        CheckMatches(dec, ref::Chain(row, r));
        ++cases;
      }
    }
  }
  MESSAGE(cases << " chain configurations matched the float64 reference");
}

TEST_CASE("top-p boundary: a prefix sum exactly at p stops there (llama.cpp)") {
  bd::Decoder dec;
  // p = [0.5, 0.3, 0.2] written as logits.
  std::vector<float> row = {std::log(0.2f), std::log(0.5f), std::log(0.3f)};
  bd::DecodeOptions o;
  o.top_p = 0.8f;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 2);
  CHECK(dec.ids()[0] == 1);
  CHECK(dec.ids()[1] == 2);
  o.top_p = 0.81f;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 3);
}

TEST_CASE("all-equal logits: top-k keeps the lowest ids") {
  bd::Decoder dec;
  std::vector<float> row(1000, 0.25f);
  bd::DecodeOptions o;
  o.top_k = 5;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  REQUIRE(dec.k() == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(dec.ids()[i] == i);
    CHECK(dec.probs()[i] == doctest::Approx(0.2).epsilon(1e-6));
  }
}

TEST_CASE("Bregman alpha = 1 primal with fixed k equals plain top-k") {
  std::mt19937_64 rng(12);
  bd::Decoder dec;
  for (size_t v : {5, 64, 4096}) {
    std::vector<float> row = LlmRow(v, rng);
    for (size_t k : {size_t{1}, size_t{3}, v}) {
      bd::DecodeOptions o;
      o.bregman_enabled = true;
      o.bregman.alpha = 1.0;
      o.bregman.fixed_k = k;
      REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
      ref::ChainOptions r;
      r.top_k = static_cast<int>(k);
      CheckMatches(dec, ref::Chain(row, r));
    }
  }
}

TEST_CASE("seeded draws: deterministic, and the empirical law matches p") {
  bd::Decoder dec;
  std::vector<float> row = {std::log(0.1f), std::log(0.6f), -kInf, std::log(0.3f)};
  bd::DecodeOptions o;
  o.seed = 42;
  int counts[4] = {0, 0, 0, 0};
  const int n = 20000;
  for (int step = 0; step < n; ++step) {
    o.step = static_cast<uint64_t>(step);
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    REQUIRE(dec.token() >= 0);
    REQUIRE(dec.token() < 4);
    counts[dec.token()]++;
    if (step < 50) {
      const int32_t first = dec.token();
      REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
      CHECK(dec.token() == first);
      const double p = dec.token() == 0 ? 0.1 : dec.token() == 1 ? 0.6 : 0.3;
      CHECK(dec.logprob() == doctest::Approx(std::log(p)).epsilon(1e-5));
    }
  }
  CHECK(counts[2] == 0);
  // Binomial standard deviation at n = 20000 is <= 0.0035: allow 5 sigma.
  CHECK(std::fabs(counts[0] / double(n) - 0.1) < 0.018);
  CHECK(std::fabs(counts[1] / double(n) - 0.6) < 0.018);
  CHECK(std::fabs(counts[3] / double(n) - 0.3) < 0.018);
  // The truncated path draws from the same law.
  o.top_k = 2;
  int kept[4] = {0, 0, 0, 0};
  for (int step = 0; step < n; ++step) {
    o.step = static_cast<uint64_t>(step);
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    kept[dec.token()]++;
  }
  CHECK(kept[0] == 0);
  CHECK(std::fabs(kept[1] / double(n) - 0.6 / 0.9) < 0.018);
}

TEST_CASE("a draw from a list gathered from the row weighs it by the row's exps (reused)") {
  // Top-p on a large nucleus and typical leave the kept list's exps, measured
  // from the row's maximum; the draw over the list (ascending ids) sums them
  // instead of recomputing. It must draw what the documented draw (the
  // plain twin) draws from the list's logits in id order with exps from the
  // row's maximum; for top-p, which keeps that maximum, that is also the
  // untruncated draw of the list alone.
  std::mt19937_64 rng(23);
  bd::Decoder dec, plain;
  size_t reused = 0, draws = 0, max_left_out = 0;
  for (size_t v : {3000, 32000, 100000}) {
    for (double s : {0.5, 0.8, 1.1}) {
      const std::vector<float> row = LlmRow(v, rng, s);
      const float row_max = *std::max_element(row.begin(), row.end());
      for (int variant = 0; variant < 5; ++variant) {
        bd::DecodeOptions o;
        if (variant < 3) o.top_p = variant == 0 ? 0.9f : 0.99f;
        if (variant == 2) o.min_p = 0.01f;  // a second truncation of the gathered list
        if (variant == 3) o.typical.p = 0.9f;
        if (variant == 4) o.typical.p = 0.2f;  // a band that leaves the row's top out
        REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        std::vector<int32_t> kept(dec.ids(), dec.ids() + dec.k());
        std::sort(kept.begin(), kept.end());
        std::vector<float> list(kept.size());
        for (size_t i = 0; i < kept.size(); ++i) list[i] = row[kept[i]];
        const float list_max = *std::max_element(list.begin(), list.end());
        max_left_out += list_max < row_max;
        for (uint64_t step = 0; step < 40; ++step) {
          o.seed = 5;
          o.step = step;
          REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
          CAPTURE(v);
          CAPTURE(s);
          CAPTURE(variant);
          if (variant < 3) {
            bd::DecodeOptions none;
            none.seed = 5;
            none.step = step;
            REQUIRE(plain.Sample(list.data(), list.size(), none) == bd::StatusCode::kOk);
            REQUIRE(dec.token() == kept[plain.token()]);
          }
          // (min-p after top-p changes the list: exps from its own max,
          // which top-p kept.)
          const bd_test::TwinDraw want =
              bd_test::DrawTwin(list, row_max, 1.0f, bd::UniformDraw(5, step));
          REQUIRE(want.token >= 0);
          REQUIRE(dec.token() == kept[want.token]);
          reused += dec.draw_reused_exps();
          ++draws;
        }
      }
    }
  }
  MESSAGE(reused << " of " << draws << " draws read the row's exps");
  CHECK(reused * 2 > draws);
  CHECK(max_left_out >= 3);  // the typical lists without the row's maximum were drawn too
}

TEST_CASE("every stage after top-p / typical: the draw equals a decoder's that never reuses list exps") {
  // top-p and typical (on the row) leave the kept list's exps for the draw;
  // any later stage that changes the list must drop them. Each stage, in
  // random mixed chains after the producer, against the same chain with the
  // reuse switched off (which always recomputes the exps).
  std::mt19937_64 rng(29);
  bd::Decoder dec;
  const size_t v = 6000;
  const std::vector<float> row = LlmRow(v, rng, 0.7);
  std::vector<int32_t> history;
  for (int i = 0; i < 300; ++i) history.push_back(static_cast<int32_t>(rng() % 400));
  const int32_t bias_ids[] = {1, 5, 9, 77, 300};
  const float bias[] = {2.0f, -1.0f, 0.5f, -INFINITY, 3.0f};
  const int32_t banned[] = {2, 4, 6};
  const bd::StageId later[] = {
      bd::StageId::kLogitBias, bd::StageId::kPenalties, bd::StageId::kDry,
      bd::StageId::kNoRepeatNgram, bd::StageId::kTopNSigma, bd::StageId::kTopK,
      bd::StageId::kMinP, bd::StageId::kXtc, bd::StageId::kEpsilon, bd::StageId::kEta,
      bd::StageId::kTemperature, bd::StageId::kMirostat, bd::StageId::kBregman,
      bd::StageId::kTypical, bd::StageId::kTopP};
  size_t reused = 0, compared = 0;
  for (int trial = 0; trial < 600; ++trial) {
    bd::DecodeOptions o;
    o.top_p = 0.95f;
    o.typical.p = 0.97f;
    o.order[0] = trial % 2 ? bd::StageId::kTypical : bd::StageId::kTopP;
    o.order_len = 1;
    if (trial % 3 != 0) {  // one to three later stages (trial % 3 == 0: none)
      const size_t extra = 1 + rng() % 3;
      for (size_t k = 0; k < extra; ++k) o.order[o.order_len++] = later[rng() % std::size(later)];
    }
    o.logit_bias.ids = bias_ids;
    o.logit_bias.bias = bias;
    o.logit_bias.n = 5;
    o.logit_bias.banned = banned;
    o.logit_bias.n_banned = 3;
    o.penalties.repetition = 1.3f;
    o.penalties.presence = 0.2f;
    o.dry.multiplier = 0.8f;
    o.no_repeat_ngram.size = 3;
    o.top_n_sigma.n = 2.5f;
    o.top_k = 3000;
    o.min_p = 0.001f;
    o.xtc.probability = 0.7f;
    o.xtc.threshold = 0.02f;
    o.epsilon.epsilon = 1e-6f;
    o.eta.eta = 1e-6f;
    o.temperature = trial % 4 == 1 ? 0.8f : 1.0f;
    o.mirostat_enabled = trial % 5 == 0;
    o.bregman_enabled = trial % 7 == 0;
    o.bregman.alpha = 1.5;
    o.bregman.lambda = 1e-4;
    o.history = history.data();
    o.history_len = history.size();
    o.seed = 9;
    o.step = static_cast<uint64_t>(trial);
    CAPTURE(trial);
    bd::test_hooks::Tuning(dec).reuse_list_exps = true;
    REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
    const int32_t with_reuse = dec.token();
    reused += dec.draw_reused_exps();
    bd::test_hooks::Tuning(dec).reuse_list_exps = false;
    REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
    CHECK_FALSE(dec.draw_reused_exps());
    REQUIRE(dec.token() == with_reuse);
    ++compared;
  }
  bd::test_hooks::Tuning(dec).reuse_list_exps = true;
  MESSAGE(reused << " of " << compared << " draws read the producer's exps");
  CHECK(reused > compared / 10);
}

TEST_CASE("Bregman as the last stage (its logits left as they were) = Bregman followed by an acting stage that removes nothing") {
  // The last stage skips the pass that rewrites the list's logits as log q:
  // the draw and the output read q. A stage that acts after it (here a top_k
  // above the candidate count, which removes nothing) makes it write them;
  // tokens and distributions agree.
  std::mt19937_64 rng(31);
  bd::Decoder last_dec, followed_dec;
  for (int trial = 0; trial < 120; ++trial) {
    const size_t v = 500 + rng() % 5000;
    const std::vector<float> row = LlmRow(v, rng, 0.5 + 0.01 * (trial % 80));
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.divergence = trial % 3 == 0 ? bd::BregmanDivergence::kDual
                                          : bd::BregmanDivergence::kPrimal;
    o.bregman.alpha = trial % 3 == 0 ? 1.5 : 0.5 + 0.25 * (trial % 7);
    o.bregman.lambda = std::pow(10.0, -1.0 - 0.05 * (trial % 60));
    o.temperature = trial % 4 == 1 ? 0.7f : 1.0f;
    o.top_p = trial % 5 == 2 ? 0.97f : 1.0f;
    o.seed = 3;
    o.step = static_cast<uint64_t>(trial);
    o.sorted = trial % 2 == 0;
    bd::DecodeOptions followed = o;
    o.order[0] = bd::StageId::kTopP;
    o.order[1] = bd::StageId::kTemperature;
    o.order[2] = bd::StageId::kBregman;
    o.order_len = 3;
    followed.order[0] = bd::StageId::kTopP;
    followed.order[1] = bd::StageId::kTemperature;
    followed.order[2] = bd::StageId::kBregman;
    followed.order[3] = bd::StageId::kTopK;
    followed.order_len = 4;
    followed.top_k = 1 << 30;  // set (so it acts), above every count: removes nothing
    CAPTURE(trial);
    REQUIRE(last_dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
    REQUIRE(followed_dec.Sample(row.data(), v, followed) == bd::StatusCode::kOk);
    CHECK(last_dec.token() == followed_dec.token());
    CHECK(last_dec.k() == followed_dec.k());
    REQUIRE(last_dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
    REQUIRE(followed_dec.Decode(row.data(), v, followed) == bd::StatusCode::kOk);
    REQUIRE(last_dec.k() == followed_dec.k());
    REQUIRE(last_dec.k() > 0);
    for (size_t i = 0; i < last_dec.k(); ++i) {
      REQUIRE(last_dec.ids()[i] == followed_dec.ids()[i]);
      REQUIRE(last_dec.probs()[i] == followed_dec.probs()[i]);
    }
  }
}

// A path switched on, then off (set_path), on the same row and options:
// sample (steps 0-2 at `seed`) draws the same tokens from the same k, and
// decode (each of `orders`' sorted flags) returns the same ids and
// probabilities, bit for bit. The path is left on.
void SamePathOnAndOff(bd::Decoder& dec, const std::vector<float>& row, bd::DecodeOptions o,
                      uint64_t seed, std::initializer_list<bool> orders, bool bd::StageTuning::*path) {
  auto set_path = [&dec, path](bool on) { bd::test_hooks::Tuning(dec).*path = on; };
  for (uint64_t step = 0; step < 3; ++step) {
    o.seed = seed;
    o.step = step;
    set_path(true);
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    const int32_t token = dec.token();
    const size_t k = dec.k();
    set_path(false);
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    CHECK(dec.token() == token);
    CHECK(dec.k() == k);
  }
  for (bool sorted : orders) {
    o.sorted = sorted;
    set_path(true);
    REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    const std::vector<int32_t> ids(dec.ids(), dec.ids() + dec.k());
    const std::vector<float> probs(dec.probs(), dec.probs() + dec.k());
    set_path(false);
    REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    REQUIRE(dec.k() == ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      REQUIRE(dec.ids()[i] == ids[i]);
      REQUIRE(dec.probs()[i] == probs[i]);
    }
  }
  set_path(true);
}

TEST_CASE("a large nucleus or typical set left as a band of the row: the masked row's draw, only where the draw follows") {
  // Where top-p or typical keeps more than an eighth of the row and a draw
  // follows at once, the survivors are not gathered: the draw walks the
  // row's blocks with every entry outside the band weighing 0. Checked
  // against the twin of that draw over decode()'s kept set (an independent
  // path: decode gathers), on every row path (top-p's ring, its row
  // histogram, its prefilter; typical's bands), with the exps reused and
  // recomputed; with the distribution asked for, the same token and
  // decode()'s distribution; and no band where a stage acts after, or the
  // set is small.
  std::mt19937_64 rng(53);
  std::normal_distribution<float> g(0.0f, 1.0f);
  bd::Decoder dec;
  size_t band_draws = 0, list_draws = 0, prefiltered_bands = 0;
  for (int trial = 0; trial < 34; ++trial) {
    // (The last four: the prefilter's nucleus with a boundary band dense
    // enough to be histogrammed again, over the head of the row's exps.)
    const bool dense = trial >= 30;
    const size_t v = trial % 5 == 0 || dense ? 262144 : 20000 + rng() % 80000;
    std::vector<float> row(v);
    const float spread = dense ? (trial % 2 ? 0.7f : 1.0f)
                         : trial % 3 == 0 ? 1.0f : trial % 3 == 1 ? 1.5f : 3.0f;
    for (float& x : row) x = spread * g(rng);
    if (trial % 4 == 3 && !dense) row = LlmRow(v, rng, 0.05 + 0.01 * (trial % 7));  // a milder head
    bd::DecodeOptions o;
    const bool typical = trial % 2 == 1 && !dense;
    const float ps[] = {0.3f, 0.6f, 0.9f, 0.95f, 0.99f};
    (typical ? o.typical.p : o.top_p) = dense ? (trial < 32 ? 0.5f : 0.7f) : ps[(trial / 2) % 5];
    o.temperature = trial % 3 == 2 && !dense ? 0.8f : 1.0f;
    if (o.temperature != 1.0f) {  // (the temperature first: nothing acts after the cut)
      o.order[0] = bd::StageId::kTemperature;
      o.order[1] = typical ? bd::StageId::kTypical : bd::StageId::kTopP;
      o.order_len = 2;
    }
    const bool ring = trial % 6 != 4 || dense, prefilter = trial % 7 != 5 || dense;
    bd::test_hooks::Tuning(dec).top_p_ring = ring;
    bd::test_hooks::Tuning(dec).top_p_prefilter = prefilter;
    CAPTURE(trial);
    CAPTURE(v);
    o.sorted = false;
    REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
    const size_t k = dec.k();
    std::vector<char> keep(v, 0);
    for (size_t i = 0; i < k; ++i) keep[dec.ids()[i]] = 1;
    const std::vector<int32_t> decoded_ids(dec.ids(), dec.ids() + k);
    const std::vector<float> decoded_probs(dec.probs(), dec.probs() + k);
    const float max = *std::max_element(row.begin(), row.end());
    const float scale = static_cast<float>(1.0 / o.temperature);
    for (uint64_t step = 0; step < 12; ++step) {
      o.seed = 3;
      o.step = step;
      const size_t prefilter_hits = bd::test_hooks::Probes(dec).top_p_prefilter_hits;
      REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
      CHECK(dec.k() == k);
      CHECK(dec.drew_row_band() == (k > v / 8 && k < v));
      const double u = bd::UniformDraw(3, step);
      if (dec.drew_row_band()) {
        ++band_draws;
        prefiltered_bands += bd::test_hooks::Probes(dec).top_p_prefilter_hits > prefilter_hits;
        REQUIRE(dec.token() == bd_test::DrawTwin(row, max, scale, u, &keep).token);
        const int32_t token = dec.token();
        bd::test_hooks::Tuning(dec).reuse_list_exps = false;
        REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
        bd::test_hooks::Tuning(dec).reuse_list_exps = true;
        CHECK(dec.drew_row_band());
        CHECK_FALSE(dec.draw_reused_exps());
        CHECK(dec.token() == token);
      } else {
        ++list_draws;
        REQUIRE(keep[dec.token()]);
      }
    }
    if (k > v / 8 && k < v) {
      // A stage acting after the cut, or the distribution asked for: the
      // list as before (drawn from decode()'s survivors).
      bd::DecodeOptions after = o;
      after.min_p = 1e-30f;  // keeps every survivor, but acts
      if (after.order_len == 2) {
        after.order[2] = bd::StageId::kMinP;
        after.order_len = 3;
      }
      REQUIRE(dec.Sample(row.data(), v, after) == bd::StatusCode::kOk);
      CHECK_FALSE(dec.drew_row_band());
      CHECK(keep[dec.token()]);
      CHECK(dec.k() == k);
      // With the distribution: the same band draw (the same token), and
      // decode()'s distribution, bit for bit.
      bd::DecodeOptions dist = o;
      REQUIRE(dec.Sample(row.data(), v, dist) == bd::StatusCode::kOk);
      const int32_t token = dec.token();
      dist.return_distribution = true;
      REQUIRE(dec.Sample(row.data(), v, dist) == bd::StatusCode::kOk);
      CHECK(dec.drew_row_band());
      CHECK(dec.token() == token);
      REQUIRE(dec.k() == k);
      for (size_t i = 0; i < k; ++i) {
        REQUIRE(dec.ids()[i] == decoded_ids[i]);
        REQUIRE(dec.probs()[i] == decoded_probs[i]);
      }
    }
  }
  bd::test_hooks::Tuning(dec).top_p_ring = true;
  bd::test_hooks::Tuning(dec).top_p_prefilter = true;
  MESSAGE(band_draws << " band draws (" << prefiltered_bands << " after the prefilter), "
                     << list_draws << " list draws");
  CHECK(band_draws >= 150);
  CHECK(list_draws >= 50);
  CHECK(prefiltered_bands >= 12);
}

TEST_CASE("typical's cut inside a run of tied logits is gathered, never left as a band") {
  // Where typical's walk stops inside a run of equal distances, the ids past
  // the stopping one are left out: the set is then not a band of the row.
  // Rows of logits on a grid (as half-precision logits come), so the stop
  // falls inside a run of ties: such a cut must draw from the gathered list,
  // inside decode()'s survivors.
  std::mt19937_64 rng(61);
  std::normal_distribution<float> g(0.0f, 1.0f);
  bd::Decoder dec;
  size_t split = 0, whole = 0, draws = 0;
  const size_t band_hits = bd::test_hooks::Probes(dec).typical_row_band_hits;
  for (size_t v : {40000, 70000, 150000}) {
    for (float grid : {64.0f, 256.0f, 1024.0f}) {
      std::vector<float> row(v);
      for (float& x : row) x = std::round(g(rng) * grid) / grid;
      for (float p : {0.3f, 0.5f, 0.7f, 0.9f}) {
        bd::DecodeOptions o;
        o.typical.p = p;
        o.sorted = false;
        REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        std::vector<char> keep(v, 0);
        for (size_t i = 0; i < dec.k(); ++i) keep[dec.ids()[i]] = 1;
        // A logit some of whose tokens are kept and some not.
        std::map<float, int> kept_of;  // per logit: 0 none kept, 1 all, 2 some
        bool cut_in_run = false;
        for (size_t i = 0; i < v; ++i) {
          const int now = keep[i] ? 1 : 0;
          const auto [it, first] = kept_of.emplace(row[i], now);
          if (!first && it->second != now) it->second = 2;
          cut_in_run |= it->second == 2;
        }
        CAPTURE(v);
        CAPTURE(grid);
        CAPTURE(p);
        for (uint64_t step = 0; step < 20; ++step) {
          o.seed = 21;
          o.step = step;
          REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
          if (cut_in_run) CHECK_FALSE(dec.drew_row_band());
          REQUIRE(keep[dec.token()]);
          ++draws;
        }
        (cut_in_run ? split : whole) += 1;
      }
    }
  }
  MESSAGE(split << " cuts inside a run of ties, " << whole << " between runs, " << draws
                << " draws; " << bd::test_hooks::Probes(dec).typical_row_band_hits - band_hits << " band cuts");
  CHECK(split >= 6);
}

TEST_CASE("no band of the row is left where any stage acts after the cut: each stage, acting and neutral") {
  // The chain leaves the survivors of top-p / typical as a band only when
  // no stage after them acts (StageActs in chain.cc mirrors each stage's
  // early return). Each stage after the cut, switched on by each of its
  // options alone: the draw must be from the gathered list, inside
  // decode()'s survivors; switched off: the band.
  std::mt19937_64 rng(59);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const size_t v = 70000;
  std::vector<float> row(v);
  for (float& x : row) x = g(rng);
  std::vector<int32_t> history;
  for (int i = 0; i < 200; ++i) history.push_back(static_cast<int32_t>(rng() % v));
  const int32_t bias_ids[] = {1, 5, 9};
  const float bias[] = {2.0f, -1.0f, 0.5f};
  const int32_t banned[] = {2, 4, 6};
  std::vector<int32_t> allowed;
  for (int32_t i = 0; i < static_cast<int32_t>(v); i += 2) allowed.push_back(i);
  // Switches stage on by its variant-th option (1, 2, ...); false past the last.
  auto switch_on = [&](bd::StageId stage, int variant, bd::DecodeOptions& o) {
    switch (stage) {
      case bd::StageId::kLogitBias:
        if (variant == 1) {
          o.logit_bias.ids = bias_ids;
          o.logit_bias.bias = bias;
          o.logit_bias.n = 3;
        } else if (variant == 2) {
          o.logit_bias.banned = banned;
          o.logit_bias.n_banned = 3;
        } else if (variant == 3) {
          o.logit_bias.allowed = allowed.data();
          o.logit_bias.n_allowed = allowed.size();
          o.logit_bias.restrict_to_allowed = true;
        } else {
          return false;
        }
        return true;
      case bd::StageId::kPenalties:
        if (variant == 1) o.penalties.repetition = 1.3f;
        else if (variant == 2) o.penalties.frequency = 0.5f;
        else if (variant == 3) o.penalties.presence = 0.5f;
        else return false;
        return true;
      case bd::StageId::kTemperature:
        if (variant == 1) o.temperature = 0.8f;
        else if (variant == 2) o.dynatemp.range = 0.5f;  // at temperature 1
        else return false;
        return true;
      default: break;
    }
    if (variant != 1) return false;
    switch (stage) {
      case bd::StageId::kDry: o.dry.multiplier = 0.8f; break;
      case bd::StageId::kNoRepeatNgram: o.no_repeat_ngram.size = 2; break;
      case bd::StageId::kTopNSigma: o.top_n_sigma.n = 2.0f; break;
      case bd::StageId::kTopK: o.top_k = 50000; break;
      case bd::StageId::kMinP: o.min_p = 0.05f; break;
      case bd::StageId::kXtc:
        o.xtc.probability = 1.0f;
        o.xtc.threshold = 0.0001f;
        break;
      case bd::StageId::kEpsilon: o.epsilon.epsilon = 1e-6f; break;
      case bd::StageId::kEta: o.eta.eta = 1e-6f; break;
      case bd::StageId::kPLess: o.p_less.mode = bd::PLessMode::kNorm; break;
      case bd::StageId::kTopH: o.top_h.coefficient = 0.9f; break;
      case bd::StageId::kMirostat: o.mirostat_enabled = true; break;
      case bd::StageId::kAdaptiveP: o.adaptive_p.target = 0.3f; break;
      case bd::StageId::kBregman:
        o.bregman_enabled = true;
        o.bregman.alpha = 1.5;
        o.bregman.lambda = 1e-9;
        break;
      default: FAIL("a stage without an acting case");
    }
    return true;
  };
  bd::Decoder dec;
  size_t checked = 0, acting_checked = 0;
  for (size_t cut = 0; cut < 2; ++cut) {
    for (size_t sid = 0; sid < static_cast<size_t>(bd::StageId::kCount); ++sid) {
      const auto stage = static_cast<bd::StageId>(sid);
      if (stage == bd::StageId::kTopP || stage == bd::StageId::kTypical) continue;
      for (int variant = 0;; ++variant) {
        bd::DecodeOptions o;
        (cut == 0 ? o.top_p : o.typical.p) = 0.9f;
        o.order[0] = cut == 0 ? bd::StageId::kTopP : bd::StageId::kTypical;
        o.order[1] = stage;
        o.order_len = 2;
        o.history = history.data();
        o.history_len = history.size();
        const bool acting = variant > 0;
        if (acting && !switch_on(stage, variant, o)) break;
        o.dynatemp.temperature = o.temperature;
        o.seed = 7;
        CAPTURE(cut);
        CAPTURE(sid);
        CAPTURE(variant);
        REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        std::vector<char> keep(v, 0);
        for (size_t i = 0; i < dec.k(); ++i) keep[dec.ids()[i]] = 1;
        const size_t k = dec.k();
        for (uint64_t step = 0; step < 5; ++step) {
          o.step = step;
          REQUIRE(dec.Sample(row.data(), v, o) == bd::StatusCode::kOk);
          CHECK(dec.drew_row_band() == !acting);
          CHECK(keep[dec.token()]);
          if (stage != bd::StageId::kXtc) CHECK(dec.k() == k);  // (XTC's draw is its own)
          ++checked;
          acting_checked += acting;
        }
      }
    }
  }
  // Every stage but top-p and typical; 3 options of two of them, 2 of one.
  const size_t stages = static_cast<size_t>(bd::StageId::kCount) - 2;
  CHECK(acting_checked == 2 * (stages + 2 + 2 + 1) * 5);
  CHECK(checked == acting_checked + 2 * stages * 5);
}

TEST_CASE("top-p's ring (flat rows) gives the row histogram's cut: tokens, kept sets and probabilities") {
  // A large nucleus the prefilter refuses (most of the row) is bracketed by a
  // ring of buckets around a sampled boundary, the mass above it summed in
  // one pass. Against the same decoder with the ring off (the row's
  // histogram): flat rows of several spreads, temperatures and p, sample and
  // decode; and rows whose sampled runs (16 runs of 256 entries, evenly
  // spread) are drawn one spread higher than the rest, so the sample places
  // the ring above the boundary (the row's histogram then). Where the
  // sample puts most of the row in the nucleus, the ring is placed before
  // the exp pass and gathered by it (ExpPassWithCut), from the sample's
  // estimate of z: the same cut.
  // The mass above the ring is a float-lane sum rather than bucket sums in
  // double, so a cut could move where the walk's margin is below ~1e-7 of
  // the mass (inside the target's 1e-6 fuzz): none of these does.
  std::mt19937_64 rng(41);
  bd::Decoder dec;
  std::normal_distribution<float> g(0.0f, 1.0f);
  const size_t hits_before = bd::test_hooks::Probes(dec).top_p_ring_hits;
  const size_t misses_before = bd::test_hooks::Probes(dec).top_p_ring_misses;
  const size_t fused_missed_before = bd::test_hooks::Probes(dec).top_p_rings_before_exps_missed;
  const size_t fused_before = bd::test_hooks::Probes(dec).top_p_rings_before_exps;
  size_t compared = 0;
  for (int trial = 0; trial < 36; ++trial) {
    const size_t v = trial % 4 == 0 ? 262144 : 65536 + rng() % 100000;  // (kRingMin)
    const float spread = trial % 3 == 0 ? 1.0f : trial % 3 == 1 ? 1.5f : 3.0f;
    std::vector<float> row(v);
    for (float& x : row) x = spread * g(rng);
    if (trial % 6 == 3) {  // (a spread of 1: the prefilter refuses the row)
      for (size_t r = 0; r < 16; ++r) {
        for (size_t i = r * (v / 16); i < r * (v / 16) + 256; ++i) {
          row[i] = spread * (1.0f + g(rng));
        }
      }
    }
    bd::DecodeOptions o;
    const float ps[] = {0.5f, 0.8f, 0.9f, 0.95f, 0.99f};
    o.top_p = ps[trial % 5];
    o.temperature = trial % 2 == 0 ? 1.0f : 0.7f;
    CAPTURE(trial);
    CAPTURE(v);
    SamePathOnAndOff(dec, row, o, 13, {true}, &bd::StageTuning::top_p_ring);
    ++compared;
  }
  bd::test_hooks::Tuning(dec).top_p_ring = true;
  const size_t hits = bd::test_hooks::Probes(dec).top_p_ring_hits - hits_before;
  const size_t misses = bd::test_hooks::Probes(dec).top_p_ring_misses - misses_before;
  const size_t fused = bd::test_hooks::Probes(dec).top_p_rings_before_exps - fused_before;
  const size_t fused_missed =
      bd::test_hooks::Probes(dec).top_p_rings_before_exps_missed - fused_missed_before;
  MESSAGE(hits << " ring cuts, " << misses << " rings missed, " << fused
               << " rings gathered by the exp pass (" << fused_missed << " missed), over "
               << compared << " rows");
  CHECK(hits >= compared);
  CHECK(misses > 0);
  // Most of these rows keep most of the row: their ring is placed before the
  // exp pass, which gathers it (ExpPassWithCut); the rows with raised runs
  // make some of those miss (the exps and z then serve the usual path).
  CHECK(fused >= compared);
  CHECK(fused_missed > 0);
}

TEST_CASE("top-p on a peaked row: the ring or the prefilter's top placed before the exp pass from the head's exact weight, the row histogram's cut") {
  // An LLM-shaped row (a Gaussian background and a Zipf head of 64 heavy
  // tokens at random ids, the head holding 4x the background's mass, the
  // bench's shape): the sample's runs catch the head only by chance, so its
  // z was a third of the row's and the ring placed before the exp pass for
  // p 0.95-0.99 missed (then the prefilter, or the row's histogram). The
  // head (entries at or above the 16th part of the block maxima's ranking)
  // is now summed exactly, and a ring that would hold more than its share
  // of the sample (a far max over a dense background) is tried again at
  // half the reach. Against the same decoder with the ring off, sample and
  // decode; and, at V = 262 144 and p >= 0.93, every ring placed before the
  // exp pass must hold the boundary.
  std::mt19937_64 rng(43);
  bd::Decoder dec;
  std::normal_distribution<float> g(0.0f, 1.0f);
  size_t compared = 0, large = 0;
  size_t large_fused = 0, large_missed = 0;
  size_t tops = 0, tops_missed = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const size_t v = trial % 2 == 0 ? 262144 : 65536 + rng() % 150000;
    std::vector<float> row(v);
    for (float& x : row) x = 1.5f * g(rng);
    double zipf = 0.0;
    for (int r = 1; r <= 64; ++r) zipf += std::pow(r, -1.1);
    const double c = std::log(4.0 * static_cast<double>(v) * std::exp(1.125) / zipf);
    for (int r = 0; r < 64; ++r) {
      row[rng() % v] = static_cast<float>(c - 1.1 * std::log(r + 1.0));
    }
    bd::DecodeOptions o;
    const float ps[] = {0.9f, 0.93f, 0.95f, 0.97f, 0.99f};
    o.top_p = ps[trial % 5];
    o.temperature = (trial / 5) % 2 == 0 ? 1.0f : 0.7f;
    CAPTURE(trial);
    CAPTURE(v);
    CAPTURE(o.top_p);
    const bd::StageProbes& probes = bd::test_hooks::Probes(dec);
    const size_t fused_before = probes.top_p_rings_before_exps;
    const size_t missed_before = probes.top_p_rings_before_exps_missed;
    SamePathOnAndOff(dec, row, o, 17, {true, false}, &bd::StageTuning::top_p_ring);
    // And the prefilter's top (natively gathered by the exp pass where the
    // nucleus is under a tenth of the row) against no prefilter at all.
    const size_t tops_before = probes.top_p_prefilters_before_exps;
    const size_t top_missed_before = probes.top_p_prefilters_before_exps_missed;
    SamePathOnAndOff(dec, row, o, 19, {true, false}, &bd::StageTuning::top_p_prefilter);
    tops += probes.top_p_prefilters_before_exps - tops_before;
    tops_missed += probes.top_p_prefilters_before_exps_missed - top_missed_before;
    ++compared;
    const size_t fused = probes.top_p_rings_before_exps - fused_before;
    const size_t missed = probes.top_p_rings_before_exps_missed;
    if (v == 262144 && o.top_p >= 0.93f && o.temperature == 1.0f) {
      ++large;
      large_fused += fused;
      large_missed += missed - missed_before;
    }
  }
  bd::test_hooks::Tuning(dec).top_p_ring = true;
  MESSAGE(compared << " peaked rows; at V = 262144, p >= 0.93, T = 1: " << large_fused
                   << " rings before the exp pass over " << large << " rows, " << large_missed
                   << " missed");
  CHECK(large >= 3);
  CHECK(large_fused >= 5 * large);  // (each row: 5 calls with the ring on)
  CHECK(large_missed == 0);
  MESSAGE(tops << " prefilter tops gathered by the exp pass, " << tops_missed << " missed");
#if !defined(__wasm__)
  CHECK(tops >= 10);  // (p 0.9: the nucleus is 7 % of the row)
#endif
  // A miss costs time only (the usual path after the pass). The one row
  // that misses here: p 0.99 at T 0.7, whose background's exps spread so
  // far that the sample's tail mass is off by more than the margin.
  CHECK(4 * tops_missed <= tops);
}

TEST_CASE("a ring at an extreme p on a flat row (typical 0.97-0.99, top-p 0.999): formed, the histogram's cut") {
  // Where less of the sample than the ring's margin lies beyond the sampled
  // cut (a cut in the far tail), the ring took bins out to the last ones,
  // which lump everything beyond the reach, and was refused: typical 0.99 on
  // the bench's flat row cost 3.5x its floor against 2.4x at 0.9 (the row's
  // whole distance histogram), top-p 0.999 3.8x against 2.2x. The ring now
  // takes what lies beyond, short of the last bins. Against the same
  // decoder without bands and rings (typical) or without the ring (top-p),
  // sample and decode; and the rings counted.
  std::mt19937_64 rng(47);
  std::normal_distribution<float> g(0.0f, 1.0f);
  bd::Decoder dec;
  const size_t typical_rings_before = bd::test_hooks::Probes(dec).typical_histogram_rings;
  const size_t top_p_hits_before = bd::test_hooks::Probes(dec).top_p_ring_hits;
  size_t compared = 0;
  for (size_t v : {size_t{100003}, size_t{262144}}) {
    std::vector<float> row(v);
    for (float& x : row) x = g(rng);
    for (float temp : {1.0f, 0.7f}) {
      for (float p : {0.97f, 0.99f}) {
        bd::DecodeOptions o;
        o.typical.p = p;
        o.temperature = temp;
        CAPTURE(v);
        CAPTURE(temp);
        CAPTURE(p);
        SamePathOnAndOff(dec, row, o, 29, {true}, &bd::StageTuning::typical_histogram_bands);
        ++compared;
      }
      bd::DecodeOptions o;
      o.top_p = 0.999f;
      o.temperature = temp;
      SamePathOnAndOff(dec, row, o, 31, {true}, &bd::StageTuning::top_p_ring);
      ++compared;
    }
  }
  const size_t typical_rings = bd::test_hooks::Probes(dec).typical_histogram_rings - typical_rings_before;
  const size_t top_p_hits = bd::test_hooks::Probes(dec).top_p_ring_hits - top_p_hits_before;
  MESSAGE(compared << " rows compared; " << typical_rings << " typical rings, " << top_p_hits
                   << " top-p ring cuts");
  CHECK(typical_rings >= 8 * 4);  // every typical row, each of its (4) calls with rings on
  CHECK(top_p_hits >= 4 * 4);
}

TEST_CASE("top-p's row prefilter changes nothing: tokens, kept sets and probabilities equal the full histogram's") {
  // The prefilter histograms only the row's top (a sample picks where to
  // cut); when it decides, its cut must be the full histogram's, bit for
  // bit. Rows of every shape, temperatures and p, sample and decode, against
  // the same decoder with the prefilter off.
  std::mt19937_64 rng(37);
  bd::Decoder dec;
  std::normal_distribution<float> g(0.0f, 1.0f);
  const size_t hits_before = bd::test_hooks::Probes(dec).top_p_prefilter_hits;
  size_t compared = 0;
  for (int trial = 0; trial < 48; ++trial) {
    const size_t v = trial % 6 == 0 ? 262144 : 16384 + rng() % 50000;
    std::vector<float> row;
    switch (trial % 4) {
      case 0: row = LlmRow(v, rng, 0.3 + 0.02 * (trial % 20)); break;
      case 1:  // flat
        row.resize(v);
        for (float& x : row) x = 1.5f * g(rng);
        break;
      case 2:  // a Zipf head over a Gaussian background, ties (quantised), banned tokens
        row.resize(v);
        for (size_t i = 0; i < v; ++i) row[i] = std::round(4.0f * g(rng)) / 4.0f;
        for (size_t j = 0; j < 64; ++j) row[rng() % v] = 9.0f - 1.1f * std::log(j + 1.0f);
        for (size_t i = 0; i < v; i += 7) row[i] = -kInf;
        break;
      default:  // a wide spread
        row.resize(v);
        for (float& x : row) x = 6.0f * g(rng);
        break;
    }
    if (trial % 8 == 7) {
      // The prefilter's sample (every (v / 4096)-th entry) sees only tiny
      // logits: it misjudges where the tail begins, and must fall back.
      for (size_t i = 0; i < v; i += v / 4096) row[i] = -30.0f;
    }
    bd::DecodeOptions o;
    const float ps[] = {0.5f, 0.8f, 0.9f, 0.95f, 0.99f, 0.999f};
    o.top_p = ps[trial % 6];
    o.temperature = trial % 3 == 0 ? 0.7f : trial % 3 == 1 ? 1.0f : 1.6f;
    o.order[0] = bd::StageId::kTemperature;
    o.order[1] = bd::StageId::kTopP;
    o.order_len = 2;
    CAPTURE(trial);
    CAPTURE(v);
    SamePathOnAndOff(dec, row, o, 11, {true, false}, &bd::StageTuning::top_p_prefilter);
    ++compared;
  }
  bd::test_hooks::Tuning(dec).top_p_prefilter = true;
  const size_t hits = bd::test_hooks::Probes(dec).top_p_prefilter_hits - hits_before;
  MESSAGE(hits << " prefiltered cuts over " << compared << " rows");
  CHECK(hits >= compared);  // it decides on many of these calls (5 per row)
}

TEST_CASE("UniformDraw is a fixed function of (seed, step)") {
  // Pinned values: any change to the generator changes users' tokens.
  CHECK(bd::UniformDraw(0, 0) == bd::UniformDraw(0, 0));
  CHECK(bd::UniformDraw(1, 0) != bd::UniformDraw(2, 0));
  CHECK(bd::UniformDraw(1, 0) != bd::UniformDraw(1, 1));
  double mean = 0.0;
  for (uint64_t s = 0; s < 100000; ++s) {
    const double u = bd::UniformDraw(7, s);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    mean += u;
  }
  CHECK(std::fabs(mean / 100000 - 0.5) < 0.005);
}

TEST_CASE("bad input returns an error naming the input, and the decoder keeps working") {
  bd::Decoder dec;
  std::vector<float> row = {1.0f, 2.0f, 3.0f};
  bd::DecodeOptions o;
  std::vector<float> nan_row = {1.0f, std::nanf(""), 3.0f};
  CHECK(dec.Decode(nan_row.data(), 3, o) == bd::StatusCode::kRangeError);
  CHECK(std::string(dec.error()).find("NaN") != std::string::npos);
  std::vector<float> banned(3, -kInf);
  CHECK(dec.Sample(banned.data(), 3, o) == bd::StatusCode::kRangeError);
  CHECK(std::string(dec.error()).find("banned") != std::string::npos);
  std::vector<float> pinf = {1.0f, kInf};
  CHECK(dec.Decode(pinf.data(), 2, o) == bd::StatusCode::kRangeError);
  CHECK(dec.Decode(row.data(), 0, o) == bd::StatusCode::kRangeError);
  struct Bad { const char* name; bd::DecodeOptions o; };
  std::vector<Bad> bad;
  { bd::DecodeOptions b; b.temperature = -1; bad.push_back({"temperature", b}); }
  { bd::DecodeOptions b; b.top_p = 0; bad.push_back({"top_p", b}); }
  { bd::DecodeOptions b; b.top_p = 1.5f; bad.push_back({"top_p", b}); }
  { bd::DecodeOptions b; b.min_p = -0.1f; bad.push_back({"min_p", b}); }
  { bd::DecodeOptions b; b.top_k = -2; bad.push_back({"top_k", b}); }
  { bd::DecodeOptions b; b.bregman_enabled = true; b.bregman.alpha = 0; bad.push_back({"alpha", b}); }
  { bd::DecodeOptions b; b.bregman_enabled = true; b.bregman.lambda = -1; bad.push_back({"lambda", b}); }
  { bd::DecodeOptions b; b.bregman_enabled = true; b.bregman.divergence = bd::BregmanDivergence::kDual;
    b.bregman.alpha = 1.0; b.bregman.lambda = 0.1; bad.push_back({"alpha", b}); }
  for (const Bad& b : bad) {
    CAPTURE(b.name);
    CHECK(dec.Decode(row.data(), 3, b.o) == bd::StatusCode::kRangeError);
    CHECK(std::string(dec.error()).find(b.name) != std::string::npos);
  }
  REQUIRE(dec.Decode(row.data(), 3, o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 3);
  CHECK(dec.ids()[0] == 2);
}

TEST_CASE("steady state: the workspace stops growing after the first call") {
  std::mt19937_64 rng(13);
  bd::Decoder dec;
  std::vector<float> row = LlmRow(50000, rng);
  bd::DecodeOptions o;
  o.top_k = 50;
  o.bregman_enabled = true;
  o.bregman.alpha = 1.5;
  o.bregman.lambda = 1e-3;
  REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  const size_t bytes = dec.WorkspaceBytes();
  for (int i = 0; i < 200; ++i) {
    o.step = static_cast<uint64_t>(i);
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
  }
  CHECK(dec.WorkspaceBytes() == bytes);
  // The general solvers (their powers, q and the support's sketch, counted
  // in WorkspaceBytes) at a large k: flat too after the first call.
  bd::DecodeOptions g;
  g.bregman_enabled = true;
  g.bregman.divergence = bd::BregmanDivergence::kDual;
  g.bregman.alpha = 2.5;
  g.bregman.lambda = 1e-14;
  REQUIRE(dec.Decode(row.data(), row.size(), g) == bd::StatusCode::kOk);
  CHECK(dec.k() > 10000);
  const size_t general_bytes = dec.WorkspaceBytes();
  CHECK(general_bytes > bytes);
  for (int i = 0; i < 20; ++i) {
    g.step = static_cast<uint64_t>(i);
    g.bregman.lambda = 1e-14 * (1.0 + 0.05 * i);
    REQUIRE(dec.Sample(row.data(), row.size(), g) == bd::StatusCode::kOk);
  }
  CHECK(dec.WorkspaceBytes() == general_bytes);
}

TEST_CASE("Bregman through the decoder = the float64 oracle on softmax(logits / T)") {
  // The full path (temperature, candidate prefix, float64 core) against the
  // exhaustive oracle run on p computed in float64 from the same logits.
  namespace bo = bregman_oracle;
  std::mt19937_64 rng(14);
  bd::Decoder dec;
  int compared = 0, skipped = 0;
  double worst_q = 0.0;
  for (size_t v : {1, 2, 7, 40, 120, 300}) {
    for (float t : {0.5f, 0.8f, 1.0f, 1.5f, 2.0f}) {
      std::vector<float> row = LlmRow(v, rng, 0.8);
      double max = -INFINITY;
      for (float x : row) max = std::max(max, static_cast<double>(x) / t);
      std::vector<double> p(v);
      double z = 0.0;
      for (size_t i = 0; i < v; ++i) z += p[i] = std::exp(static_cast<double>(row[i]) / t - max);
      for (double& x : p) x /= z;
      struct Cfg { bo::Mode mode; double alpha; };
      for (const Cfg cfg : {Cfg{bo::Mode::kPrimal, 1.0}, Cfg{bo::Mode::kPrimal, 0.5},
                            Cfg{bo::Mode::kPrimal, 1.5}, Cfg{bo::Mode::kPrimal, 2.0},
                            Cfg{bo::Mode::kPrimal, 3.0}, Cfg{bo::Mode::kDual, 1.5},
                            Cfg{bo::Mode::kDual, 3.0}}) {
        const bo::Table table = bo::MakeTable(cfg.mode, cfg.alpha, p);
        const std::vector<double> tau = bo::Taus(table);
        if (tau.empty()) {  // V = 1: k = 1 whatever lambda
          bd::DecodeOptions o;
          o.temperature = t;
          o.bregman_enabled = true;
          o.bregman.alpha = cfg.alpha;
          o.bregman.lambda = 0.1;
          o.bregman.divergence = cfg.mode == bo::Mode::kDual ? bd::BregmanDivergence::kDual
                                                             : bd::BregmanDivergence::kPrimal;
          REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
          CHECK(dec.k() == 1);
          continue;
        }
        // lambda between two consecutive gains (or beyond the ends), so the
        // answer is decided well above float32-input resolution.
        for (size_t j = 0; j <= tau.size(); j += std::max<size_t>(1, tau.size() / 4)) {
          const double hi = j == 0 ? 2 * tau[0] + 1 : tau[j - 1];
          const double lo = j == tau.size() ? hi / 4 : tau[j];
          if (!(hi > lo * 1.001) || lo <= 0) { ++skipped; continue; }
          const double lambda = std::sqrt(hi * lo);
          const bo::Decision want = bo::Decide(table, lambda);
          bd::DecodeOptions o;
          o.temperature = t;
          o.bregman_enabled = true;
          o.bregman.divergence = cfg.mode == bo::Mode::kDual ? bd::BregmanDivergence::kDual
                                                             : bd::BregmanDivergence::kPrimal;
          o.bregman.alpha = cfg.alpha;
          o.bregman.lambda = lambda;
          CAPTURE(v); CAPTURE(t); CAPTURE(cfg.alpha); CAPTURE(lambda);
          REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
          REQUIRE(dec.k() == want.k);
          double sum = 0.0;
          for (size_t i = 0; i < dec.k(); ++i) {
            const double err = std::fabs(dec.probs()[i] - want.q[static_cast<size_t>(dec.ids()[i])]);
            worst_q = std::max(worst_q, err);
            REQUIRE(err <= 2e-6);
            sum += dec.probs()[i];
          }
          CHECK(std::fabs(sum - 1.0) <= 1e-6);
          CHECK(dec.objective() == doctest::Approx(want.objective).epsilon(1e-5));
          ++compared;
        }
      }
    }
  }
  MESSAGE("decoder vs oracle: " << compared << " decodes, max |q err| " << worst_q << ", "
                                << skipped << " lambdas skipped (no gap between gains)");
  CHECK(compared > 500);
}

TEST_CASE("decode(): the objective keeps its relative precision when the dropped tail is tiny") {
  // Supports that keep nearly all of sum p^alpha, where the dropped tokens'
  // term is a tiny part of it: priced as the row's float-exp sum less the
  // kept head's it carried an error of ~1e-7 of the row's sum (0.3 % of the
  // objective at primal alpha 2 keeping 31 917 of 32 000 tokens, and far
  // more at a temperature below 1). Against the float64 oracle on the
  // long-double softmax, at the decoder's own k: what is left is the float
  // exp pass's normaliser (~1e-7 of every p, alpha times that in p^alpha).
  namespace bo = bregman_oracle;
  bd::Decoder dec;
  std::mt19937_64 rng(0x7a11);
  double worst = 0.0;
  size_t compared = 0;
  for (int shape = 0; shape < 3; ++shape) {
    const size_t v = 32000;
    std::vector<float> row(v);
    for (size_t i = 0; i < v; ++i) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      double l = -1.1 * std::log(static_cast<double>(i + 1)) + 0.3 * (u - 0.5);
      if (shape == 2) l = std::round(l * 8.0) / 8.0;  // ties at every cut
      row[i] = static_cast<float>(l);
    }
    std::shuffle(row.begin(), row.end(), rng);
    const double t = shape == 1 ? 0.7 : 1.0;
    const float max = *std::max_element(row.begin(), row.end());
    long double z = 0.0L;
    for (float l : row) z += std::exp(static_cast<long double>((static_cast<double>(l) - max) / t));
    std::vector<double> p(v);
    for (size_t i = 0; i < v; ++i) {
      p[i] = static_cast<double>(std::exp(static_cast<long double>((static_cast<double>(row[i]) - max) / t)) / z);
    }
    std::sort(p.begin(), p.end(), std::greater<double>());
    struct Cfg { bool dual; double alpha; double lambda; int top_k; };
    for (const Cfg cfg : {Cfg{false, 2.0, 1e-12, 0}, Cfg{false, 2.0, 1e-8, 0},
                          Cfg{false, 4.0, 1e-12, 0}, Cfg{false, 4.0, 1e-18, 0},
                          Cfg{true, 4.0, 1e-18, 0}, Cfg{true, 2.5, 1e-12, 0},
                          Cfg{false, 0.5, 1e-4, 0}, Cfg{false, 3.0, 1e-14, 20000}}) {
      bd::DecodeOptions o;
      o.temperature = t;
      o.top_k = cfg.top_k;  // a list: its entries after the support are the tail
      o.bregman_enabled = true;
      o.bregman.divergence = cfg.dual ? bd::BregmanDivergence::kDual : bd::BregmanDivergence::kPrimal;
      o.bregman.alpha = cfg.alpha;
      o.bregman.lambda = cfg.lambda;
      REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
      const size_t k = dec.k();
      const size_t n = cfg.top_k > 0 ? static_cast<size_t>(cfg.top_k) : v;
      const bo::Mode mode = cfg.dual ? bo::Mode::kDual : bo::Mode::kPrimal;
      // The oracle on the candidates (a top-k list renormalised first).
      std::vector<double> cand(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
      double mass = 0.0;
      for (size_t j = n; j-- > 0;) mass += cand[j];
      for (double& x : cand) x /= mass;
      std::vector<double> q(k);
      const bo::Renormalised r = bo::Renormalise(mode, cfg.alpha, cand.data(), k, q.data());
      double dropped = 0.0;
      for (size_t j = n; j-- > k;) dropped += bo::ZeroCost(mode, cfg.alpha, cand[j]);
      const double want = r.in_support + dropped + cfg.lambda * static_cast<double>(k);
      const double rel = std::fabs(dec.objective() - want) / want;
      CAPTURE(shape); CAPTURE(cfg.dual); CAPTURE(cfg.alpha); CAPTURE(cfg.lambda); CAPTURE(k);
      CAPTURE(dec.objective()); CAPTURE(want);
      // (Worst 3.6e-6: the top-k list at T = 0.7, alpha 3, whose float-exp
      // normaliser is off by ~1e-6; the rows' within 1.7e-7. As the row's sum
      // less the head's, 19 of these 24 were off by 3e-6 to 5e4 times the
      // objective: at T = 0.7 and alpha 4 the head's cancellation left noise.)
      CHECK(rel <= 1e-5);
      worst = std::max(worst, rel);
      ++compared;
    }
  }
  MESSAGE("objective with a tiny tail: " << compared << " decodes, worst relative error " << worst);
}

// Against an mpmath reference: rows of up to 64 candidates
// (every p float64) had their dropped tail priced from float exps, 1e-8..3e-7
// relative off; and a tail more than 87 / alpha nats below the last kept
// logit flushed to 0 in those exps (the objective was 0). (Relative checks:
// doctest's Approx is absolute for values this small unless scale(0).)
TEST_CASE("decode(): the objective's dropped tail is float64 on short rows and does not flush") {
  bd::Decoder dec;
  const auto objective = [&](const std::vector<float>& row, double alpha, size_t k) {
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.alpha = alpha;
    o.bregman.fixed_k = k;
    REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    REQUIRE(dec.k() == k);
    return dec.objective();
  };
  const auto rel = [](long double want, double eps) {
    return doctest::Approx(static_cast<double>(want)).epsilon(eps).scale(0.0);
  };
  // [0, -1], primal alpha 2, k = 1: D(1) = (1 - p1)^2 / 2 + p2^2 / 2 = p2^2.
  const long double p2 = 1.0L / (1.0L + std::exp(1.0L));
  CHECK(objective({0.0f, -1.0f}, 2.0, 1) == rel(p2 * p2, 1e-14));
  // The review's mpmath value (60 digits) for a primal alpha of 1.001.
  CHECK(objective({0.0f, -3.0f, -8.0f, -15.0f, -20.0f, -2.5f}, 1.001, 1) ==
        rel(0.12372306135099259L, 1e-12));
  // A tail 60 and 90 nats down at primal alpha 1.5, k = 1: its zero cost
  // p2^1.5 / 1.5 (e^-90 and e^-135 relative to the kept token: below float's
  // range) is the objective; the kept token's term, ~p2^2 / 4, is far below
  // its precision (and lost with 1 - p1, which rounds to 0).
  for (const float gap : {60.0f, 90.0f}) {
    const long double t = std::exp(-static_cast<long double>(gap));
    const long double q = t / (1.0L + t);
    CHECK(objective({0.0f, -gap}, 1.5, 1) == rel(std::pow(q, 1.5L) / 1.5L, 1e-9));
  }
}

TEST_CASE("decode(): KL's objective keeps its relative precision when the kept mass is within 1e-9 of 1") {
  // KL's objective is -log s (s the kept mass): its tail term 1 - s carries
  // s's rounding as an absolute error, 1e-3 of the objective for [0, -30,
  // -30] at k = 1 (1 - s = 1.9e-13). Against long double, fixed k and
  // adaptive, on rows from 3 tokens to 262 144, tails 1e-20..1e-6.
  bd::Decoder dec;
  double worst = 0.0;
  size_t compared = 0;
  for (size_t v : {3, 1000, 262144}) {
    for (double gap : {14.0, 30.0, 45.0}) {
      std::vector<float> row(v);
      for (size_t i = 0; i < v; ++i) row[i] = i == 0 ? 0.0f : static_cast<float>(-gap - 0.001 * (i % 97));
      const float max = 0.0f;
      long double z = 0.0L;
      for (float l : row) z += std::exp(static_cast<long double>(l) - max);
      long double tail = 0.0L;
      for (size_t i = 1; i < v; ++i) tail += std::exp(static_cast<long double>(row[i])) / z;
      for (int adaptive = 0; adaptive < 2; ++adaptive) {
        bd::DecodeOptions o;
        o.bregman_enabled = true;
        o.bregman.alpha = 1.0;
        // (adaptive: lambda above tau_1 = log(1 + p_2 / p_1), so k = 1)
        if (adaptive) o.bregman.lambda = 1e-3;
        else o.bregman.fixed_k = 1;
        REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        REQUIRE(dec.k() == 1);
        const long double want = -std::log1p(-tail) + (adaptive ? 1e-3L : 0.0L);
        const double rel = static_cast<double>(std::fabs((dec.objective() - want) / want));
        CAPTURE(v); CAPTURE(gap); CAPTURE(adaptive); CAPTURE(dec.objective());
        CAPTURE(static_cast<double>(want));
        CHECK(rel <= 1e-6);
        worst = std::max(worst, rel);
        ++compared;
      }
    }
  }
  MESSAGE("KL objective with a tail within 1e-9 of nothing: " << compared << " decodes, worst relative error " << worst);
}

TEST_CASE("top-p on a large nucleus (threshold path): ties at the cut keep the lowest ids") {
  bd::Decoder dec;
  // 1000 equal logits: p = 0.001 each; top_p 0.5 keeps exactly 500, ids 0..499.
  std::vector<float> flat(1000, 0.5f);
  bd::DecodeOptions o;
  o.top_p = 0.5f;
  REQUIRE(dec.Decode(flat.data(), flat.size(), o) == bd::StatusCode::kOk);
  REQUIRE(dec.k() == 500);
  for (size_t i = 0; i < 500; ++i) CHECK(dec.ids()[i] == static_cast<int32_t>(i));
  // A head of 300 distinct tokens then a plateau of 2000 ties: the cut falls
  // inside the plateau, which is filled from the lowest id up.
  std::vector<float> row(3000, -10.0f);
  for (size_t i = 0; i < 300; ++i) row[2999 - i] = 1.0f - 0.001f * static_cast<float>(i);
  for (size_t i = 0; i < 2000; ++i) row[i * 7 % 2700] = 0.2f;
  std::vector<float> copy = row;
  ref::ChainOptions r;
  r.top_p = 0.8;
  o.top_p = 0.8f;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CheckMatches(dec, ref::Chain(copy, r));
  CHECK(dec.k() > 300);
  // The draw over that nucleus never leaves it.
  for (uint64_t s = 0; s < 200; ++s) {
    o.seed = s;
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    const ref::Dist want = ref::Chain(copy, r);
    CHECK(std::find(want.ids.begin(), want.ids.end(), dec.token()) != want.ids.end());
  }
}

TEST_CASE("top-p with a dense boundary bucket (narrowed by band histograms) matches the float64 chain") {
  // Logits packed into a few hundredths of a logit: the first histogram's
  // boundary bucket holds most of the row, so the band is narrowed by
  // histograms over its own tokens, once or several times; plateaus of ties
  // stop the narrowing, and the sort finishes.
  std::mt19937_64 rng(31);
  bd::Decoder dec;
  int cases = 0;
  for (size_t v : {5000, 40000, 150000}) {
    for (int shape = 0; shape < 4; ++shape) {
      std::vector<float> row(v);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (size_t i = 0; i < v; ++i) {
        const double x = u(rng);
        switch (shape) {
          case 0: row[i] = static_cast<float>(0.02 * x); break;           // uniform, dense
          case 1: row[i] = static_cast<float>(1e-4 * x * x); break;       // denser still
          case 2: row[i] = static_cast<float>(0.001 * std::floor(8 * x)); break;  // 8 plateaus
          default: row[i] = static_cast<float>(i % 13 == 0 ? 3.0 + x : 0.01 * x); break;  // a head
        }
      }
      for (double p : {0.1, 0.5, 0.9, 0.99}) {
        for (float t : {1.0f, 0.5f}) {
          bd::DecodeOptions o;
          ref::ChainOptions r;
          o.top_p = static_cast<float>(p);
          r.top_p = o.top_p;
          o.temperature = r.temperature = t;
          CAPTURE(v);
          CAPTURE(shape);
          CAPTURE(p);
          REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
          CheckMatches(dec, ref::Chain(row, r));
          ++cases;
        }
      }
    }
  }
  MESSAGE(cases << " dense-band top-p cases matched the float64 reference");
}

TEST_CASE("-0 and +0 tie: the lower id comes first, whichever carries the sign") {
  bd::Decoder dec;
  bd::DecodeOptions o;
  // Both orders of the signs, in the sorted head and past it (top_k forces a
  // partial sort of the whole row).
  for (const bool minus_first : {true, false}) {
    std::vector<float> row(300, -5.0f);
    for (size_t i = 0; i < row.size(); i += 3) row[i] = (((i / 3) % 2 == 0) == minus_first) ? -0.0f : 0.0f;
    for (const int top_k : {0, 40, 150}) {
      o.top_k = top_k;
      REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
      const size_t zeros = top_k > 0 ? std::min<size_t>(top_k, 100) : 100;
      REQUIRE(dec.k() >= zeros);
      for (size_t i = 0; i < zeros; ++i) CHECK(dec.ids()[i] == static_cast<int32_t>(3 * i));
    }
  }
}

namespace {

// The largest lambda (within 0.1 %) whose adaptive k reaches target on row
// (bisection on log lambda, with the default search).
double LambdaForK(bd::Decoder& dec, const std::vector<float>& row, bd::DecodeOptions o,
                  size_t target) {
  double lo = 1e-300, hi = 10.0;
  for (int it = 0; it < 80 && hi / lo > 1.001; ++it) {
    o.bregman.lambda = std::sqrt(lo * hi);
    REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    (dec.k() >= target ? lo : hi) = o.bregman.lambda;
  }
  return lo;
}

}  // namespace

TEST_CASE("Bregman search: the sorted prefix grows geometrically from 64 and stays within a small multiple of the support") {
  // The stage asks EnsureSorted for 64, 512, then 4x more up to 32768 and
  // 2x past it (or what the search needs, when that is more), and a growth
  // keeps all it gathers (at most 3x what it asked). f961bf6 grew 8x from
  // the search's first, tiny request (2, 67, 992, 7936 at k ~ 1031: a loose
  // threshold at 992 and 11 543 entries sorted, twice the time); 4x past
  // 32768 sorted the whole row for k ~ 70 000.
  std::mt19937_64 rng(91);
  const size_t v = 262144;
  const std::vector<float> row = LlmRow(v, rng, 1.1);
  bd::Decoder dec;
  for (double alpha : {0.5, 2.0}) {
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.alpha = alpha;
    for (size_t target : {size_t{40}, size_t{700}, size_t{1031}, size_t{4097}, size_t{20000},
                          size_t{70000}, size_t{150000}}) {
      o.bregman.lambda = LambdaForK(dec, row, o, target);
      REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
      CAPTURE(alpha);
      CAPTURE(dec.k());
      const std::vector<size_t> asked = bd::PrefixRequests(bd::BregmanProbesOf(dec));
      REQUIRE(!asked.empty());
      CHECK(asked[0] >= 64);
      for (size_t i = 1; i < asked.size(); ++i) {
        CAPTURE(i);
        CHECK((asked[i] >= (asked[i - 1] < 32768 ? 4 : 2) * asked[i - 1] || asked[i] == v));
      }
      const size_t sorted = bd::BregmanProbesOf(dec).sorted_prefix;
      CHECK(sorted > dec.k());  // the search read p_(k+1)
      CHECK(sorted <= std::min(v, 16 * dec.k() + 4096));
      if (target == 70000) CHECK(sorted < 3 * v / 4);  // not the whole row
    }
  }
}

TEST_CASE("Bregman search: settling probes save Newton work, decide every probe's side as the exact solve does, and change no result") {
  std::mt19937_64 rng(77);
  const size_t v = 40000;
  const std::vector<float> row = LlmRow(v, rng, 1.1);
  struct Mode {
    bd::BregmanDivergence div;
    double alpha;
  };
  const Mode modes[] = {{bd::BregmanDivergence::kDual, 1.5}, {bd::BregmanDivergence::kDual, 3.0},
                        {bd::BregmanDivergence::kPrimal, 0.5}, {bd::BregmanDivergence::kPrimal, 4.0},
                        {bd::BregmanDivergence::kPrimal, 0.3}};
  bd::Decoder dec;
  bd::BregmanTuning& tuning = bd::BregmanTuningOf(dec);
  const bd::BregmanProbes& probes = bd::BregmanProbesOf(dec);
  size_t saved_cases = 0, cases = 0;
  const size_t estimates_before = probes.estimate_settles;
  for (const Mode& m : modes) {
    CAPTURE(m.alpha);
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.divergence = m.div;
    o.bregman.alpha = m.alpha;
    for (size_t target : {size_t{300}, v / 3}) {
      o.bregman.lambda = LambdaForK(dec, row, o, target);
      CAPTURE(target);
      tuning.settling = false;
      const size_t c0 = probes.map_terms;
      REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
      const size_t plain = probes.map_terms - c0;
      const std::vector<int32_t> ids(dec.ids(), dec.ids() + dec.k());
      const std::vector<float> probs(dec.probs(), dec.probs() + dec.k());
      tuning.settling = true;
      const size_t c1 = probes.map_terms;
      const size_t p1 = probes.settled_probes;
      REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
      const size_t settling = probes.map_terms - c1;
      CHECK(probes.settled_probes > p1);
      REQUIRE(dec.k() == ids.size());
      CHECK(std::memcmp(dec.ids(), ids.data(), ids.size() * sizeof(int32_t)) == 0);
      CHECK(std::memcmp(dec.probs(), probs.data(), probs.size() * sizeof(float)) == 0);
      ++cases;
      saved_cases += 10 * settling <= 9 * plain;  // at least 10 % fewer coordinates
      MESSAGE("alpha " << m.alpha << " k " << dec.k() << ": " << plain << " -> " << settling
                       << " coordinates");
      // Every settled probe re-solved exactly lands on the side it decided.
      tuning.settle_check = true;
      const size_t d0 = probes.settle_disagreements;
      REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
      CHECK(probes.settle_disagreements == d0);
      tuning.settle_check = false;
      CHECK(dec.k() == ids.size());
    }
  }
  CHECK(saved_cases * 2 >= cases);  // most cases save at least 10 %
  // Near the answer probes settle on their anchored estimates (checked
  // above with the rest).
  CHECK(probes.estimate_settles > estimates_before);
}

TEST_CASE("Bregman search: a lambda below every gain keeps the whole row after one probe below the clamp") {
  // The gallop runs into the clamp (all positive mass kept) with its last two
  // probes extrapolating the crossing past it: one probe just below decides
  // k = n, where bisection used to solve ~log2 n supports near n.
  std::mt19937_64 rng(31);
  const size_t v = 40000;
  const std::vector<float> row = LlmRow(v, rng, 1.1);
  struct Mode {
    bd::BregmanDivergence div;
    double alpha;
    double lambda;
  };
  const Mode modes[] = {{bd::BregmanDivergence::kDual, 1.5, 1e-30},
                        {bd::BregmanDivergence::kDual, 2.5, 1e-40},
                        {bd::BregmanDivergence::kPrimal, 0.5, 1e-12},
                        {bd::BregmanDivergence::kPrimal, 0.25, 1e-6}};
  bd::Decoder dec;
  const bd::BregmanProbes& probes = bd::BregmanProbesOf(dec);
  for (const Mode& m : modes) {
    CAPTURE(m.alpha);
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.divergence = m.div;
    o.bregman.alpha = m.alpha;
    o.bregman.lambda = m.lambda;
    const size_t c0 = probes.map_terms;
    REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
    const size_t coordinates = probes.map_terms - c0;
    CHECK(dec.k() == v);
    MESSAGE("alpha " << m.alpha << ": " << coordinates / static_cast<double>(v)
                     << " Newton coordinates per kept token");
    // Map evaluations (the sketch's nodes and tokens): 0.67-0.74 v with the
    // probe below the clamp, 1.5-2.1 v with a bisection to it instead.
    CHECK(coordinates <= v + v / 4);
    // The same k one step short of the clamp: k_max = v - 1 keeps v - 1.
    o.bregman.k_max = v - 1;
    REQUIRE(dec.Decode(row.data(), v, o) == bd::StatusCode::kOk);
    CHECK(dec.k() == v - 1);
  }
}

TEST_CASE("decode() sorted and unsorted give every id the same probability (the normaliser is the set's)") {
  // Full rows and truncated lists (top-p, min-p) of several sizes: the
  // unsorted output sums Z over the list in id order, the sorted one over
  // the sorted list; the probabilities per id must agree bit for bit (the
  // fuzzer found a 70 000-token row where a running sum's last bit moved one
  // token's float probability).
  std::mt19937_64 rng(77);
  size_t compared = 0, mismatches = 0;
  for (const size_t v : {size_t{1000}, size_t{70000}, size_t{150000}}) {
    for (int row_kind = 0; row_kind < 3; ++row_kind) {
      std::vector<float> row = LlmRow(v, rng, row_kind == 0 ? 1.1 : 0.05 * row_kind);
      for (int config = 0; config < 3; ++config) {
        bd::DecodeOptions o;
        if (config == 1) o.top_p = 0.9f;
        if (config == 2) o.min_p = 0.01f;
        o.sorted = true;
        bd::Decoder sorted, unsorted;
        REQUIRE(sorted.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        o.sorted = false;
        REQUIRE(unsorted.Decode(row.data(), v, o) == bd::StatusCode::kOk);
        REQUIRE(sorted.k() == unsorted.k());
        std::vector<float> p_of(v, -1.0f);
        for (size_t i = 0; i < sorted.k(); ++i) p_of[sorted.ids()[i]] = sorted.probs()[i];
        for (size_t i = 0; i < unsorted.k(); ++i) {
          mismatches += p_of[unsorted.ids()[i]] != unsorted.probs()[i];
        }
        ++compared;
      }
    }
  }
  MESSAGE(compared << " decodes compared, " << mismatches << " probabilities apart");
  CHECK(mismatches == 0);
}

// The draw over Bregman's q walks blocks of 256 by their sums (four
// interleaved running sums each) and then one block entry by entry, instead
// of one running sum over up to k ~ V/2 entries. It must pick what the plain
// running sum picks wherever u is not within rounding of a boundary, and a
// neighbour of it where it is; checked against a long double prefix sum.
TEST_CASE("the draw over explicit probabilities: blocked sums pick the running sum's index") {
  std::mt19937_64 gen(91);
  size_t checked = 0, near = 0;
  for (const size_t n : {size_t{1}, size_t{3}, size_t{255}, size_t{256}, size_t{257}, size_t{1000}, size_t{70001}}) {
    for (const bool sorted : {true, false}) {
      std::vector<double> q(n);
      std::exponential_distribution<double> ex(1.0);
      long double total = 0.0L;
      for (double& x : q) {
        x = ex(gen) * ex(gen);
        total += x;
      }
      if (sorted) std::sort(q.begin(), q.end(), std::greater<double>());
      for (double& x : q) x = static_cast<double>(x / total);
      std::vector<long double> prefix(n);  // prefix[i] = q_0 + ... + q_i
      std::vector<double> serial(n);
      long double acc = 0.0L;
      double run = 0.0;
      for (size_t i = 0; i < n; ++i) {
        prefix[i] = acc += q[i];
        serial[i] = run += q[i];
      }
      std::vector<double> us = {0.0, 1e-300, 0.5, 1.0 - 1e-16, std::nextafter(1.0, 0.0)};
      std::uniform_real_distribution<double> uni(0.0, 1.0);
      for (int t = 0; t < 300; ++t) us.push_back(uni(gen));
      for (size_t i = 0; i < n; i += 1 + n / 40) us.push_back(serial[i]);  // exactly at a running sum
      for (const double u : us) {
        const size_t got = bd::WalkProbs(q.data(), n, u);
        REQUIRE(got < n);
        size_t want = n - 1;  // the plain running sum
        for (size_t i = 0; i < n; ++i) {
          if (serial[i] > u) {
            want = i;
            break;
          }
        }
        // Within rounding of a boundary the two sums may round apart.
        const long double slack = 1e-13L;
        bool at_edge = false;
        for (const size_t i : {want, want > 0 ? want - 1 : want}) {
          at_edge |= std::fabs(static_cast<double>(prefix[i] - u)) < slack;
        }
        if (got != want) {
          ++near;
          CHECK_MESSAGE(at_edge, "n " << n << " u " << u << " got " << got << " want " << want);
          CHECK((got + 1 == want || want + 1 == got));
        }
        // Either way the pick's interval holds u up to rounding.
        const long double lo = got > 0 ? prefix[got - 1] : 0.0L;
        CHECK(lo <= u + slack);
        CHECK((prefix[got] > u - slack || got == n - 1));
        ++checked;
      }
    }
  }
  MESSAGE(checked << " draws checked, " << near << " at a boundary picked its neighbour");
}

// The Bregman stage's p must sum to 1 in float64: its normaliser was a float
// pass over the row (~1e-7 of Z), and 1 - sum p is the mass the
// renormalisation spreads. Against a float64 reference:
// each case below failed before (q of a 3e-7 token 15 % off at k = V, a
// 2e-9 increment lost, k = 1 for the oracle's 3, objectives 1e-5..1e-4 off).
TEST_CASE("Bregman's normaliser: small q, small increments, k and objectives to float64 precision") {
  namespace bo = bregman_oracle;
  struct Case {
    std::vector<float> row;
    bo::Mode mode;
    double alpha;
    size_t k;        // fixed k, or 0: adaptive with lambda
    double lambda;
    double q_tol, obj_tol;  // relative
  };
  const Case cases[] = {
      {{0, 0, 0, -14}, bo::Mode::kPrimal, 3.0, 4, 0, 2e-7, 0},
      {{0, 0, 0, -14}, bo::Mode::kDual, 3.0, 4, 0, 2e-7, 0},
      {{0, -14}, bo::Mode::kPrimal, 3.0, 0, 0.0, 2e-7, 0},
      {{0, -20, -20}, bo::Mode::kPrimal, 2.0, 2, 0, 2e-7, 1e-6},
      {{0, -20, -20, -20, -20}, bo::Mode::kPrimal, 2.0, 0, 5e-18, 2e-7, 1e-6},
      {{0, -8}, bo::Mode::kPrimal, 1.0, 1, 0, 2e-7, 1e-9},
      {{0, -8, -9, -3, -4}, bo::Mode::kPrimal, 3.0, 3, 0, 2e-7, 1e-8},
      {{0, -8, -9, -3, -4}, bo::Mode::kDual, 2.5, 2, 0, 2e-7, 1e-8},
  };
  bd::Decoder dec;
  for (const Case& c : cases) {
    const size_t v = c.row.size();
    double max = -INFINITY;
    for (float x : c.row) max = std::max(max, static_cast<double>(x));
    std::vector<double> p(v);
    double z = 0.0;
    for (size_t i = 0; i < v; ++i) z += p[i] = std::exp(static_cast<double>(c.row[i]) - max);
    for (double& x : p) x /= z;
    const bo::Table table = bo::MakeTable(c.mode, c.alpha, p);
    size_t want_k = c.k;
    double want_obj;
    std::vector<double> want_q;
    if (c.k > 0) {
      want_q = bo::TopKQ(table, c.k);
      want_obj = table.d[c.k - 1];
    } else {
      const bo::Decision d = bo::Decide(table, c.lambda);
      want_k = d.k;
      want_q = d.q;
      want_obj = d.objective;
    }
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.divergence = c.mode == bo::Mode::kDual ? bd::BregmanDivergence::kDual
                                                     : bd::BregmanDivergence::kPrimal;
    o.bregman.alpha = c.alpha;
    if (c.k > 0) o.bregman.fixed_k = c.k;
    else o.bregman.lambda = c.lambda;
    CAPTURE(v); CAPTURE(c.alpha); CAPTURE(c.k); CAPTURE(c.lambda);
    REQUIRE(dec.Decode(c.row.data(), v, o) == bd::StatusCode::kOk);
    REQUIRE(dec.k() == want_k);
    for (size_t i = 0; i < dec.k(); ++i) {
      const double w = want_q[static_cast<size_t>(dec.ids()[i])];
      CHECK(std::fabs(dec.probs()[i] - w) <= c.q_tol * w);
    }
    if (c.obj_tol > 0) CHECK(std::fabs(dec.objective() - want_obj) <= c.obj_tol * want_obj);
  }
}

TEST_CASE("Bregman: tau_k where the dropped mass is below float64's resolution of 1 (known failure)" *
          doctest::should_fail()) {
  // Against a long-double reference at k* - 1, k*, k* + 1. Logits
  // {0, -40, -40}: p = (1 - 8.50e-18, 4.25e-18, 4.25e-18). p_(1) rounds to
  // 1.0, so 1 - s_1 is 0 in float64 and R_1 (in-support cost of k = 1) comes
  // out 0 where it is rem^2 / 2 = 3.6e-35 (alpha 2). The search then prices
  // tau_1 = p_2^2 / 4 = 4.5e-36 instead of (rem_1 + p_2)^2 / 4 = 4.06e-35
  // (exact, spec 4.2: EuclidTau with the true rem), so lambda = 1e-35, below
  // tau_1 and tau_2 = (rem_2 + 2 p_3)^2 / 12 = 1.35e-35 (mpmath), gives k = 1
  // for the spec's k = 3, at twice the optimal objective (C(1) = 6.4e-35
  // against C(3) = 3e-35). Same root as the objective's precision in
  // docs/bregman.md, "Precision" (1 - s_k lost below ~1e-16): k is wrong
  // too, wherever lambda lies below ~(dropped mass)^2 and alpha >= 2 (primal
  // alpha 3 at lambda 1e-40 gives k = 1 as well, its tau_1 being ~3.6e-35).
  // Fixing it means taking the dropped mass from the tail's own sum
  // (notes/bregman_journal.md, "The objective's tail": left open because it
  // moves q's bits everywhere). Marked should_fail until then.
  bd::Decoder dec;
  const std::vector<float> row = {0.0f, -40.0f, -40.0f};
  bd::DecodeOptions o;
  o.bregman_enabled = true;
  o.bregman.alpha = 2.0;
  o.bregman.lambda = 1e-35;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 3);
  o.bregman.alpha = 3.0;
  o.bregman.lambda = 1e-40;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() > 1);
}
