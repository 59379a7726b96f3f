// libFuzzer target over the native API (src/decoder.h): Decode, Sample, a
// stateful sampler over several steps, and a batch of rows through one
// decoder. The input picks a vocabulary size (1 to 70000, or one past
// kMaxVocab), a row (LLM-shaped, flat, ties, noise, raw bytes as floats, with NaN,
// +-inf, denormals, +-FLT_MAX sprinkled in) and an option block, built the way
// the wasm build builds it (the slot block + aux arrays of option_slots.h), so
// every value a JS caller can send reaches the same code.
//
// Checked on every input, besides the sanitizers' own checks:
//  - a call returns kOk, or kTypeError/kRangeError with a message;
//  - a distribution has 1 <= k <= V, ids in [0, V) and distinct, finite
//    probabilities >= 0 that sum to 1 within 1e-6, most probable first, and
//    (with no stage that edits logits) in row order with ties by lower id;
//  - k within the truncations' bounds (top_k, bregman k / k_max);
//  - a draw is a live token of the row (not -inf), with a finite logprob,
//    inside the returned distribution when one is asked for;
//  - the same (seed, step) gives the same token again, and a fresh decoder
//    gives bit-identical results (no state leaks between calls: batches);
//  - after an error the decoder answers a fixed call exactly as a fresh one;
//  - a copied sampler state draws what the original draws.
// And the Bregman engine itself against the float64 oracle
// (tests/reference/bregman_oracle.h): on the row's softmax with the input's
// Bregman parameters, a fixed-k support's q, and for rows of up to 40
// tokens the adaptive k (where the oracle's costs tell it apart) and its q.
#include <fuzzer/FuzzedDataProvider.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "../tests/reference/bregman_oracle.h"
#include "bregman/bregman.h"
#include "decoder.h"
#include "option_slots.h"
#include "sampler_state.h"
#include "size_limits.h"

namespace {

#define FUZZ_CHECK(cond, ...)                                                   \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "invariant failed: %s (%s:%d)\n  ", #cond, __FILE__, \
                   __LINE__);                                                   \
      std::fprintf(stderr, __VA_ARGS__);                                        \
      std::fprintf(stderr, "\n");                                               \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

// The JS defaults (web/src/api.js SCALARS): a slot the input leaves alone
// holds its "off" value, so most inputs decode instead of failing validation.
std::vector<double> DefaultSlots() {
  std::vector<double> s(bd::kNumOptionSlots, 0.0);
  s[bd::kSlot_TEMPERATURE] = 1;
  s[bd::kSlot_DYNATEMP_EXPONENT] = 1;
  s[bd::kSlot_TOP_P] = 1;
  s[bd::kSlot_MIN_KEEP] = 1;
  s[bd::kSlot_TYPICAL_P] = 1;
  s[bd::kSlot_XTC_THRESHOLD] = 0.1;
  s[bd::kSlot_REPETITION_PENALTY] = 1;
  s[bd::kSlot_PENALTY_LAST_N] = 64;
  s[bd::kSlot_DRY_BASE] = 1.75;
  s[bd::kSlot_DRY_ALLOWED_LENGTH] = 2;
  s[bd::kSlot_DRY_PENALTY_LAST_N] = -1;
  s[bd::kSlot_MIROSTAT_TAU] = 5;
  s[bd::kSlot_MIROSTAT_ETA] = 0.1;
  s[bd::kSlot_BREGMAN_ALPHA] = 1;
  return s;
}

// A value for one option slot: mostly in-range numbers, then edges and raw
// doubles (NaN payloads, denormals, huge).
double SlotValue(FuzzedDataProvider& in, size_t vocab) {
  static const double kValues[] = {0,    1,     0.5,   0.9,   0.05,  0.1,    2,    3,
                                   1.5,  5,     40,    1e-3,  1e-6,  0.999,  0.3,  64,
                                   -1,   -2,    1.01,  1e30,  -1e30, 5e-324, 1e-300};
  const uint8_t kind = in.ConsumeIntegralInRange<uint8_t>(0, 31);
  if (kind < 23) return kValues[kind];
  switch (kind) {
    case 23: return static_cast<double>(vocab);
    case 24: return static_cast<double>(vocab) + 1;
    case 25: return NAN;
    case 26: return INFINITY;
    case 27: return -INFINITY;
    case 28: return 2147483648.0;
    case 29: return in.ConsumeIntegralInRange<int32_t>(-3, 300);
    default: {
      double d;
      const uint64_t bits = in.ConsumeIntegral<uint64_t>();
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
  }
}

float SpecialFloat(uint8_t k) {
  switch (k % 10) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 1e-40f;   // denormal
    case 4: return -1e-40f;
    case 5: return FLT_MAX;
    case 6: return -FLT_MAX;
    case 7: return 0.0f;
    case 8: return -0.0f;
    default: return FLT_MIN;
  }
}

