// The history stages (logit bias, penalties, DRY, no repeat n-gram): hand-
// worked cases, the worked examples of llama.cpp's tests/test-sampling.cpp
// and of Hugging Face's docstrings, boundaries, and random rows and histories
// against the float64 references in tests/reference/history_reference.h, on
// the full row and on truncated lists (sorted and unsorted).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "candidates.h"
#include "decoder.h"
#include "kernels/blocks.h"
#include "kernels/row_scan.h"
#include "kernels/threshold.h"
#include "reference/history_reference.h"
#include "stages/dry.h"
#include "stages/logit_bias.h"
#include "stages/no_repeat_ngram.h"
#include "stages/penalties.h"
#include "workspace.h"

namespace {

namespace hr = ref::history;
constexpr float kInf = std::numeric_limits<float>::infinity();

// The candidate states a history stage can meet: the untouched full row, the
// sorted top `keep` (as after top-k), or an unsorted list of the logits at
// or above the keep-th largest (as after min-p).
enum class State { kRow, kSortedList, kList };

// A candidate set over a copy of `logits`, filled as the decoder's RunChain
// fills one, then put in `state`.
struct Cands {
  bd::Workspace ws;
  bd::Candidates c;

  explicit Cands(const std::vector<float>& logits, State state = State::kRow,
                 size_t keep = SIZE_MAX) {
    const size_t v = logits.size();
    ws.Reserve(v);
    // Stale scratch, as earlier stages leave it: a stage may trust only what
    // it writes itself.
    // Mostly small values, which look like valid counts, positions, marks
    // and lengths; some huge or negative.
    std::mt19937 dirt(static_cast<unsigned>(v));
    auto junk = [&dirt]() {
      const uint32_t r = dirt();
      return r % 4 == 0 ? static_cast<int32_t>(r) : static_cast<int32_t>(r % 8);
    };
    for (int32_t& x : ws.stage_i32) x = junk();
    for (float& x : ws.stage_f32) x = static_cast<float>(junk());
    for (double& x : ws.stage_f64) x = static_cast<double>(junk());
    std::memcpy(ws.row.data(), logits.data(), v * sizeof(float));
    c.row = ws.row.data();
    c.vocab = v;
    c.row_max = bd::ScanRow(c.row, v).max;
    c.row_finite = bd::CountAtLeast(c.row, v, -FLT_MAX);
    c.ids = ws.ids.data();
    c.logits = ws.logits.data();
    const size_t k = std::min(keep, c.Count());
    if (state == State::kSortedList) {
      bd::EnsureSorted(c, k, ws);
      bd::TruncateToSorted(c, k);
    } else if (state == State::kList) {
      std::vector<float> finite;
      for (float x : logits)
        if (x != -kInf) finite.push_back(x);
      std::sort(finite.begin(), finite.end(), std::greater<float>());
      bd::KeepAtLeast(c, k == 0 ? kInf : k < finite.size() ? finite[k - 1] : -FLT_MAX, ws);
    }
  }
  Cands(const Cands&) = delete;
  Cands& operator=(const Cands&) = delete;

