// Stateful sampling (the llama.cpp sampler contract: accept / reset / clone)
// and chain order, end to end through the decoder.
#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <random>
#include <vector>

#include "decoder.h"
#include "reference/shaping_reference.h"
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

TEST_CASE("the history shows exactly the latest min(accepted, kMaxHistory) tokens, and stays bounded") {
  // Dropping the oldest half of a kMaxHistory buffer left windows above
  // kMaxHistory / 2 short of tokens right after each drop (4097 seen after
  // kMaxHistory + 1 accepts).
  constexpr size_t K = bd::SamplerState::kMaxHistory;
  bd::SamplerState s;
  size_t accepted = 0;
  for (const size_t n : {size_t{1}, K - 1, K, K + 1, 2 * K - 1, 2 * K, 2 * K + 1, 3 * K, 5 * K + 7}) {
    while (accepted < n) s.Accept(static_cast<int32_t>(accepted++));
    const size_t want = std::min(n, K);
    REQUIRE(s.history_len() == want);
    bool latest = true;
    for (size_t i = 0; i < want; ++i) latest &= s.history()[i] == static_cast<int32_t>(n - want + i);
    CHECK_MESSAGE(latest, "after " << n << " accepts");
    const bd::SamplerState copy = s;  // a clone sees the same tokens
    CHECK(copy.history_len() == want);
    CHECK(std::equal(copy.history(), copy.history() + want, s.history()));
  }
}

TEST_CASE("a sampler's penalty window of kMaxHistory reads what the stateless call with the whole history reads") {
  constexpr size_t K = bd::SamplerState::kMaxHistory;
  const size_t V = 64;
  std::vector<float> row(V);
  for (size_t i = 0; i < V; ++i) row[i] = 0.01f * static_cast<float>(i % 7);
  std::vector<int32_t> history;
  bd::SamplerState state;
  for (size_t i = 0; i < K + K / 2 + 3; ++i) {  // past the first drop point of the old scheme
    const int32_t t = static_cast<int32_t>((i * 37 + i / 5) % V);
    history.push_back(t);
    state.Accept(t);
  }
  bd::DecodeOptions o;
  o.penalties.last_n = static_cast<int32_t>(K);
  o.penalties.presence = 0.5f;
  o.penalties.frequency = 0.01f;
  bd::Decoder a, b;
  REQUIRE(a.Decode(row.data(), V, o, &state) == bd::StatusCode::kOk);
  o.history = history.data();
  o.history_len = history.size();
  REQUIRE(b.Decode(row.data(), V, o) == bd::StatusCode::kOk);
  REQUIRE(a.k() == b.k());
  for (size_t i = 0; i < a.k(); ++i) {
    CHECK(a.ids()[i] == b.ids()[i]);
    CHECK(a.probs()[i] == b.probs()[i]);
  }
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

TEST_CASE("mirostat 1.0 through a sampler: each step's k and mu as the float64 reference says") {
  const std::vector<float> row = ZipfRow(3000, 3);
  bd::DecodeOptions o;
  o.seed = 77;
  o.temperature = 1.2f;
  o.mirostat_enabled = true;
  o.mirostat.version = 1;
  o.mirostat.tau = 4.0f;
  o.mirostat.eta = 0.3f;
  o.return_distribution = true;
  bd::Decoder dec;
  bd::SamplerState s;
  s.Reset(o.mirostat);
  CHECK(s.mirostat().mu == 8.0f);
  double mu = 8.0;  // the reference's mu, in float64
  size_t distinct_k = 0, last_k = 0, checked = 0;
  for (int step = 0; step < 40; ++step) {
    CAPTURE(step);
    shaping_ref::Cands all = shaping_ref::All(row);
    all.temperature = o.temperature;
    const shaping_ref::Result want = shaping_ref::MirostatV1(row, all, s.mirostat().mu);
    REQUIRE(dec.Sample(row.data(), row.size(), o, &s) == bd::StatusCode::kOk);
    if (want.margin > 1e-6) {
      CHECK(dec.k() == want.c.ids.size());
      ++checked;
    }
    distinct_k += dec.k() != last_k;
    last_k = dec.k();
    // mu -= eta (-log2 p - tau), p the drawn token's probability among the
    // kept (the decoder's logprob).
    mu = static_cast<float>(mu - 0.3 * (-dec.logprob() / std::log(2.0) - 4.0));
    CHECK(s.mirostat().mu == doctest::Approx(mu).epsilon(1e-6));
    mu = s.mirostat().mu;
  }
  CHECK(checked >= 35);
  CHECK(distinct_k >= 3);  // mu moves k
}