// A row of `vocab` logits. Large rows come from a small generator seeded by
// the input, so a short input still reaches a large V.
void FillRow(FuzzedDataProvider& in, std::vector<float>& row, size_t vocab) {
  row.assign(vocab, 0.0f);
  const uint8_t kind = in.ConsumeIntegralInRange<uint8_t>(0, 6);
  const double spread = 0.25 + 4.0 * in.ConsumeProbability<double>();  // (kind 6)
  uint64_t x = in.ConsumeIntegral<uint64_t>() | 1;
  auto next = [&x]() {  // xorshift64*
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1Dull;
  };
  auto unit = [&]() { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  for (size_t i = 0; i < vocab; ++i) {
    switch (kind) {
      case 0:  // LLM-shaped: a Zipf head over noise, scrambled
        row[i] = static_cast<float>(-1.1 * std::log1p(static_cast<double>(next() % vocab)) + 0.3 * unit());
        break;
      case 1: row[i] = 0.25f; break;                                          // flat
      case 2: row[i] = static_cast<float>(next() % 3);   break;                // ties
      case 3: row[i] = static_cast<float>((unit() - 0.5) * 6e38); break;       // huge
      case 4: row[i] = unit() < 0.9 ? -INFINITY : static_cast<float>(unit()); break;  // mostly banned
      case 6:  // noise (~Gaussian): most of the row survives top-p and typical (their rings)
        row[i] = static_cast<float>(spread * (unit() + unit() + unit() + unit() - 2.0));
        break;
      default: {  // raw bytes as floats (NaN payloads, denormals, anything)
        const uint32_t bits = static_cast<uint32_t>(next() >> 32);
        std::memcpy(&row[i], &bits, sizeof(float));
      }
    }
  }
  // Specials at input-chosen places.
  const size_t n_special = in.ConsumeIntegralInRange<size_t>(0, 4);
  for (size_t j = 0; j < n_special; ++j) {
    const size_t at = in.ConsumeIntegralInRange<size_t>(0, vocab - 1);
    row[at] = SpecialFloat(in.ConsumeIntegral<uint8_t>());
  }
}

struct Block {
  std::vector<double> slots = DefaultSlots();
  std::vector<int32_t> aux_i32;
  std::vector<float> aux_f32;
  bd::DecodeOptions Read() const {
    return bd::OptionsFromSlots(slots.data(), aux_i32.data(), aux_i32.size(), aux_f32.data(),
                                aux_f32.size());
  }
};

void FillOptions(FuzzedDataProvider& in, Block& b, size_t vocab) {
  // Slots the input sets, by index (the rest keep their defaults).
  const size_t n_set = in.ConsumeIntegralInRange<size_t>(0, 8);
  for (size_t j = 0; j < n_set; ++j) {
    const size_t slot = in.ConsumeIntegralInRange<size_t>(0, bd::kSlot_RESTRICT_TO_ALLOWED);
    b.slots[slot] = SlotValue(in, vocab);
  }
  if (in.ConsumeBool()) {  // a Bregman stage, mostly valid
    b.slots[bd::kSlot_BREGMAN] = in.ConsumeIntegralInRange<int>(1, 2);
    // (algebraic maps, KL, and the general primal and dual lane maps: 2.5
    // with a dual start table, 1.01 and 40 without, 0.25 primal only; 400
    // and 1000: coordinates past the map's far cut, a support of one whose
    // p^alpha underflows)
    b.slots[bd::kSlot_BREGMAN_ALPHA] = in.PickValueInArray(
        {0.5, 1.0, 1.5, 2.0, 3.0, 0.999, 0.25, 1.01, 2.5, 40.0, 400.0, 1000.0});
    if (in.ConsumeBool()) {
      b.slots[bd::kSlot_BREGMAN_K] = in.ConsumeIntegralInRange<int>(1, 64);
    } else {
      b.slots[bd::kSlot_BREGMAN_LAMBDA] = in.PickValueInArray({0.0, 1e-6, 1e-3, 0.1, 1.0});
      // An adaptive search to k ~ V on a large row costs seconds under the
      // sanitizers (alpha < 1: about 2 s natively at V = 70000): capped on
      // large rows to keep the throughput; small rows search unbounded.
      if (vocab > 4096) b.slots[bd::kSlot_BREGMAN_K_MAX] = 256;
    }
  }
  // Aux arrays: ids mostly in the vocabulary, biases of every kind.
  const size_t n_aux = in.ConsumeIntegralInRange<size_t>(0, 48);
  b.aux_i32.resize(n_aux);
  b.aux_f32.resize(n_aux);
  for (size_t i = 0; i < n_aux; ++i) {
    const uint8_t k = in.ConsumeIntegral<uint8_t>();
    b.aux_i32[i] = k < 240 ? static_cast<int32_t>(in.ConsumeIntegral<uint32_t>() % vocab)
                           : in.ConsumeIntegral<int32_t>();
    b.aux_f32[i] = k % 16 == 0 ? SpecialFloat(k) : static_cast<float>(in.ConsumeIntegralInRange<int>(-20, 20));
  }
  static const bd::OptionSlot kLists[][2] = {
      {bd::kSlot_HISTORY_OFFSET, bd::kSlot_HISTORY_LENGTH},
      {bd::kSlot_BIAS_OFFSET, bd::kSlot_BIAS_LENGTH},
      {bd::kSlot_BANNED_OFFSET, bd::kSlot_BANNED_LENGTH},
      {bd::kSlot_ALLOWED_OFFSET, bd::kSlot_ALLOWED_LENGTH},
      {bd::kSlot_BREAKERS_OFFSET, bd::kSlot_BREAKERS_LENGTH},
      {bd::kSlot_ALLOWED_MASK_OFFSET, bd::kSlot_ALLOWED_MASK_LENGTH}};
  for (const auto& l : kLists) {
    if (!in.ConsumeBool()) continue;
    b.slots[l[0]] = in.ConsumeIntegralInRange<size_t>(0, n_aux + 2);  // past the end: clamped
    b.slots[l[1]] = in.ConsumeIntegralInRange<size_t>(0, n_aux + 2);
  }
  if (in.ConsumeBool()) {  // a chosen stage order (ids past kCount are ignored)
    const size_t n = in.ConsumeIntegralInRange<size_t>(0, bd::kMaxChainLength + 2);
    b.slots[bd::kSlot_ORDER_LENGTH] = static_cast<double>(n);
    for (size_t i = 0; i < n && i < bd::kMaxChainLength; ++i) {
      b.slots[bd::kSlot_ORDER + i] =
          in.ConsumeIntegralInRange<int>(0, static_cast<int>(bd::StageId::kCount) + 1);
    }
  }
  b.slots[bd::kSlot_SEED_LO] = in.ConsumeIntegral<uint32_t>();
  b.slots[bd::kSlot_STEP_LO] = in.ConsumeIntegralInRange<uint32_t>(0, 1000);
  // Repetitive lists (a period of 1 to 4 ids), read last so the corpus's
  // inputs keep their meaning: a history whose n-grams and repeats match far
  // back (no_repeat_ngram's and DRY's Z passes with long boxes, every prefix
  // length up to the history's).
  if (in.ConsumeBool()) {
    const size_t period = in.ConsumeIntegralInRange<size_t>(1, 4);
    for (size_t i = period; i < n_aux; ++i) b.aux_i32[i] = b.aux_i32[i - period];
    b.slots[bd::kSlot_NO_REPEAT_NGRAM_SIZE] = in.ConsumeIntegralInRange<int>(0, static_cast<int>(n_aux) + 2);
  }
}

// Bregman decodes checked against the oracle (CheckBregmanAgainstOracle).
struct BregmanOracleStats {
  size_t fixed = 0, adaptive = 0, ambiguous = 0;
};
BregmanOracleStats oracle_stats;

// What the inputs reached, printed at exit with BD_FUZZ_STATS=1 (to see that
// a corpus exercises every path, not only the errors).
struct Stats {
  size_t ok[2] = {0, 0}, errors = 0, batches = 0, sampler_steps = 0, oversized = 0,
         band_draws = 0;
  ~Stats() {
    if (std::getenv("BD_FUZZ_STATS") == nullptr) return;
    std::fprintf(stderr,
                 "bd_fuzz stats: decode ok %zu, sample ok %zu, errors %zu, batches of 2+ rows %zu, "
                 "sampler steps %zu, oversized rows %zu, draws from a band of the row %zu\n",
                 ok[0], ok[1], errors, batches, sampler_steps, oversized, band_draws);
    std::fprintf(stderr, "bd_fuzz stats: bregman against the oracle: fixed k %zu, adaptive %zu "
                 "(%zu of them undecided by the oracle's costs or clamped)\n",
                 oracle_stats.fixed, oracle_stats.adaptive, oracle_stats.ambiguous);
  }
};
Stats stats;

// Whether the chain keeps the row's order among survivors: no bias, penalty
// or adaptive-p (whose transform favours tokens near its target, not the
// likeliest) may run.
bool OrderPreserving(const bd::DecodeOptions& o) {
  return !(o.adaptive_p.target >= 0.0f) && o.logit_bias.n == 0 && o.penalties.repetition == 1.0f && o.penalties.frequency == 0.0f &&
         o.penalties.presence == 0.0f && o.dry.multiplier == 0.0f && o.no_repeat_ngram.size == 0;
}

void CheckDistribution(const bd::Decoder& d, const float* row, size_t vocab,
                       const bd::DecodeOptions& o) {
  const size_t k = d.k();
  FUZZ_CHECK(k >= 1 && k <= vocab, "k %zu, V %zu", k, vocab);
  std::vector<uint8_t> seen(vocab, 0);
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    const int32_t id = d.ids()[i];
    FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < vocab, "id %d, V %zu", id, vocab);
    FUZZ_CHECK(!seen[id], "id %d twice", id);
    seen[id] = 1;
    const float p = d.probs()[i];
    FUZZ_CHECK(std::isfinite(p) && p >= 0.0f, "p[%zu] = %g", i, p);
    FUZZ_CHECK(row[id] > -INFINITY, "id %d has logit -inf", id);
    if (i > 0 && o.sorted) {  // sorted = false: an unspecified order (checked in Call)
      FUZZ_CHECK(p <= d.probs()[i - 1], "probs not descending at %zu: %.9g > %.9g", i, p,
                 d.probs()[i - 1]);
      if (OrderPreserving(o)) {
        const float a = row[d.ids()[i - 1]], b = row[id];
        // -0 and +0 tie: the lower id first, as for every tie.
        FUZZ_CHECK(a > b || (a == b && d.ids()[i - 1] < id),
                   "order at %zu: (%d, %g) before (%d, %g)", i, d.ids()[i - 1], a, id, b);
      }
    }
    sum += p;
  }
  FUZZ_CHECK(std::fabs(sum - 1.0) <= 1e-6, "sum %.12g, k %zu", sum, k);
  // Truncation bounds.
  const bool top_k_on = o.top_k > 0 && (o.order_len == 0 || [&] {
    for (size_t i = 0; i < o.order_len; ++i) if (o.order[i] == bd::StageId::kTopK) return true;
    return false;
  }());
  if (top_k_on) {
    const size_t bound = std::max<size_t>(static_cast<size_t>(o.top_k), static_cast<size_t>(std::max(o.min_keep, 1)));
    FUZZ_CHECK(k <= bound, "k %zu > top_k bound %zu", k, bound);
  }
}