  // id -> logit of every candidate.
  std::map<int32_t, float> Map() const {
    std::map<int32_t, float> m;
    if (!c.truncated) {
      for (size_t i = 0; i < c.vocab; ++i)
        if (c.row[i] != -kInf) m[static_cast<int32_t>(i)] = c.row[i];
    } else {
      for (size_t i = 0; i < c.size; ++i) m[c.ids[i]] = c.logits[i];
    }
    return m;
  }
  // Logit of a candidate, -inf otherwise.
  float At(int32_t id) const { return bd::GetLogit(c, id); }
};

bd::StageContext Ctx(const std::vector<int32_t>& history) {
  bd::StageContext ctx;
  ctx.history = history.data();
  ctx.history_len = history.size();
  return ctx;
}

// The set's invariants after a stage: row statistics current (row), or a list
// with distinct ids, no -inf, and a sorted prefix in the canonical order.
void CheckInvariants(const bd::Candidates& c) {
  if (!c.truncated) {
    REQUIRE_FALSE(c.row_edited);
    size_t finite = 0;
    float max = -kInf;
    for (size_t i = 0; i < c.vocab; ++i) {
      if (c.row[i] == -kInf) continue;
      ++finite;
      max = std::max(max, c.row[i]);
    }
    CHECK(c.row_finite == finite);
    if (finite > 0) CHECK(c.row_max == max);
    for (size_t i = 0; i < c.size; ++i) CHECK(c.row[c.ids[i]] == c.logits[i]);
    return;
  }
  std::set<int32_t> seen;
  size_t bad = 0;
  for (size_t i = 0; i < c.size; ++i) {
    bad += !seen.insert(c.ids[i]).second || !(c.logits[i] > -kInf);
    if (i > 0 && i < c.sorted) {
      const bool ordered = c.logits[i - 1] > c.logits[i] ||
                           (c.logits[i - 1] == c.logits[i] && c.ids[i - 1] < c.ids[i]);
      bad += !ordered;
    }
  }
  CHECK(c.sorted <= c.size);
  CHECK(bad == 0);
  CHECK_FALSE(c.probs_valid);
}

// Every candidate from `before` against the reference: removed exactly when
// the reference says -inf, else within 8 float epsilons of the magnitude of
// the terms combined (the stage rounds each float op once; the reference is
// exact to double precision), and untouched tokens bit-identical.
void CheckAgainst(const Cands& got, const std::map<int32_t, float>& before,
                  const hr::Edited& want) {
  CheckInvariants(got.c);
  const std::map<int32_t, float> now = got.Map();
  size_t bad = 0;
  int32_t first_bad = -1;
  for (const auto& [id, l0] : before) {
    const double w = want.logit[id];
    const auto it = now.find(id);
    bool ok;
    if (w == -kInf) {
      ok = it == now.end();
    } else if (it == now.end()) {
      ok = false;
    } else if (want.scale[id] == 0.0) {
      ok = it->second == l0;
    } else {
      ok = std::fabs(it->second - w) <= 8.0 * FLT_EPSILON * want.scale[id];
    }
    if (!ok && bad++ == 0) first_bad = id;
  }
  for (const auto& [id, l] : now) bad += before.count(id) == 0;  // nothing added
  INFO("first mismatch at id " << first_bad << ": reference "
       << (first_bad >= 0 ? want.logit[first_bad] : 0.0) << ", got "
       << (first_bad >= 0 && now.count(first_bad) ? now.at(first_bad) : -kInf));
  CHECK(bad == 0);
  CHECK(got.c.Count() == now.size());
}

// Probabilities by id after the stage (0 for removed tokens): what
// llama.cpp's tests read after `dist`.
std::vector<double> ProbsById(const Cands& x) {
  std::vector<double> p(x.c.vocab, 0.0);
  const std::map<int32_t, float> m = x.Map();
  double max = -kInf, z = 0.0;
  for (const auto& [id, l] : m) max = std::max(max, static_cast<double>(l));
  for (const auto& [id, l] : m) z += p[id] = std::exp(l - max);
  for (double& q : p) q /= z;
  return p;
}

std::vector<float> LogsOf(const std::vector<float>& probs) {
  std::vector<float> l;
  for (float p : probs) l.push_back(std::log(p));
  return l;
}

void CheckProbs(const Cands& x, const std::vector<float>& expected) {
  const std::vector<double> p = ProbsById(x);
  REQUIRE(p.size() == expected.size());
  for (size_t i = 0; i < p.size(); ++i) {
    INFO("token " << i);
    CHECK(std::fabs(p[i] - expected[i]) < 1e-5);  // llama.cpp's tolerance
  }
}

// ---- stage runners over vectors ---------------------------------------------

struct Bias {
  std::vector<int32_t> ids;
  std::vector<float> bias;
  std::vector<int32_t> banned, allowed;
  bool restrict_to_allowed = false;
  std::vector<uint32_t> mask;  // allowed_mask's words; empty: none
  bd::LogitBiasParams Params() const {
    bd::LogitBiasParams p;
    p.ids = ids.data();
    p.bias = bias.data();
    p.n = ids.size();
    p.banned = banned.data();
    p.n_banned = banned.size();
    p.allowed = allowed.data();
    p.n_allowed = allowed.size();
    p.restrict_to_allowed = restrict_to_allowed;
    p.mask = mask.data();
    p.mask_words = mask.size();
    return p;
  }
};

void RunBias(Cands& x, const Bias& b) {
  bd::ApplyLogitBias(x.c, b.Params(), x.ws, Ctx({}));
}

void RunPenalties(Cands& x, const std::vector<int32_t>& h, float rep, float freq, float pres,
                  int32_t last_n) {
  bd::PenaltyParams p;
  p.repetition = rep;
  p.frequency = freq;
  p.presence = pres;
  p.last_n = last_n;
  bd::ApplyPenalties(x.c, p, x.ws, Ctx(h));
}

void RunDry(Cands& x, const std::vector<int32_t>& h, float mult, float base, int32_t allowed,
            int32_t last_n, const std::vector<int32_t>& breakers = {}) {
  bd::DryParams p;
  p.multiplier = mult;
  p.base = base;
  p.allowed_length = allowed;
  p.last_n = last_n;
  p.breakers = breakers.data();
  p.n_breakers = breakers.size();
  bd::ApplyDry(x.c, p, x.ws, Ctx(h));
}

void RunNgram(Cands& x, const std::vector<int32_t>& h, int32_t size) {
  bd::NoRepeatNgramParams p;
  p.size = size;
  bd::ApplyNoRepeatNgram(x.c, p, x.ws, Ctx(h));
}

constexpr State kAllStates[] = {State::kRow, State::kSortedList, State::kList};

// ---- random rows and histories ---------------------------------------------

std::vector<float> RandomRow(size_t v, std::mt19937_64& rng) {
  std::normal_distribution<float> g(0.0f, 2.0f);
  std::vector<float> row(v);
  for (float& x : row) {
    const unsigned r = rng() % 100;
    x = r < 4 ? -kInf : r < 8 ? 0.0f : g(rng);  // bans and exact zeros
  }
  if (v > 4) row[rng() % v] = row[rng() % v];  // a tie
  row[rng() % v] = 1.0f;                       // at least one candidate
  return row;
}

// Histories over a small alphabet (so repeats are common), with a few tokens
// from the whole vocabulary and a few out of range.
std::vector<int32_t> RandomHistory(size_t v, size_t len, std::mt19937_64& rng) {
  const size_t alphabet = 1 + rng() % std::min<size_t>(v, 6);
  std::vector<int32_t> h(len);
  for (int32_t& t : h) {
    const unsigned r = rng() % 100;
    t = r < 2    ? static_cast<int32_t>(v + rng() % 3)
        : r < 3  ? -1
        : r < 10 ? static_cast<int32_t>(rng() % v)
                 : static_cast<int32_t>(rng() % alphabet);
  }
  // Sometimes end with a copy of an earlier stretch (a long repeat).
  if (len > 20 && rng() % 2) {
    const size_t span = 1 + rng() % (len / 3);
    const size_t from = rng() % (len - span);
    std::copy(h.begin() + from, h.begin() + from + span, h.end() - span);
  }
  return h;
}

// Runs `apply` on the row and on both list states; checks each against the
// reference, and the lists bit-identical to the row result on their ids.
template <typename Apply>
void CheckAllStates(const std::vector<float>& row, const hr::Edited& want, std::mt19937_64& rng,
                    Apply apply) {
  Cands full(row);
  const auto before_full = full.Map();
  apply(full);
  CheckAgainst(full, before_full, want);
  const auto after_full = full.Map();
  const size_t keep = 1 + rng() % row.size();
  for (State s : {State::kSortedList, State::kList}) {
    Cands list(row, s, keep);
    const auto before = list.Map();
    apply(list);
    CheckAgainst(list, before, want);
    size_t differ = 0;
    for (const auto& [id, l] : before) {
      const auto it = after_full.find(id);
      const float expect = it == after_full.end() ? -kInf : it->second;
      differ += list.At(id) != expect;
    }
    CHECK(differ == 0);
  }
}

constexpr size_t kVocabs[] = {1, 2, 3, 5, 17, 64, 300, 1000, 5000};
constexpr size_t kLengths[] = {0, 1, 2, 3, 8, 40, 150, 400};


}  // namespace

// ---- logit bias -------------------------------------------------------------

