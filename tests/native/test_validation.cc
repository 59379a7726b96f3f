// The checks that need the row (decoder_validate.cc): the row's size limit,
// fixed Bregman k against the vocabulary, every token id in the options and
// in a sampler's state; and that an error leaves the decoder usable (the
// next valid call gives what a fresh decoder gives).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "decoder.h"
#include "option_slots.h"
#include "size_limits.h"

namespace {

std::vector<float> Row(size_t v) {
  std::vector<float> row(v);
  for (size_t i = 0; i < v; ++i) row[i] = -0.7f * std::log(1.0f + static_cast<float>(i));
  return row;
}

// Expects a RangeError whose message contains `needle`, then checks that the
// same decoder still draws exactly what a fresh one draws.
void ExpectRangeError(bd::Decoder& dec, bd::StatusCode got, const char* needle) {
  REQUIRE(got == bd::StatusCode::kRangeError);
  CHECK_MESSAGE(std::strstr(dec.error(), needle) != nullptr, dec.error());
  const std::vector<float> row = Row(50);
  bd::DecodeOptions o;
  o.top_k = 7;
  o.seed = 11;
  REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
  bd::Decoder fresh;
  REQUIRE(fresh.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.token() == fresh.token());
  CHECK(dec.k() == fresh.k());
}

}  // namespace