bool BregmanRuns(const bd::DecodeOptions& o) {
  if (!o.bregman_enabled) return false;
  if (o.order_len == 0) return true;
  for (size_t i = 0; i < o.order_len; ++i) if (o.order[i] == bd::StageId::kBregman) return true;
  return false;
}

// The fixed call an errored decoder must answer exactly as a fresh one.
void CheckUsable(bd::Decoder& d) {
  static const float kRow[] = {0.5f, 2.0f, -1.0f, 2.0f, 1.5f, -INFINITY, 0.0f};
  bd::DecodeOptions o;
  o.top_k = 4;
  o.seed = 99;
  o.step = 7;
  FUZZ_CHECK(d.Sample(kRow, 7, o) == bd::StatusCode::kOk, "after an error: %s", d.error());
  bd::Decoder fresh;
  FUZZ_CHECK(fresh.Sample(kRow, 7, o) == bd::StatusCode::kOk, "%s", fresh.error());
  FUZZ_CHECK(d.token() == fresh.token() && d.k() == fresh.k(),
             "after an error: token %d k %zu, fresh %d k %zu", d.token(), d.k(), fresh.token(),
             fresh.k());
}

// The Bregman engine (DecodeBregman on the row's softmax, sorted) against
// the oracle: a fixed support's q within 1e-9 relative (plus 1e-13: a tail q
// that holds no mass is ill-determined by sum q = 1, in both); adaptive
// decodes of small rows: k where the oracle's costs decide it, that
// support's q, and its objective. (The oracle prices every k by bisection,
// nested per coordinate for the dual: its sizes keep an input within a few
// ms.)
constexpr size_t kOraclePrimalVocab = 40, kOracleDualVocab = 8, kOracleDualFixedK = 16;