TEST_CASE("logit bias: hand-worked bias, bans and allowed set on every state") {
  const std::vector<float> row = {1.0f, 2.0f, 3.0f, 4.0f};
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    Bias b;
    // id 2 twice (accumulates), 9 and -1 out of range (ignored).
    b.ids = {0, 2, 2, 9, -1};
    b.bias = {0.5f, 1.0f, 0.25f, 5.0f, 5.0f};
    {
      Cands x(row, s);
      RunBias(x, b);
      CheckInvariants(x.c);
      CHECK(x.At(0) == 1.5f);
      CHECK(x.At(1) == 2.0f);
      CHECK(x.At(2) == 4.25f);
      CHECK(x.At(3) == 4.0f);
      CHECK(x.c.Count() == 4);
    }
    b.banned = {1, 7};
    {
      Cands x(row, s);
      RunBias(x, b);
      CheckInvariants(x.c);
      CHECK(x.At(1) == -kInf);
      CHECK(x.c.Count() == 3);
      if (!x.c.truncated) CHECK(x.c.row_max == 4.25f);
    }
    b.allowed = {0, 3, 1};  // 1 is allowed but banned: bans win
    {
      Cands x(row, s);
      RunBias(x, b);  // restrict_to_allowed is false: the allowed list is ignored
      CHECK(x.c.Count() == 3);
    }
    b.restrict_to_allowed = true;
    {
      Cands x(row, s);
      RunBias(x, b);
      CheckInvariants(x.c);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 1.5f}, {3, 4.0f}});
      if (!x.c.truncated) CHECK(x.c.row_max == 4.0f);
    }
  }
}

TEST_CASE("logit bias: edits and the allowed pass drop the row's sorted-prefix cache") {
  const std::vector<float> row = {1.0f, 2.0f, 3.0f, 4.0f, 0.5f};
  Cands x(row);
  bd::EnsureSorted(x.c, 5, x.ws);
  REQUIRE(x.c.size == 5);
  Bias b;
  b.ids = {0};
  b.bias = {10.0f};
  b.allowed = {0, 1, 4};
  b.restrict_to_allowed = true;
  RunBias(x, b);
  CheckInvariants(x.c);
  CHECK(x.c.row_finite == 3);
  CHECK(x.c.row_max == 11.0f);
  bd::EnsureSorted(x.c, 3, x.ws);
  CHECK(std::vector<int32_t>(x.c.ids, x.c.ids + 3) == std::vector<int32_t>{0, 1, 4});
}

TEST_CASE("logit bias: -inf removes, NaN and +inf are ignored, overflow saturates") {
  const std::vector<float> row = {1.0f, 2.0f, 3.0e38f, 4.0f};
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    Bias b;
    b.ids = {0, 0, 1, 3, 2};
    b.bias = {-kInf, 5.0f, std::nanf(""), kInf, 3.0e38f};
    Cands x(row, s);
    RunBias(x, b);
    CheckInvariants(x.c);
    CHECK(x.At(0) == -kInf);  // the later +5 does not bring it back
    CHECK(x.At(1) == 2.0f);
    CHECK(x.At(2) == FLT_MAX);
    CHECK(x.At(3) == 4.0f);
    CHECK(x.c.Count() == 3);
  }
}

TEST_CASE("logit bias: banning or disallowing every token leaves no candidate") {
  const std::vector<float> row = {0.1f, -3.0f, 2.0f, -kInf, 0.0f};
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    {
      Bias b;
      b.banned = {0, 1, 2, 3, 4};
      Cands x(row, s);
      RunBias(x, b);
      CheckInvariants(x.c);
      CHECK(x.c.Count() == 0);
    }
    {
      Bias b;
      b.restrict_to_allowed = true;  // an empty allowed set
      Cands x(row, s);
      RunBias(x, b);
      CheckInvariants(x.c);
      CHECK(x.c.Count() == 0);
    }
    {
      Bias b;  // nothing to do: untouched
      Cands x(row, s);
      const auto before = x.Map();
      RunBias(x, b);
      CHECK(x.Map() == before);
    }
  }
}

// ---- penalties --------------------------------------------------------------

TEST_CASE("penalties: hand-worked logits {3, -2, 0.5}, history {0, 1, 1}") {
  const std::vector<float> row = {3.0f, -2.0f, 0.5f};
  const std::vector<int32_t> h = {0, 1, 1};
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    {
      // 0: count 1, 3 > 0: 3 / 2 = 1.5, - (1 * 0.5 + 0.25) = 0.75
      // 1: count 2, -2 <= 0: -2 * 2 = -4, - (2 * 0.5 + 0.25) = -5.25
      // 2: not in the history: 0.5
      Cands x(row, s);
      RunPenalties(x, h, 2.0f, 0.5f, 0.25f, 64);
      CheckInvariants(x.c);
      CHECK(x.At(0) == 0.75f);
      CHECK(x.At(1) == -5.25f);
      CHECK(x.At(2) == 0.5f);
    }
    {
      Cands x(row, s);  // last_n = -1: the whole history, same result
      RunPenalties(x, h, 2.0f, 0.5f, 0.25f, -1);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 0.75f}, {1, -5.25f}, {2, 0.5f}});
    }
    {
      Cands x(row, s);  // last_n = 1: window {1}, count 1: -4 - 0.75
      RunPenalties(x, h, 2.0f, 0.5f, 0.25f, 1);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 3.0f}, {1, -4.75f}, {2, 0.5f}});
    }
    {
      Cands x(row, s);  // last_n = 2: window {1, 1}
      RunPenalties(x, h, 2.0f, 0.5f, 0.25f, 2);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 3.0f}, {1, -5.25f}, {2, 0.5f}});
    }
    {
      Cands x(row, s);  // last_n = 0: off
      RunPenalties(x, h, 2.0f, 0.5f, 0.25f, 0);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 3.0f}, {1, -2.0f}, {2, 0.5f}});
    }
    {
      Cands x(row, s);  // empty history
      RunPenalties(x, {}, 2.0f, 0.5f, 0.25f, -1);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 3.0f}, {1, -2.0f}, {2, 0.5f}});
    }
    {
      Cands x(row, s);  // all neutral: off even with a history
      RunPenalties(x, h, 1.0f, 0.0f, 0.0f, -1);
      CHECK(x.Map() == std::map<int32_t, float>{{0, 3.0f}, {1, -2.0f}, {2, 0.5f}});
    }
  }
}