TEST_CASE("validation: fixed bregman.k above the vocabulary is a RangeError, k = V is fine") {
  bd::Decoder dec;
  const std::vector<float> row = Row(10);
  bd::DecodeOptions o;
  o.bregman_enabled = true;
  o.bregman.alpha = 1.5;
  o.bregman.fixed_k = 11;
  ExpectRangeError(dec, dec.Decode(row.data(), 10, o), "bregman.k");
  o.bregman.fixed_k = 10;
  REQUIRE(dec.Decode(row.data(), 10, o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 10);
  // Fewer survivors than k (after top_k) is not an error: k is clamped to them.
  o.top_k = 3;
  REQUIRE(dec.Decode(row.data(), 10, o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 3);
}

TEST_CASE("validation: token ids outside the vocabulary in any list are RangeErrors naming the list") {
  bd::Decoder dec;
  const std::vector<float> row = Row(10);
  const int32_t bad_ids[] = {10, -1, 1 << 30};
  for (int32_t bad : bad_ids) {
    const int32_t ids[] = {1, 2, bad};
    const float bias[] = {0.5f, 0.5f, 0.5f};
    {
      bd::DecodeOptions o;
      o.penalties.repetition = 1.3f;
      o.history = ids;
      o.history_len = 3;
      ExpectRangeError(dec, dec.Sample(row.data(), 10, o), "history");
      o.penalties.repetition = 1.0f;  // history is checked even with no stage reading it
      ExpectRangeError(dec, dec.Decode(row.data(), 10, o), "history");
    }
    {
      bd::DecodeOptions o;
      o.logit_bias.ids = ids;
      o.logit_bias.bias = bias;
      o.logit_bias.n = 3;
      ExpectRangeError(dec, dec.Decode(row.data(), 10, o), "logit_bias");
    }
    {
      bd::DecodeOptions o;
      o.logit_bias.banned = ids;
      o.logit_bias.n_banned = 3;
      ExpectRangeError(dec, dec.Decode(row.data(), 10, o), "banned_tokens");
    }
    {
      bd::DecodeOptions o;
      o.logit_bias.allowed = ids;
      o.logit_bias.n_allowed = 3;
      o.logit_bias.restrict_to_allowed = true;
      ExpectRangeError(dec, dec.Decode(row.data(), 10, o), "allowed_tokens");
    }
    {
      bd::DecodeOptions o;
      o.dry.multiplier = 0.8f;
      o.dry.breakers = ids;
      o.dry.n_breakers = 3;
      ExpectRangeError(dec, dec.Decode(row.data(), 10, o), "dry_sequence_breakers");
    }
  }
}

TEST_CASE("validation: a sampler that accepted an id is refused on a smaller vocabulary") {
  bd::Decoder dec;
  const std::vector<float> big = Row(100), small = Row(10);
  bd::DecodeOptions o;
  o.penalties.repetition = 1.2f;
  o.seed = 3;
  bd::SamplerState s;
  s.Accept(42);
  REQUIRE(dec.Sample(big.data(), 100, o, &s) == bd::StatusCode::kOk);
  const size_t history = s.history_len();
  const uint64_t step = s.step();
  ExpectRangeError(dec, dec.Sample(small.data(), 10, o, &s), "sampler");
  // The failed call changed nothing in the state.
  CHECK(s.history_len() == history);
  CHECK(s.step() == step);
  ExpectRangeError(dec, dec.Decode(small.data(), 10, o, &s), "sampler");
  bd::SamplerState neg;
  neg.Accept(-5);
  ExpectRangeError(dec, dec.Decode(big.data(), 100, o, &neg), "sampler");
  s.Reset(o.mirostat);  // reset forgets the vocabulary too
  REQUIRE(dec.Sample(small.data(), 10, o, &s) == bd::StatusCode::kOk);
}

TEST_CASE("validation: a row longer than kMaxVocab is a RangeError, kMaxVocab itself decodes") {
  bd::Decoder dec;
  std::vector<float> row(bd::kMaxVocab + 1, 0.0f);
  row[7] = 1.0f;
  bd::DecodeOptions o;
  o.top_k = 40;
  ExpectRangeError(dec, dec.Decode(row.data(), row.size(), o), "largest vocabulary");
  REQUIRE(dec.Decode(row.data(), bd::kMaxVocab, o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 40);
  CHECK(dec.ids()[0] == 7);
  // About 76 bytes of workspace per token (README "Limits").
  CHECK(dec.WorkspaceBytes() <= 80 * bd::kMaxVocab);
}

TEST_CASE("validation: any value in any option slot reads without undefined behaviour") {
  // The wasm build reads options from a block of doubles: every slot, with
  // every kind of garbage, must read into DecodeOptions and give kOk or an
  // error (the sanitizer layer of npm test turns a bad cast into a failure).
  bd::Decoder dec;
  const std::vector<float> row = Row(20);
  const int32_t aux_i32[] = {1, 2, 3};
  const float aux_f32[] = {0.5f, -1.0f, 2.0f};
  const double garbage[] = {NAN, -2.0, -1e300, 1e300, INFINITY, -INFINITY, 4294967296.0, 0.5, 1e-310};
  for (size_t slot = 0; slot < bd::kNumOptionSlots; ++slot) {
    for (double g : garbage) {
      std::vector<double> s(bd::kNumOptionSlots, 0.0);
      s[bd::kSlot_TEMPERATURE] = 1;
      s[bd::kSlot_TOP_P] = 1;
      s[bd::kSlot_TYPICAL_P] = 1;
      s[bd::kSlot_REPETITION_PENALTY] = 1;
      s[bd::kSlot_DRY_BASE] = 1.75;
      s[bd::kSlot_BREGMAN_ALPHA] = 1;
      s[slot] = g;
      const bd::DecodeOptions o = bd::OptionsFromSlots(s.data(), aux_i32, 3, aux_f32, 3);
      const bd::StatusCode st = dec.Sample(row.data(), row.size(), o);
      CHECK((st == bd::StatusCode::kOk || dec.error()[0] != '\0'));
    }
  }
  ExpectRangeError(dec, dec.Decode(row.data(), 0, bd::DecodeOptions{}), "empty");
}

// At temperatures near FLT_MAX a logit gap above FLT_MAX
// overflowed the float passes' (v - max) to -inf (weight 0) while decode()'s
// float64 probabilities gave it e^{gap / T} > 0: sample() never drew a token
// that decode() gave 0.12. Temperatures (and dynatemp ranges) above 1e30 are
// refused; at 1e30 both ways give that token 0.
TEST_CASE("temperature and dynatemp_range are bounded by kMaxTemperature, where the draw and decode() agree") {
  const std::vector<float> row = {3e38f, -3e38f};
  bd::Decoder dec;
  bd::DecodeOptions o;
  o.temperature = std::nextafter(bd::kMaxTemperature, INFINITY);
  ExpectRangeError(dec, dec.Decode(row.data(), row.size(), o), "temperature");
  o.temperature = 3e38f;
  ExpectRangeError(dec, dec.Sample(row.data(), row.size(), o), "temperature");
  o.temperature = 1.0f;
  o.dynatemp.range = std::nextafter(bd::kMaxTemperature, INFINITY);
  ExpectRangeError(dec, dec.Decode(row.data(), row.size(), o), "dynatemp_range");
  o.dynatemp.range = 0.0f;
  o.temperature = bd::kMaxTemperature;
  REQUIRE(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  double p1 = 0.0;
  for (size_t i = 0; i < dec.k(); ++i) {
    if (dec.ids()[i] == 1) p1 = dec.probs()[i];
  }
  CHECK(p1 == 0.0);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    o.seed = seed;
    REQUIRE(dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk);
    CHECK(dec.token() == 0);
  }
}