void CheckBregmanAgainstOracle(const float* row, size_t vocab, const bd::BregmanParams& params) {
  if (bd::ValidateBregmanParams(params) != nullptr) return;
  const bool adaptive = params.fixed_k == 0;
  const bool dual = params.divergence == bd::BregmanDivergence::kDual;
  if (adaptive && vocab > (dual ? kOracleDualVocab : kOraclePrimalVocab)) return;
  // The oracle's costs are not a reference past alpha ~64 (its series
  // cancels; bregman_oracle.h): adaptive decodes there keep the invariants
  // only. Its fixed-support q still is (its maps are cancellation-free).
  if (adaptive && params.alpha > 64.0) return;
  if (!adaptive && dual && params.fixed_k > kOracleDualFixedK) return;
  // The softmax in long double over the finite logits (-inf: 0); rows with
  // NaN or +inf have no softmax of their own (the chain's rules) and are
  // left to the invariants.
  long double mx = -INFINITY;
  for (size_t i = 0; i < vocab; ++i) {
    if (std::isnan(row[i]) || row[i] == INFINITY) return;
    mx = std::max<long double>(mx, row[i]);
  }
  if (!(mx > -INFINITY)) return;
  std::vector<long double> e(vocab);
  long double z = 0.0L;
  for (size_t i = 0; i < vocab; ++i) z += e[i] = std::exp(static_cast<long double>(row[i]) - mx);
  std::vector<double> p(vocab);
  for (size_t i = 0; i < vocab; ++i) p[i] = static_cast<double>(e[i] / z);
  // Descending; a fixed support needs only its top k (the rest is 1 - kept).
  const size_t k_fixed = std::min(params.fixed_k, vocab);
  const size_t n = adaptive ? vocab : k_fixed;
  std::partial_sort(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n), p.end(),
                    std::greater<double>());
  p.resize(n);
  bd::SortedProbsArray probs(p.data(), n);
  static bd::BregmanWorkspace ws;
  // (adaptive: with the objective, checked below against the oracle's C(k))
  const bd::BregmanResult got = bd::DecodeBregman(params, probs, ws, adaptive);
  namespace oracle = bregman_oracle;
  const oracle::Mode mode = dual ? oracle::Mode::kDual : oracle::Mode::kPrimal;
  const size_t k = got.k;
  if (adaptive) {
    ++oracle_stats.adaptive;
    const oracle::Table table = oracle::MakeTable(mode, params.alpha, p);
    const oracle::Decision want = oracle::Decide(table, params.lambda);
    const size_t k_want = std::min(std::max(want.k, std::max<size_t>(params.k_min, 1)),
                                   std::min(params.k_max, n));
    const bool clamped = k_want != want.k;
    if (want.ambiguous || clamped) {
      ++oracle_stats.ambiguous;
      if (clamped) return;  // (the oracle has no clamps; the invariants check them)
    } else {
      FUZZ_CHECK(got.k == want.k, "bregman %s alpha %.17g lambda %.17g V %zu: k %zu, oracle %zu",
                 dual ? "dual" : "primal", params.alpha, params.lambda, n,
                 got.k, want.k);
      // The objective D(k) + lambda k: 1e-9 relative plus the oracle's own
      // resolution of C, and for KL the tail's 1 - s_k (a few ulp of 1).
      const double obj_tol = 1e-9 * std::fabs(want.objective) + want.tolerance + 1e-14 +
                             (params.alpha == 1.0 ? 16.0 * 2.220446049250313e-16 : 0.0);
      FUZZ_CHECK(got.objective == want.objective ||
                     std::fabs(got.objective - want.objective) <= obj_tol,
                 "bregman %s alpha %.17g lambda %.17g V %zu k %zu: objective %.17g, oracle %.17g",
                 dual ? "dual" : "primal", params.alpha, params.lambda, n, got.k, got.objective,
                 want.objective);
    }
  } else {
    ++oracle_stats.fixed;
    FUZZ_CHECK(got.k == k_fixed, "fixed k %zu, got %zu", k_fixed, got.k);
  }
  std::vector<double> q(k);
  oracle::Renormalise(mode, params.alpha, p.data(), k, q.data());
  for (size_t i = 0; i < k; ++i) {
    FUZZ_CHECK(std::fabs(ws.q[i] - q[i]) <= 1e-9 * q[i] + 1e-13,
               "bregman %s alpha %.17g k %zu (V %zu): q[%zu] = %.17g, oracle %.17g",
               dual ? "dual" : "primal", params.alpha, k, vocab, i, ws.q[i],
               q[i]);
  }
}

