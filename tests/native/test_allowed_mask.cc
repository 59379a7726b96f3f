// allowed_mask, the packed allowed set (XGrammar's token bitmask): the fused
// mask pass (MaskRow) against a scalar restatement and ScanRow of the masked
// row, every bit position on its own, and the decoder's draws and
// distributions with the mask against the same set given as allowed_tokens,
// bit for bit, over random rows, masks and option mixes. The stage on every
// candidate state against the float64 twin is in test_stage_history.cc.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "decoder.h"
#include "kernels/blocks.h"
#include "kernels/row_scan.h"
#include "reference/history_reference.h"
#include "sampler_state.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

size_t Words(size_t v) { return (v + 31) / 32; }

std::vector<float> Row(size_t v, std::mt19937_64& rng) {
  std::normal_distribution<float> g(0.0f, 2.0f);
  std::vector<float> row(v);
  for (float& x : row) x = rng() % 50 == 0 ? -kInf : g(rng);
  return row;
}

// A row for the kernel alone: finite, or with -inf, +inf and NaN at random
// ids (the decoder refuses the last two; the kernel reports them).
std::vector<float> RawRow(size_t v, std::mt19937_64& rng) {
  std::vector<float> row = Row(v, rng);
  const unsigned kind = rng() % 4;
  for (float& x : row) {
    if (kind == 0 && x == -kInf) x = 1.0f;  // all finite
    if (kind == 2 && rng() % 300 == 0) x = kInf;
    if (kind == 3 && rng() % 300 == 0) x = std::nanf("");
  }
  return row;
}

// A mask allowing about `permille` / 1000 of the tokens, with the bits past
// v in the last word set at random (they must be ignored).
std::vector<uint32_t> Mask(size_t v, unsigned permille, std::mt19937_64& rng) {
  std::vector<uint32_t> m(Words(v), 0);
  for (size_t t = 0; t < 32 * m.size(); ++t) {
    if (t >= v ? rng() % 2 == 0 : rng() % 1000 < permille) m[t / 32] |= uint32_t{1} << (t % 32);
  }
  return m;
}

std::vector<int32_t> AllowedIds(const std::vector<uint32_t>& mask, size_t v) {
  std::vector<int32_t> ids;
  for (size_t t = 0; t < v; ++t)
    if (ref::history::MaskBit(mask, t)) ids.push_back(static_cast<int32_t>(t));
  return ids;
}

// MaskRow against the masked row written plainly and ScanRow of it.
void CheckMaskRow(const std::vector<float>& row, const std::vector<uint32_t>& mask,
                  bool in_place) {
  const size_t v = row.size();
  std::vector<float> want(v);
  for (size_t t = 0; t < v; ++t) want[t] = ref::history::MaskBit(mask, t) ? row[t] : -kInf;
  std::vector<float> want_blocks(bd::NumBlocks(v));
  const bd::RowScan want_scan = bd::ScanRow(want.data(), v, want_blocks.data());
  std::vector<float> out(v + 1, 7.0f);  // one guard entry past the row
  if (in_place) std::memcpy(out.data(), row.data(), v * sizeof(float));
  std::vector<float> blocks(bd::NumBlocks(v), 7.0f);
  const bd::RowScan raw = bd::ScanRow(row.data(), v);
  const bd::MaskedRowScan got = bd::MaskRow(in_place ? out.data() : row.data(), mask.data(),
                                            out.data(), v, blocks.data());
  CHECK(std::memcmp(out.data(), want.data(), v * sizeof(float)) == 0);  // NaN bits too
  CHECK(out[v] == 7.0f);
  CHECK(got.masked.max == want_scan.max);
  CHECK(got.masked.finite == want_scan.finite);
  CHECK_FALSE(got.masked.has_nan);
  CHECK(std::memcmp(blocks.data(), want_blocks.data(), blocks.size() * sizeof(float)) == 0);
  // The raw row's checks, as ScanRow makes them (out of place only: in
  // place the raw row is gone).
  if (in_place) return;
  CHECK(got.raw_has_nan == raw.has_nan);
  CHECK(got.raw_has_pos_inf == (raw.max == kInf));
  CHECK(got.raw_finite == raw.finite);
}

}  // namespace

TEST_CASE("allowed_mask: MaskRow equals the plain masked row and its ScanRow") {
  std::mt19937_64 rng(4242);
  for (size_t v : {1, 2, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 4099, 70001}) {
    for (unsigned permille : {0u, 1u, 50u, 500u, 950u, 1000u}) {
      CAPTURE(v);
      CAPTURE(permille);
      const std::vector<float> row = RawRow(v, rng);
      const std::vector<uint32_t> mask = Mask(v, permille, rng);
      CheckMaskRow(row, mask, false);
      CheckMaskRow(row, mask, true);
    }
  }
}

