// Stateful sampling (the llama.cpp sampler contract: accept / reset / clone)
// and chain order, end to end through the decoder.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "decoder.h"
#include "sampler_state.h"

namespace {

std::vector<float> ZipfRow(size_t v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> row(v);
  for (size_t i = 0; i < v; ++i) {
    row[i] = static_cast<float>(-1.0 * std::log(i + 1.0) + 0.3 * ((rng() >> 11) * 0x1.0p-53 - 0.5));
  }
  for (size_t i = v - 1; i > 0; --i) std::swap(row[i], row[rng() % (i + 1)]);
  return row;
}

// A mixed chain with every stateful stage.
bd::DecodeOptions MixedChain() {
  bd::DecodeOptions o;
  o.seed = 2024;
  o.penalties.repetition = 1.3f;
  o.penalties.presence = 0.2f;
  o.penalties.last_n = 16;
  o.dry.multiplier = 0.8f;
  o.no_repeat_ngram.size = 4;
  o.top_k = 200;
  o.temperature = 0.9f;
  o.mirostat_enabled = true;
  o.mirostat.tau = 3.0f;
  o.mirostat.eta = 0.2f;
  return o;
}

std::vector<int32_t> Draw(bd::Decoder& dec, const std::vector<float>& row,
                          const bd::DecodeOptions& o, bd::SamplerState& s, int n) {
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) {
    REQUIRE(dec.Sample(row.data(), row.size(), o, &s) == bd::StatusCode::kOk);
    out.push_back(dec.token());
  }
  return out;
}

}  // namespace

TEST_CASE("a clone taken after N accepts continues exactly like the original") {
  const std::vector<float> row = ZipfRow(3000, 1);
  const bd::DecodeOptions o = MixedChain();
  bd::Decoder dec;
  bd::SamplerState s;
  s.Reset(o.mirostat);
  Draw(dec, row, o, s, 37);
  const float mu_before = s.mirostat().mu;
  CHECK(mu_before != 2.0f * o.mirostat.tau);  // mirostat learned from the draws
  bd::SamplerState clone = s;
  CHECK(clone.history_len() == 37);
  CHECK(clone.step() == s.step());
  const std::vector<int32_t> a = Draw(dec, row, o, s, 100);
  const std::vector<int32_t> b = Draw(dec, row, o, clone, 100);
  CHECK(a == b);
}

TEST_CASE("reset restores the initial output; accept feeds the history stages") {
  const std::vector<float> row = ZipfRow(3000, 2);
  const bd::DecodeOptions o = MixedChain();
  bd::Decoder dec;
  bd::SamplerState s;
  s.Reset(o.mirostat);
  const std::vector<int32_t> first = Draw(dec, row, o, s, 60);
  s.Reset(o.mirostat);
  CHECK(s.history_len() == 0);
  CHECK(s.step() == 0);
  CHECK(Draw(dec, row, o, s, 60) == first);
  // Penalties see accepted tokens: with greedy decoding the argmax, once
  // accepted and penalised, is no longer chosen.
  bd::DecodeOptions g;
  g.temperature = 0.0f;
  g.penalties.presence = 100.0f;
  g.penalties.last_n = -1;
  bd::SamplerState t;
  t.Reset(g.mirostat);
  REQUIRE(dec.Sample(row.data(), row.size(), g, &t) == bd::StatusCode::kOk);
  const int32_t top = dec.token();
  REQUIRE(dec.Sample(row.data(), row.size(), g, &t) == bd::StatusCode::kOk);
  CHECK(dec.token() != top);
  // The stateless call with the same history agrees.
  g.history = t.history();
  g.history_len = 1;
  REQUIRE(dec.Sample(row.data(), row.size(), g) == bd::StatusCode::kOk);
  CHECK(dec.token() == t.history()[1]);
}

TEST_CASE("the history is bounded: 3 kMaxHistory accepts keep at most kMaxHistory") {
  bd::SamplerState s;
  for (size_t i = 0; i < 3 * bd::SamplerState::kMaxHistory; ++i) s.Accept(static_cast<int32_t>(i));
  CHECK(s.history_len() <= bd::SamplerState::kMaxHistory);
  CHECK(s.history()[s.history_len() - 1] == static_cast<int32_t>(3 * bd::SamplerState::kMaxHistory - 1));
}

TEST_CASE("chain order changes results as documented: top-k then top-p vs top-p then top-k") {
  // p = [0.5, 0.3, 0.15, 0.05]
  std::vector<float> row = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  bd::Decoder dec;
  bd::DecodeOptions o;
  o.top_k = 2;
  o.top_p = 0.6f;
  o.order[0] = bd::StageId::kTopK;
  o.order[1] = bd::StageId::kTopP;
  o.order_len = 2;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 1);  // top-k renormalises to [0.625, 0.375]; 0.625 >= 0.6
  o.order[0] = bd::StageId::kTopP;
  o.order[1] = bd::StageId::kTopK;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 2);  // 0.5 < 0.6 <= 0.8 on the original
  // Temperature before min-p widens it (llama.cpp's default puts min-p first).
  bd::DecodeOptions m;
  m.min_p = 0.5f;
  m.temperature = 2.0f;
  REQUIRE(dec.Decode(row.data(), row.size(), m) == bd::StatusCode::kOk);
  CHECK(dec.k() == 2);
  m.order[0] = bd::StageId::kTemperature;
  m.order[1] = bd::StageId::kMinP;
  m.order_len = 2;
  REQUIRE(dec.Decode(row.data(), row.size(), m) == bd::StatusCode::kOk);
  CHECK(dec.k() == 3);
}