// Runs one call; checks the invariants; returns the status.
bd::StatusCode Call(bd::Decoder& d, bool sample, const float* row, size_t vocab,
                    const bd::DecodeOptions& o, bd::SamplerState* state) {
  const bd::StatusCode st =
      sample ? d.Sample(row, vocab, o, state) : d.Decode(row, vocab, o, state);
  if (st != bd::StatusCode::kOk) {
    FUZZ_CHECK(st == bd::StatusCode::kRangeError || st == bd::StatusCode::kTypeError,
               "status %d", static_cast<int>(st));
    FUZZ_CHECK(d.error()[0] != '\0', "an error without a message");
    ++stats.errors;
    return st;
  }
  ++stats.ok[sample ? 1 : 0];
  if (!sample || o.return_distribution) CheckDistribution(d, row, vocab, o);
  if (!sample && !o.sorted) {
    // An unsorted decode is the sorted one's set, with the same probability per id.
    bd::DecodeOptions so = o;
    so.sorted = true;
    bd::Decoder fresh;
    FUZZ_CHECK(fresh.Decode(row, vocab, so, state) == bd::StatusCode::kOk, "sorted: %s",
               fresh.error());
    FUZZ_CHECK(fresh.k() == d.k(), "unsorted k %zu, sorted k %zu", d.k(), fresh.k());
    std::vector<float> p_of(vocab, -1.0f);
    for (size_t i = 0; i < fresh.k(); ++i) p_of[fresh.ids()[i]] = fresh.probs()[i];
    for (size_t i = 0; i < d.k(); ++i) {
      const int32_t id = d.ids()[i];
      FUZZ_CHECK(p_of[id] == d.probs()[i], "unsorted p(%d) = %.9g, sorted %.9g", id,
                 d.probs()[i], p_of[id]);
    }
  }
  if (!sample && BregmanRuns(o) && o.bregman.fixed_k > 0) {
    FUZZ_CHECK(d.k() <= o.bregman.fixed_k, "k %zu > bregman.k %zu", d.k(), o.bregman.fixed_k);
  }
  if (!sample && BregmanRuns(o) && o.bregman.fixed_k == 0) {
    FUZZ_CHECK(d.k() <= o.bregman.k_max, "k %zu > bregman.k_max %zu", d.k(), o.bregman.k_max);
  }
  if (sample) {
    stats.band_draws += d.drew_row_band();
    const int32_t t = d.token();
    FUZZ_CHECK(t >= 0 && static_cast<size_t>(t) < vocab, "token %d, V %zu", t, vocab);
    FUZZ_CHECK(row[t] > -INFINITY, "token %d has logit -inf", t);
    FUZZ_CHECK(std::isfinite(d.logprob()) && d.logprob() <= 1e-9, "logprob %g", d.logprob());
    if (o.return_distribution) {
      bool found = false;
      for (size_t i = 0; i < d.k(); ++i) found = found || d.ids()[i] == t;
      FUZZ_CHECK(found, "token %d not in the returned distribution", t);
    } else if (state == nullptr) {
      // Without the distribution the draw may read a band of the row the
      // chain left ungathered (DrawHint::kRowBand): it draws from decode()'s
      // survivors all the same.
      bd::Decoder fresh;
      FUZZ_CHECK(fresh.Decode(row, vocab, o) == bd::StatusCode::kOk, "decode: %s", fresh.error());
      bool found = false;
      for (size_t i = 0; i < fresh.k(); ++i) found = found || fresh.ids()[i] == t;
      FUZZ_CHECK(found, "token %d (band %d) not among decode()'s %zu survivors", t,
                 d.drew_row_band(), fresh.k());
      FUZZ_CHECK(fresh.k() == d.k(), "sample k %zu (band %d), decode k %zu", d.k(),
                 d.drew_row_band(), fresh.k());
    }
  }
  return st;
}