TEST_CASE("allowed_mask: every bit position alone, and every one cleared alone") {
  std::mt19937_64 rng(17);
  for (size_t v : {5, 32, 77, 300}) {
    const std::vector<float> row = Row(v, rng);
    for (size_t t = 0; t < v; ++t) {
      CAPTURE(v);
      CAPTURE(t);
      std::vector<uint32_t> one(Words(v), 0);
      one[t / 32] = uint32_t{1} << (t % 32);
      CheckMaskRow(row, one, false);
      std::vector<uint32_t> all_but(Words(v), ~uint32_t{0});
      all_but[t / 32] &= ~(uint32_t{1} << (t % 32));
      CheckMaskRow(row, all_but, true);
    }
  }
}

namespace {

struct Outcome {
  bd::StatusCode status;
  std::string error;
  std::vector<int32_t> ids;
  std::vector<float> probs;
  int32_t token = -1;
  double logprob = 0.0, raw_logprob = 0.0;
};

Outcome Run(bd::Decoder& dec, bool sample, const std::vector<float>& row,
            const bd::DecodeOptions& o, bd::SamplerState* state = nullptr) {
  Outcome r;
  r.status = sample ? dec.Sample(row.data(), row.size(), o, state)
                    : dec.Decode(row.data(), row.size(), o, state);
  r.error = dec.error();
  if (r.status != bd::StatusCode::kOk) return r;
  r.ids.assign(dec.ids(), dec.ids() + dec.k());
  r.probs.assign(dec.probs(), dec.probs() + dec.k());
  if (sample) {
    r.token = dec.token();
    r.logprob = dec.logprob();
    r.raw_logprob = dec.raw_logprob();
  }
  return r;
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void CheckSame(const Outcome& a, const Outcome& b) {
  REQUIRE(a.status == b.status);
  CHECK(a.error == b.error);
  CHECK(a.ids == b.ids);
  REQUIRE(a.probs.size() == b.probs.size());
  CHECK((a.probs.empty() ||
         std::memcmp(a.probs.data(), b.probs.data(), a.probs.size() * sizeof(float)) == 0));
  CHECK(a.token == b.token);
  CHECK(SameBits(a.logprob, b.logprob));
  CHECK(SameBits(a.raw_logprob, b.raw_logprob));
}

// A random option mix: truncations, temperature, history stages, Bregman.
bd::DecodeOptions Mix(std::mt19937_64& rng, const std::vector<int32_t>& history) {
  bd::DecodeOptions o;
  o.seed = rng();
  o.step = rng() % 1000;
  o.logprobs = rng() % 2 == 0;
  o.sorted = rng() % 4 != 0;
  switch (rng() % 9) {
    case 0: break;
    case 1: o.top_k = 1 + static_cast<int32_t>(rng() % 60); break;
    case 2: o.top_p = 0.9f; break;
    case 3: o.min_p = 0.05f; break;
    case 4: o.temperature = 0.0f; break;
    case 5: o.top_k = 40; o.top_p = 0.95f; o.min_p = 0.05f; o.temperature = 0.8f; break;
    case 6: o.typical.p = 0.9f; break;
    case 7:
      o.bregman_enabled = true;
      o.bregman.alpha = 1.5;
      o.bregman.lambda = 1e-3;
      break;
    default:
      o.penalties.repetition = 1.3f;
      o.penalties.presence = 0.4f;
      o.history = history.data();
      o.history_len = history.size();
      break;
  }
  if (rng() % 3 == 0) o.temperature = rng() % 2 ? 0.7f : 1.6f;
  return o;
}

}  // namespace

TEST_CASE("allowed_mask: decode and sample equal allowed_tokens with the same set, bit for bit") {
  std::mt19937_64 rng(2026);
  bd::Decoder masked, listed;
  size_t runs = 0, removed_all = 0;
  for (size_t v : {1, 31, 33, 100, 257, 4096, 40000}) {
    for (int rep = 0; rep < 24; ++rep) {
      CAPTURE(v);
      CAPTURE(rep);
      const std::vector<float> row = Row(v, rng);
      const unsigned permille = rep % 6 == 0 ? 0 : rep % 3 == 0 ? 1000 : 1 + rng() % 999;
      const std::vector<uint32_t> mask = Mask(v, permille, rng);
      const std::vector<int32_t> allowed = AllowedIds(mask, v);
      std::vector<int32_t> history;
      for (int i = 0; i < 30; ++i) history.push_back(static_cast<int32_t>(rng() % v));
      bd::DecodeOptions with_mask = Mix(rng, history);
      bd::DecodeOptions with_list = with_mask;
      with_mask.logit_bias.mask = mask.data();
      with_mask.logit_bias.mask_words = mask.size();
      with_list.logit_bias.allowed = allowed.data();
      with_list.logit_bias.n_allowed = allowed.size();
      with_list.logit_bias.restrict_to_allowed = true;
      if (rng() % 3 == 0) {
        // Bans beside the set, given to both.
        static const int32_t kBanned[] = {0};
        with_mask.logit_bias.banned = with_list.logit_bias.banned = kBanned;
        with_mask.logit_bias.n_banned = with_list.logit_bias.n_banned = 1;
      }
      for (bool sample : {false, true}) {
        const Outcome a = Run(masked, sample, row, with_mask);
        const Outcome b = Run(listed, sample, row, with_list);
        CheckSame(a, b);
        removed_all += a.status != bd::StatusCode::kOk;
        ++runs;
      }
    }
  }
  MESSAGE(runs << " calls, " << removed_all << " with every token removed");
  CHECK(removed_all > 0);
  CHECK(removed_all < runs / 2);
}

TEST_CASE("allowed_mask: a sampler's draws equal allowed_tokens' step by step") {
  std::mt19937_64 rng(99);
  const size_t v = 3001;
  bd::Decoder dec_a, dec_b;
  bd::SamplerState sa, sb;
  const std::vector<uint32_t> mask = Mask(v, 300, rng);
  const std::vector<int32_t> allowed = AllowedIds(mask, v);
  bd::DecodeOptions a;
  a.seed = 5;
  a.penalties.repetition = 1.5f;
  a.mirostat_enabled = true;
  bd::DecodeOptions b = a;
  a.logit_bias.mask = mask.data();
  a.logit_bias.mask_words = mask.size();
  b.logit_bias.allowed = allowed.data();
  b.logit_bias.n_allowed = allowed.size();
  b.logit_bias.restrict_to_allowed = true;
  sa.Reset(a.mirostat);
  sb.Reset(b.mirostat);
  for (int step = 0; step < 40; ++step) {
    const std::vector<float> row = Row(v, rng);
    CheckSame(Run(dec_a, true, row, a, &sa), Run(dec_b, true, row, b, &sb));
    CHECK(ref::history::MaskBit(mask, static_cast<size_t>(dec_a.token())));
  }
}

TEST_CASE("allowed_mask: with allowed_tokens too, the intersection") {
  std::mt19937_64 rng(3);
  const size_t v = 500;
  const std::vector<float> row = Row(v, rng);
  const std::vector<uint32_t> mask = Mask(v, 500, rng);
  std::vector<int32_t> list;
  for (int32_t t = 0; t < static_cast<int32_t>(v); t += 3) list.push_back(t);
  std::vector<int32_t> both;
  for (int32_t t : list)
    if (ref::history::MaskBit(mask, static_cast<size_t>(t))) both.push_back(t);
  bd::Decoder d1, d2;
  bd::DecodeOptions a, b;
  a.logit_bias.mask = mask.data();
  a.logit_bias.mask_words = mask.size();
  a.logit_bias.allowed = list.data();
  a.logit_bias.n_allowed = list.size();
  a.logit_bias.restrict_to_allowed = true;
  b.logit_bias.allowed = both.data();
  b.logit_bias.n_allowed = both.size();
  b.logit_bias.restrict_to_allowed = true;
  const Outcome x = Run(d1, false, row, a), y = Run(d2, false, row, b);
  CheckSame(x, y);
  CHECK(x.ids.size() < list.size());
}

TEST_CASE("allowed_mask: word count checked against the row; an empty set removes every token") {
  const std::vector<float> row(100, 0.5f);  // ceil(100 / 32) = 4 words
  bd::Decoder dec;
  bd::DecodeOptions o;
  std::vector<uint32_t> mask(5, ~uint32_t{0});
  for (size_t words : {1, 3, 5}) {
    o.logit_bias.mask = mask.data();
    o.logit_bias.mask_words = words;
    CHECK(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kRangeError);
    CHECK(std::string(dec.error()).find("allowed_mask") != std::string::npos);
    CHECK(std::string(dec.error()).find("= 4") != std::string::npos);
  }
  o.logit_bias.mask_words = 4;
  CHECK(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
  CHECK(dec.k() == 100);
  // Only bits past the row set: no token is allowed, as an empty allowed_tokens.
  std::vector<uint32_t> past(4, 0);
  past[3] = ~uint32_t{0} << 4;
  o.logit_bias.mask = past.data();
  CHECK(dec.Decode(row.data(), row.size(), o) == bd::StatusCode::kRangeError);
  const std::string masked_error = dec.error();
  CHECK(masked_error.find("every token was removed") != std::string::npos);
  bd::DecodeOptions empty_list;
  empty_list.logit_bias.restrict_to_allowed = true;
  CHECK(dec.Decode(row.data(), row.size(), empty_list) == bd::StatusCode::kRangeError);
  CHECK(masked_error == dec.error());
}