TEST_CASE("penalties: a zero logit stays 0 under the repetition penalty; edits refresh the order") {
  const std::vector<float> row = {0.0f, 1.0f, -1.0f, 0.75f};
  Cands x(row);
  bd::EnsureSorted(x.c, 4, x.ws);  // a sorted-prefix cache the edits must drop
  REQUIRE(x.c.ids[0] == 1);
  RunPenalties(x, {0, 1, 5, 99}, 3.0f, 0.0f, 0.5f, -1);  // 5, 99: not candidates / out of range
  CheckInvariants(x.c);
  CHECK(x.At(0) == -0.5f);  // 0 * 3 - 0.5
  CHECK(x.At(1) == 1.0f / 3.0f - 0.5f);
  bd::EnsureSorted(x.c, 4, x.ws);
  CHECK(std::vector<int32_t>(x.c.ids, x.c.ids + 4) == std::vector<int32_t>{3, 1, 0, 2});
}

TEST_CASE("penalties: llama.cpp test-sampling.cpp test_penalties cases") {
  // tests/test-sampling.cpp (ggml-org/llama.cpp), test_penalties: five tokens
  // of probability 0.2 (logit log 0.2), the history accepted into the
  // sampler (last_n = its length), probabilities after `dist`, tol 1e-5.
  const std::vector<float> row = LogsOf({0.2f, 0.2f, 0.2f, 0.2f, 0.2f});
  struct Case {
    std::vector<int32_t> history;
    std::vector<float> expected;
    float rep, freq, pres;
  };
  const Case cases[] = {
      {{0}, {0, 0.25f, 0.25f, 0.25f, 0.25f}, 50.0f, 0.0f, 0.0f},
      {{0, 1, 2}, {0, 0, 0, 0.5f, 0.5f}, 50.0f, 0.0f, 0.0f},
      {{0, 1, 2, 0, 0}, {0, 0, 0, 0.5f, 0.5f}, 50.0f, 0.0f, 0.0f},
      {{0}, {0.000011f, 0.249997f, 0.249997f, 0.249997f, 0.249997f}, 1.0f, 5.0f, 5.0f},
      {{0, 1, 2}, {0.000023f, 0.000023f, 0.000023f, 0.499966f, 0.499966f}, 1.0f, 5.0f, 5.0f},
      {{0, 1, 2, 0, 0}, {0.000000f, 0.000023f, 0.000023f, 0.499977f, 0.499977f}, 1.0f, 5.0f, 5.0f},
  };
  for (const Case& k : cases) {
    for (State s : kAllStates) {
      Cands x(row, s);
      RunPenalties(x, k.history, k.rep, k.freq, k.pres, static_cast<int32_t>(k.history.size()));
      CheckProbs(x, k.expected);
    }
  }
}