// Result of a call, copied out for bitwise comparisons.
struct Outcome {
  bd::StatusCode status;
  int32_t token;
  double logprob;
  std::vector<int32_t> ids;
  std::vector<float> probs;
  bool operator==(const Outcome& b) const {
    return status == b.status && token == b.token &&
           std::memcmp(&logprob, &b.logprob, sizeof logprob) == 0 && ids == b.ids &&
           probs.size() == b.probs.size() &&
           (probs.empty() || std::memcmp(probs.data(), b.probs.data(), probs.size() * 4) == 0);
  }
};
Outcome Capture(const bd::Decoder& d, bd::StatusCode st, bool sample, const bd::DecodeOptions& o) {
  Outcome r{st, -1, 0.0, {}, {}};
  if (st != bd::StatusCode::kOk) return r;
  if (sample) {
    r.token = d.token();
    r.logprob = d.logprob();
  }
  if (!sample || o.return_distribution) {
    r.ids.assign(d.ids(), d.ids() + d.k());
    r.probs.assign(d.probs(), d.probs() + d.k());
  }
  return r;
}

size_t PickVocab(FuzzedDataProvider& in) {
  // Mostly small rows (fast: many inputs per second), now and then large ones.
  const int kind = in.ConsumeIntegralInRange<int>(0, 63);
  if (kind < 42) return in.ConsumeIntegralInRange<size_t>(1, 16);
  if (kind < 59) return in.ConsumeIntegralInRange<size_t>(17, 256);
  if (kind < 62) return in.ConsumeIntegralInRange<size_t>(257, 4096);
  if (kind < 63) return in.ConsumeBool() ? 70000 : 32000;
  return bd::kMaxVocab + 1;  // refused before any read or allocation
}


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  static bd::Decoder shared;  // lives across inputs: earlier calls must not change later ones
  // The integral reads come from the input's end: the mode first, so that
  // short inputs reach every path.
  const uint8_t mode = in.ConsumeIntegral<uint8_t>();
  const size_t vocab = PickVocab(in);
  if (vocab > bd::kMaxVocab) {
    // The oversized row: a RangeError naming the limit, read nowhere.
    static const std::vector<float> huge(bd::kMaxVocab + 1, 0.0f);
    bd::DecodeOptions o;
    FUZZ_CHECK(shared.Decode(huge.data(), vocab, o) == bd::StatusCode::kRangeError, "past kMaxVocab");
    FUZZ_CHECK(std::strstr(shared.error(), "largest vocabulary") != nullptr, "%s", shared.error());
    CheckUsable(shared);
    ++stats.oversized;
    return 0;
  }
  const size_t rows = in.ConsumeIntegralInRange<size_t>(1, vocab > 4096 ? 1 : 4);
  std::vector<std::vector<float>> row(rows);
  std::vector<Block> block(rows);
  for (size_t r = 0; r < rows; ++r) {
    FillRow(in, row[r], vocab);
    FillOptions(in, block[r], vocab);
  }
  if (mode % 3 != 2) {
    // Stateless decode / sample of a batch through the shared decoder; each
    // row again on a fresh decoder (batch invariance), and the same seed twice.
    const bool sample = mode % 3 == 1;
    bool any_error = false;
    if (rows > 1) ++stats.batches;
    std::vector<Outcome> got;
    for (size_t r = 0; r < rows; ++r) {
      const bd::DecodeOptions o = block[r].Read();
      const bd::StatusCode st = Call(shared, sample, row[r].data(), vocab, o, nullptr);
      got.push_back(Capture(shared, st, sample, o));
      if (st == bd::StatusCode::kOk && BregmanRuns(o)) {
        CheckBregmanAgainstOracle(row[r].data(), vocab, o.bregman);
      }
      any_error = any_error || st != bd::StatusCode::kOk;
      if (st == bd::StatusCode::kOk && sample) {
        const int32_t first = shared.token();
        FUZZ_CHECK(Call(shared, true, row[r].data(), vocab, o, nullptr) == bd::StatusCode::kOk, "%s",
                   shared.error());
        FUZZ_CHECK(shared.token() == first, "same seed, token %d then %d", first, shared.token());
      }
    }
    for (size_t r = 0; r < rows; ++r) {
      bd::Decoder fresh;
      const bd::DecodeOptions o = block[r].Read();
      const bd::StatusCode st = Call(fresh, sample, row[r].data(), vocab, o, nullptr);
      FUZZ_CHECK(Capture(fresh, st, sample, o) == got[r],
                 "row %zu of %zu: the shared decoder and a fresh one differ (status %d vs %d, token "
                 "%d vs %d)",
                 r, rows, static_cast<int>(got[r].status), static_cast<int>(st), got[r].token,
                 fresh.token());
    }
    if (any_error) CheckUsable(shared);
    return 0;
  }

  // A stateful sampler over several steps (row r % rows at step t), with a
  // copy of its state replayed on a fresh decoder.
  const bd::DecodeOptions o = block[0].Read();
  bd::SamplerState state;
  state.Reset(o.mirostat);
  const size_t n_prompt = in.ConsumeIntegralInRange<size_t>(0, 6);
  for (size_t i = 0; i < n_prompt; ++i) {
    state.Accept(static_cast<int32_t>(in.ConsumeIntegral<uint32_t>() % (vocab + 1)));
  }
  const size_t steps = in.ConsumeIntegralInRange<size_t>(1, vocab > 4096 ? 2 : 12);
  for (size_t t = 0; t < steps; ++t) {
    const std::vector<float>& x = row[t % rows];
    bd::SamplerState copy = state;
    const bd::StatusCode st = Call(shared, true, x.data(), vocab, o, &state);
    if (st != bd::StatusCode::kOk) {
      FUZZ_CHECK(state.step() == copy.step() && state.history_len() == copy.history_len(),
                 "a failed call changed the sampler state");
      CheckUsable(shared);
      break;
    }
    FUZZ_CHECK(state.step() == copy.step() + 1, "step did not advance");
    if (t == 0 && BregmanRuns(o)) CheckBregmanAgainstOracle(x.data(), vocab, o.bregman);
    ++stats.sampler_steps;
    bd::Decoder fresh;
    FUZZ_CHECK(fresh.Sample(x.data(), vocab, o, &copy) == bd::StatusCode::kOk, "%s", fresh.error());
    FUZZ_CHECK(fresh.token() == shared.token(), "copied state drew %d, original %d",
               fresh.token(), shared.token());
    if (in.ConsumeBool()) {
      // The drawn token is in the history now, so a penalty may push the
      // row's last finite logit (e.g. -FLT_MAX * repetition) to -inf, which
      // removes it (docs/samplers.md): "every token was removed" is then the
      // documented answer, and the decoder must stay usable.
      const bd::StatusCode again = Call(shared, false, x.data(), vocab, o, &state);
      FUZZ_CHECK(again == bd::StatusCode::kOk ||
                     (again == bd::StatusCode::kRangeError &&
                      std::strstr(shared.error(), "every token was removed") != nullptr),
                 "%s", shared.error());
      if (again != bd::StatusCode::kOk) CheckUsable(shared);
    }
  }
  return 0;
}