// Guards against this: the repetition step's float overflow met an infinite
// frequency term of the same sign (inf - inf), and the NaN logit reached
// decode() (probabilities NaN) or was dropped as if banned.
TEST_CASE("penalties: a repetition overflow met by an infinite frequency term is no NaN") {
  // 3e38 / 0.5 overflows to +inf in float and 2 * 3e38 too: inf - inf. In
  // exact arithmetic (the float64 twin) the edited logit is 6e38 - 6e38 = 0.
  const std::vector<float> row = {3e38f, 3e38f, 0.0f};
  const std::vector<int32_t> history = {0, 0, 1, 1};
  bd::DecodeOptions o;
  o.history = history.data();
  o.history_len = history.size();
  o.penalties.repetition = 0.5f;
  o.penalties.frequency = 3e38f;
  o.penalties.last_n = -1;
  bd::Decoder d;
  // No NaN, and the probabilities sum to 1.
  const auto expect_distribution = [](bd::Decoder& dec) {
    double sum = 0.0;
    for (size_t i = 0; i < dec.k(); ++i) {
      CHECK(std::isfinite(dec.probs()[i]));
      sum += dec.probs()[i];
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  };
  // Top-k 2 first: the penalties then edit an explicit list.
  const auto top_k_first = [](bd::DecodeOptions& opts) {
    opts.order[0] = bd::StageId::kTopK;
    opts.order[1] = bd::StageId::kPenalties;
    opts.order_len = 2;
    opts.top_k = 2;
  };
  SUBCASE("on the row") {
    REQUIRE(d.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    expect_distribution(d);
    CHECK(d.k() == 3);  // tokens 0 and 1 edited to logit 0, as token 2
  }
  SUBCASE("on a list (top-k first)") {
    top_k_first(o);
    REQUIRE(d.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    expect_distribution(d);
    CHECK(d.k() == 2);
  }
  SUBCASE("the negative side: -3e38 * 2 - 2 * (-3e38)") {
    const std::vector<float> neg = {-3e38f, -3e38f, -3e38f};
    o.penalties.repetition = 2.0f;
    o.penalties.frequency = -3e38f;
    top_k_first(o);
    REQUIRE(d.Decode(neg.data(), neg.size(), o) == bd::StatusCode::kOk);
    expect_distribution(d);
  }
}

// Against llama.cpp's samplers: a history stage placed
// after the temperature subtracted or added its amount to untempered logits,
// so it weighed amount / T. llama.cpp's temperature sampler divides the
// logits, and a penalties, DRY or logit_bias sampler after it works in those
// units. Logits {2, 1}, T = 0.5: llama.cpp's answers, by hand.
TEST_CASE("history stages after the temperature edit the tempered logits, as llama.cpp's samplers") {
  const std::vector<float> row = {2.0f, 1.0f};
  const auto decode = [&](bd::DecodeOptions o, std::initializer_list<bd::StageId> order,
                          bool list) {
    size_t n = 0;
    if (list) o.order[n++] = bd::StageId::kTopK;  // the same on an explicit list
    for (bd::StageId id : order) o.order[n++] = id;
    o.order_len = n;
    o.top_k = list ? 2 : 0;
    o.temperature = 0.5f;
    bd::Decoder d;
    REQUIRE(d.Decode(row.data(), row.size(), o) == bd::StatusCode::kOk);
    std::map<int32_t, double> probs;
    for (size_t i = 0; i < d.k(); ++i) probs[d.ids()[i]] = d.probs()[i];
    return probs;
  };
  const std::vector<int32_t> seen_0 = {0};
  const std::vector<int32_t> dry_history = {1, 0, 1, 0, 1};
  const int32_t bias_id[] = {1};
  const float bias[] = {1.0f};
  for (bool list : {false, true}) {
    CAPTURE(list);
    bd::DecodeOptions o;
    o.history = seen_0.data();
    o.history_len = seen_0.size();
    o.penalties.frequency = 1.0f;
    // l / T = {4, 2}, minus 1 for token 0: {3, 2}.
    auto p = decode(o, {bd::StageId::kTemperature, bd::StageId::kPenalties}, list);
    CHECK(p[0] == doctest::Approx(0.7310586));
    CHECK(p[1] == doctest::Approx(0.2689414));
    // Before the temperature (the default order): {1, 1} / T, even.
    p = decode(o, {bd::StageId::kPenalties, bd::StageId::kTemperature}, list);
    CHECK(p[0] == doctest::Approx(0.5));
    // With min-p 0.5 after: e^{2 - 3} < 0.5 drops token 1.
    o.min_p = 0.5f;
    p = decode(o, {bd::StageId::kTemperature, bd::StageId::kPenalties, bd::StageId::kMinP}, list);
    CHECK(p.size() == 1);
    CHECK(p.count(0) == 1);
    o.min_p = 0.0f;
    o.penalties.frequency = 0.0f;
    o.penalties.presence = 1.0f;
    p = decode(o, {bd::StageId::kTemperature, bd::StageId::kPenalties}, list);
    CHECK(p[0] == doctest::Approx(0.7310586));
    // logit_bias +1 on token 1: {4, 3}.
    bd::DecodeOptions b;
    b.logit_bias.ids = bias_id;
    b.logit_bias.bias = bias;
    b.logit_bias.n = 1;
    p = decode(b, {bd::StageId::kTemperature, bd::StageId::kLogitBias}, list);
    CHECK(p[0] == doctest::Approx(0.7310586));
    // DRY: history 1 0 1 0 1, token 0 would extend the repeat "1 0 1" (3,
    // allowed 2): penalty 1 * 1.75^1 off l / T = 4: {2.25, 2}.
    bd::DecodeOptions r;
    r.history = dry_history.data();
    r.history_len = dry_history.size();
    r.dry.multiplier = 1.0f;
    p = decode(r, {bd::StageId::kTemperature, bd::StageId::kDry}, list);
    CHECK(p[0] == doctest::Approx(1.0 / (1.0 + std::exp(2.0 - 2.25))));
  }
}

// ---- DRY --------------------------------------------------------------------

TEST_CASE("dry: llama.cpp test-sampling.cpp test_dry cases") {
  // tests/test-sampling.cpp (ggml-org/llama.cpp), test_dry: equal
  // probabilities, the history accepted into the sampler, probabilities after
  // `dist`, tol 1e-5. Breaker {{3}} is the single token 3.
  struct Case {
    std::vector<float> probs;
    std::vector<int32_t> history;
    std::vector<float> expected;
    float mult, base;
    int32_t allowed, last_n;
    std::vector<int32_t> breakers;
  };
  const std::vector<float> q4 = {0.25f, 0.25f, 0.25f, 0.25f};
  const std::vector<float> q5 = {0.2f, 0.2f, 0.2f, 0.2f, 0.2f};
  const Case cases[] = {
      {q4, {0, 1}, q4, 1.0f, 1.1f, 2, 4, {}},
      {q4, {0, 1, 2, 0, 1}, {0.296923f, 0.296923f, 0.109232f, 0.296923f}, 1.0f, 1.1f, 2, 5, {}},
      {q5, {0, 1, 3, 4, 0, 1}, q5, 1.0f, 1.1f, 2, 6, {3}},
      {q5, {0, 1, 2, 0, 1}, {0.241818f, 0.241818f, 0.032727f, 0.241818f, 0.241818f}, 2.0f, 1.1f, 2, 5, {}},
      {q5, {0, 1, 2, 3, 4, 0, 1}, q5, 1.0f, 1.1f, 4, 7, {}},
  };
  for (const Case& k : cases) {
    for (State s : kAllStates) {
      Cands x(LogsOf(k.probs), s);
      RunDry(x, k.history, k.mult, k.base, k.allowed, k.last_n, k.breakers);
      CheckInvariants(x.c);
      CheckProbs(x, k.expected);
    }
  }
}

TEST_CASE("dry: llama.cpp's worked example a b c c b c y a b c") {
  // llama_sampler_dry_apply's comment: repeat counts 0 0 3 1 0 2 0 0 0 0, so
  // emitting c extends a repeat of 3, y one of 2, b one of 1. With
  // multiplier 1, base 2, allowed 1: c -= 2^2, y -= 2^1, b -= 2^0; a is free.
  enum : int32_t { a, b, c, y };
  const std::vector<int32_t> h = {a, b, c, c, b, c, y, a, b, c};
  for (State s : kAllStates) {
    Cands x(std::vector<float>(4, 0.0f), s);
    RunDry(x, h, 1.0f, 2.0f, 1, -1);
    CheckInvariants(x.c);
    CHECK(x.Map() == std::map<int32_t, float>{{a, 0.0f}, {b, -1.0f}, {c, -4.0f}, {y, -2.0f}});
  }
}

TEST_CASE("dry: breakers end matches and are never penalised") {
  // a b c d a b c: emitting d would extend "a b c" (3 tokens).
  enum : int32_t { a, b, c, d };
  const std::vector<int32_t> h = {a, b, c, d, a, b, c};
  const std::vector<float> zeros(5, 0.0f);
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    {
      Cands x(zeros, s);  // no breakers: d -= 2^(3-1)
      RunDry(x, h, 1.0f, 2.0f, 1, -1);
      CHECK(x.At(d) == -4.0f);
      CHECK(x.At(a) == 0.0f);
    }
    {
      Cands x(zeros, s);  // breaker b: only "c" follows the last b: d -= 2^0
      RunDry(x, h, 1.0f, 2.0f, 1, -1, {b});
      CHECK(x.At(d) == -1.0f);
    }
    {
      Cands x(zeros, s);  // breaker b with allowed 2: the match is too short
      RunDry(x, h, 1.0f, 2.0f, 2, -1, {b});
      CHECK(x.Map().size() == 5);
      CHECK(x.At(d) == 0.0f);
    }
    {
      Cands x(zeros, s);  // breaker d: d itself is never penalised
      RunDry(x, h, 1.0f, 2.0f, 1, -1, {d});
      CHECK(x.At(d) == 0.0f);
    }
    {
      Cands x(zeros, s);  // the last token is a breaker: nothing at all
      RunDry(x, {a, b, a, b}, 1.0f, 2.0f, 1, -1, {b});
      CHECK(x.At(a) == 0.0f);
    }
  }
}

TEST_CASE("dry: allowed_length, last_n and parameter boundaries") {
  const std::vector<int32_t> h = {0, 1, 2, 0, 1};  // emitting 2 extends "0 1"
  const std::vector<float> row(4, 1.0f);
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    auto token2 = [&](float mult, float base, int32_t allowed, int32_t last_n) {
      Cands x(row, s);
      RunDry(x, h, mult, base, allowed, last_n);
      CheckInvariants(x.c);
      return x.At(2);
    };
    CHECK(token2(1.0f, 1.75f, 2, -1) == 0.0f);   // L = 2 = allowed: 1 - 1.75^0
    CHECK(token2(1.0f, 1.75f, 1, -1) == 1.0f - 1.75f);  // L = 2, allowed 1
    CHECK(token2(1.0f, 1.75f, 3, -1) == 1.0f);   // L = 2 < 3: free
    CHECK(token2(1.0f, 1.75f, 2, 5) == 0.0f);    // window = history
    CHECK(token2(1.0f, 1.75f, 2, 500) == 0.0f);  // window longer than history
    CHECK(token2(1.0f, 1.75f, 2, 3) == 1.0f);    // window 2 0 1: no earlier "0 1"
    CHECK(token2(1.0f, 1.75f, 2, 2) == 1.0f);    // window length <= allowed
    CHECK(token2(1.0f, 1.75f, 2, 0) == 1.0f);    // last_n = 0: off
    CHECK(token2(0.0f, 1.75f, 2, -1) == 1.0f);   // multiplier 0: off
    CHECK(token2(1.0f, 0.99f, 2, -1) == 1.0f);   // base < 1: off
    CHECK(token2(3.0f, 1.0f, 1, -1) == -2.0f);   // base 1: a flat multiplier
  }
  // Empty history and a single token: nothing to match.
  for (const std::vector<int32_t>& hist : {std::vector<int32_t>{}, std::vector<int32_t>{2}}) {
    Cands x(row);
    RunDry(x, hist, 1.0f, 1.75f, 1, -1);
    CHECK(x.Map().size() == 4);
    CHECK(x.At(2) == 1.0f);
  }
}

TEST_CASE("dry: llama.cpp's exponent clamp against float overflow") {
  // base 1e10: max_exponent = (int)(88.7228391f / logf(1e10f)) = 3. A repeat
  // of 6 with allowed 1 would be 1e10^5 = 1e50; it is clamped to 1e10^3.
  const std::vector<int32_t> h = {7, 7, 7, 7, 7, 7, 7};  // emitting 7 extends 6
  for (State s : kAllStates) {
    Cands x(std::vector<float>(8, 0.0f), s);
    RunDry(x, h, 1.0f, 1e10f, 1, -1);
    CheckInvariants(x.c);
    CHECK(x.At(7) == static_cast<float>(-std::pow(static_cast<double>(1e10f), 3.0)));
    CHECK(x.c.Count() == 8);
  }
}

TEST_CASE("dry: a history much longer than the vocabulary (bounded Z storage and direct scan)") {
  // V = 3 gives 67 scratch ints; a run of 500 equal tokens has matches of
  // every length. Lengths matter up to allowed + max_exponent: 2 + 158 = 160
  // for base 1.75 (more than the scratch: the direct scan), 2 + 3 for base
  // 1e10 and 2 for base 1 (the bounded Z-algorithm).
  std::vector<int32_t> h(500, 1);
  const std::vector<float> row = {0.0f, 0.0f, 0.0f};
  for (float base : {1.75f, 1e10f, 1.0f}) {
    Cands x(row);
    RunDry(x, h, 0.5f, base, 2, -1);
    const hr::Edited want = hr::Dry(row, h, {0.5, base, 2, -1, {}});
    CheckAgainst(x, {{0, 0.0f}, {1, 0.0f}, {2, 0.0f}}, want);
  }
}

TEST_CASE("dry: small match bounds (large clamped bases) on short-alphabet histories") {
  // base 1e20 clamps the exponent at 1 and 1e10 at 3, so only lengths up to
  // allowed + 1 (or + 3) matter and the Z-algorithm keeps as few values:
  // its Z-box often spans the whole bound, exercising the last stored value.
  std::mt19937_64 rng(505);
  const std::vector<float> row = {0.5f, -1.0f, 2.0f, 0.0f};
  for (int rep = 0; rep < 400; ++rep) {
    const size_t len = 2 + rng() % 120;
    const size_t alphabet = 2 + rng() % 2;
    std::vector<int32_t> h(len);
    for (int32_t& t : h) t = static_cast<int32_t>(rng() % alphabet);
    hr::DryOptions o;
    o.multiplier = 1.0;
    o.base = rep % 3 == 0 ? 1e20f : rep % 3 == 1 ? 1e10f : 1.0f;
    o.allowed_length = static_cast<int>(rng() % 3);
    if (rng() % 4 == 0) o.breakers.push_back(static_cast<int32_t>(rng() % alphabet));
    CAPTURE(rep);
    const hr::Edited want = hr::Dry(row, h, o);
    CheckAllStates(row, want, rng, [&](Cands& x) {
      RunDry(x, h, 1.0f, static_cast<float>(o.base), o.allowed_length, -1, o.breakers);
    });
  }
}

// ---- no repeat n-gram -------------------------------------------------------

TEST_CASE("no repeat ngram: Hugging Face's _get_ngrams docstring example") {
  // transformers generation/logits_process.py, _get_ngrams: for ngram_size 2
  // and prev_input_ids [40, 2883, 2712, 4346] the n-grams are
  // {(40,): [2883], (2883,): [2712], (2712,): [4346]}. Nothing starts with
  // 4346, so nothing is banned; after one more 40, 2883 is.
  const std::vector<float> row(5000, 0.0f);
  for (State s : {State::kRow, State::kList}) {
    {
      Cands x(row, s);
      RunNgram(x, {40, 2883, 2712, 4346}, 2);
      CHECK(x.c.Count() == 5000);
    }
    {
      Cands x(row, s);
      RunNgram(x, {40, 2883, 2712, 4346, 40}, 2);
      CheckInvariants(x.c);
      CHECK(x.c.Count() == 4999);
      CHECK(x.At(2883) == -kInf);
    }
    {
      Cands x(row, s);  // trigram: (40, 2883) was followed by 2712
      RunNgram(x, {40, 2883, 2712, 4346, 40, 2883}, 3);
      CHECK(x.c.Count() == 4999);
      CHECK(x.At(2712) == -kInf);
    }
  }
}

TEST_CASE("no repeat ngram: boundaries") {
  const std::vector<float> row = {0.5f, 1.0f, -1.0f, 2.0f};
  for (State s : kAllStates) {
    CAPTURE(static_cast<int>(s));
    auto banned = [&](const std::vector<int32_t>& h, int32_t n) {
      Cands x(row, s);
      const auto before = x.Map();
      RunNgram(x, h, n);
      CheckInvariants(x.c);
      std::vector<int32_t> out;
      for (const auto& [id, l] : before)
        if (x.At(id) == -kInf) out.push_back(id);
      return out;
    };
    using V = std::vector<int32_t>;
    CHECK(banned({1, 2}, 4).empty());          // L + 1 < n
    CHECK(banned({1, 2}, 3).empty());          // L + 1 == n: no complete 3-gram
    CHECK(banned({1, 2, 1}, 3).empty());       // (2, 1) never seen before
    CHECK(banned({1, 2, 0, 1, 2}, 3) == V{0});  // (1, 2) -> 0
    CHECK(banned({1, 2, 0, 1, 2, 3, 1, 2}, 3) == V{0, 3});
    CHECK(banned({3, 1, 3}, 1) == V{1, 3});    // n = 1: every history token
    CHECK(banned({}, 1).empty());
    CHECK(banned({}, 2).empty());
    CHECK(banned({2, 2, 2}, 2) == V{2});
    CHECK(banned({1, 2, 1, 2}, 0).empty());    // 0: off
    CHECK(banned({9, 1, 9}, 2) == V{1});       // 9: out of range, still matched
    // Banning every token: no candidate left.
    CHECK(banned({0, 1, 2, 3}, 1) == V{0, 1, 2, 3});
    Cands x(row, s);
    RunNgram(x, {0, 1, 2, 3}, 1);
    CHECK(x.c.Count() == 0);
  }
}

// ---- random rows and histories against the references -------------------------

TEST_CASE("logit bias: random rows and lists against the reference") {
  std::mt19937_64 rng(101);
  for (size_t v : kVocabs) {
    for (int rep = 0; rep < 10; ++rep) {
      const std::vector<float> row = RandomRow(v, rng);
      Bias b;
      std::normal_distribution<float> g(0.0f, 3.0f);
      const size_t n = rng() % 12;
      for (size_t i = 0; i < n; ++i) {
        b.ids.push_back(static_cast<int32_t>(rng() % (v + 2)) - 1);  // -1 .. v
        b.bias.push_back(rng() % 10 == 0 ? -kInf : g(rng));
      }
      if (n > 1) b.ids[n - 1] = b.ids[0];  // a repeated id accumulates
      for (size_t i = rng() % 4; i > 0; --i) b.banned.push_back(static_cast<int32_t>(rng() % (v + 1)));
      b.restrict_to_allowed = rng() % 3 == 0;
      for (size_t i = rng() % (v + 3); i > 0; --i) b.allowed.push_back(static_cast<int32_t>(rng() % (v + 1)));
      const hr::Edited want = hr::LogitBias(row, b.ids, b.bias, b.banned, b.allowed, b.restrict_to_allowed);
      CheckAllStates(row, want, rng, [&](Cands& x) { RunBias(x, b); });
    }
  }
}

TEST_CASE("logit bias: allowed_mask on every state against the reference, with the lists") {
  std::mt19937_64 rng(303);
  for (size_t v : {1, 2, 3, 5, 17, 31, 32, 33, 64, 300, 1000, 5000}) {
    for (int rep = 0; rep < 10; ++rep) {
      CAPTURE(v);
      CAPTURE(rep);
      const std::vector<float> row = RandomRow(v, rng);
      Bias b;
      const unsigned share = static_cast<unsigned>(rng() % 101);  // percent allowed
      b.mask.assign((v + 31) / 32, 0);
      for (size_t t = 0; t < 32 * b.mask.size(); ++t) {
        // Bits past v at random: ignored.
        if (t >= v ? rng() % 2 == 0 : rng() % 100 < share) b.mask[t / 32] |= uint32_t{1} << (t % 32);
      }
      if (rng() % 2) {
        std::normal_distribution<float> g(0.0f, 3.0f);
        for (size_t i = rng() % 6; i > 0; --i) {
          b.ids.push_back(static_cast<int32_t>(rng() % v));
          b.bias.push_back(g(rng));
        }
        for (size_t i = rng() % 3; i > 0; --i) b.banned.push_back(static_cast<int32_t>(rng() % v));
        b.restrict_to_allowed = rng() % 2 == 0;
        for (size_t i = rng() % (v + 3); i > 0; --i) b.allowed.push_back(static_cast<int32_t>(rng() % v));
      }
      const hr::Edited want =
          hr::LogitBiasMasked(row, b.ids, b.bias, b.banned, b.allowed, b.restrict_to_allowed, b.mask);
      CheckAllStates(row, want, rng, [&](Cands& x) { RunBias(x, b); });
      // The row state's block maxima are the masked row's (the mask's scan
      // stands for FinishEdits').
      Cands full(row);
      full.c.block_max = full.ws.block_max.data();
      RunBias(full, b);
      REQUIRE_FALSE(full.c.truncated);
      if (full.c.Count() > 0) {
        REQUIRE(full.c.blocks_valid);
        std::vector<float> blocks(bd::NumBlocks(v));
        bd::ScanRow(full.c.row, v, blocks.data());
        CHECK(std::memcmp(blocks.data(), full.c.block_max, blocks.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("penalties: random rows, histories and windows against the reference") {
  std::mt19937_64 rng(202);
  const float reps[] = {1.0f, 1.1f, 1.5f, 0.8f, 3.0f};
  const float freqs[] = {0.0f, 0.1f, 1.5f};
  const float press[] = {0.0f, 0.5f, -0.2f};
  const int32_t last_ns[] = {-1, 0, 1, 3, 64, 1000};
  for (size_t v : kVocabs) {
    for (size_t len : kLengths) {
      for (int rep = 0; rep < 2; ++rep) {
        const std::vector<float> row = RandomRow(v, rng);
        const std::vector<int32_t> h = RandomHistory(v, len, rng);
        const float r = reps[rng() % 5], f = freqs[rng() % 3], p = press[rng() % 3];
        const int32_t last_n = last_ns[rng() % 6];
        CAPTURE(v);
        CAPTURE(len);
        CAPTURE(last_n);
        const hr::Edited want = hr::Penalties(row, h, r, f, p, last_n);
        CheckAllStates(row, want, rng, [&](Cands& x) { RunPenalties(x, h, r, f, p, last_n); });
      }
    }
  }
}

TEST_CASE("dry: random rows, histories and parameters against the brute-force reference") {
  std::mt19937_64 rng(303);
  const float mults[] = {0.8f, 1.0f, 2.0f};
  const float bases[] = {1.0f, 1.0000005f, 1.1f, 1.75f, 3.0f, 1e10f};
  const int32_t alloweds[] = {0, 1, 2, 3, 5};
  const int32_t last_ns[] = {-1, -1, 0, 2, 10, 64};
  for (size_t v : kVocabs) {
    for (size_t len : kLengths) {
      for (int rep = 0; rep < 3; ++rep) {
        const std::vector<float> row = RandomRow(v, rng);
        const std::vector<int32_t> h = RandomHistory(v, len, rng);
        hr::DryOptions o;
        o.multiplier = mults[rng() % 3];
        o.base = bases[rng() % 6];
        o.allowed_length = alloweds[rng() % 5];
        o.last_n = last_ns[rng() % 6];
        for (size_t i = rng() % 3; i > 0; --i) o.breakers.push_back(static_cast<int32_t>(rng() % std::min<size_t>(v, 6)));
        CAPTURE(v);
        CAPTURE(len);
        CAPTURE(o.base);
        CAPTURE(o.allowed_length);
        CAPTURE(o.last_n);
        const hr::Edited want = hr::Dry(row, h, o);
        CheckAllStates(row, want, rng, [&](Cands& x) {
          RunDry(x, h, static_cast<float>(o.multiplier), static_cast<float>(o.base),
                 o.allowed_length, o.last_n, o.breakers);
        });
      }
    }
  }
}

TEST_CASE("no repeat ngram: random rows and histories against the reference") {
  std::mt19937_64 rng(404);
  for (size_t v : kVocabs) {
    for (size_t len : kLengths) {
      for (int32_t n : {1, 2, 3, 4, 7}) {
        const std::vector<float> row = RandomRow(v, rng);
        const std::vector<int32_t> h = RandomHistory(v, len, rng);
        CAPTURE(v);
        CAPTURE(len);
        CAPTURE(n);
        const hr::Edited want = hr::NoRepeatNgram(row, h, n);
        CheckAllStates(row, want, rng, [&](Cands& x) { RunNgram(x, h, n); });
      }
    }
  }
}

// Sizes n from 1 to past the history's length, on histories of few distinct
// tokens (periodic stretches, runs of one token) where many n-grams share the
// prefix: the cases where a direct comparison per position costs O(L * n).
TEST_CASE("no repeat ngram: every size, repetitive histories, against the reference") {
  std::mt19937_64 rng(4343);
  for (size_t len : {1, 2, 5, 31, 64, 257, 700}) {
    for (int shape = 0; shape < 4; ++shape) {
      std::vector<int32_t> h(len);
      const size_t period = 1 + rng() % 5;
      for (size_t i = 0; i < len; ++i) {
        h[i] = shape == 0   ? 7
               : shape == 1 ? static_cast<int32_t>(i % period)
               : shape == 2 ? static_cast<int32_t>(rng() % 2)
                            : static_cast<int32_t>((i / (1 + rng() % 9)) % 3);
      }
      const std::vector<float> row = RandomRow(300, rng);
      for (size_t n : {size_t{1}, size_t{2}, size_t{3}, len / 3 + 1, len / 2, len - 1, len, len + 1,
                       len + 2}) {
        if (n == 0) continue;
        CAPTURE(len);
        CAPTURE(shape);
        CAPTURE(n);
        const hr::Edited want = hr::NoRepeatNgram(row, h, static_cast<int>(n));
        CheckAllStates(row, want, rng, [&](Cands& x) { RunNgram(x, h, static_cast<int32_t>(n)); });
      }
    }
  }
}

// Linear in the history for any n: size 50 000 over 100 000 tokens at V =
// 262144, on the worst histories for a direct comparison (one token
// repeated: every position matches the whole prefix; a short period: every
// period-th one does). The banned tokens follow from the shape: the run's
// token, and for period P the token len % P that continues the period.
TEST_CASE("no repeat ngram: size 50000 over 100000 tokens at V = 262144 is linear") {
  const size_t v = 262144, len = 100000;
  const int32_t n = 50000;
  std::vector<float> row(v);
  for (size_t i = 0; i < v; ++i) row[i] = static_cast<float>(i % 97) * 0.01f;
  for (size_t period : {size_t{1}, size_t{3}, size_t{1000}}) {
    std::vector<int32_t> h(len);
    for (size_t i = 0; i < len; ++i) h[i] = static_cast<int32_t>(i % period);
    // The fastest of three calls (a loaded machine may preempt any one).
    std::unique_ptr<Cands> x;
    double ms = 1e300;
    for (int rep = 0; rep < 3; ++rep) {
      x = std::make_unique<Cands>(row);
      const auto t0 = std::chrono::steady_clock::now();
      RunNgram(*x, h, n);
      ms = std::min(ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    CAPTURE(period);
    MESSAGE("no_repeat_ngram_size 50000, 100000 tokens, period " << period << ": " << ms << " ms");
    const int32_t banned = static_cast<int32_t>(len % period);
    size_t wrong = 0;
    for (size_t t = 0; t < v; ++t) {
      wrong += x->At(static_cast<int32_t>(t)) != (static_cast<int32_t>(t) == banned ? -kInf : row[t]);
    }
    CHECK(wrong == 0);
    // A direct comparison takes ~2.5e9 token compares here (about a second);
    // the Z pass about 2e5.
    CHECK(ms < 250.0);
    // The scratch: n - 1 int32, independent of the vocabulary.
    CHECK(x->ws.history_z.size() == static_cast<size_t>(n - 1));
  }
}
