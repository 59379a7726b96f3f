// Options cross the JS/wasm boundary as one block of doubles in the wasm heap
// (one HEAPF64.set per call instead of an Embind object walk), plus two aux
// arrays (int32, float32) for the variable-length inputs: history, logit_bias,
// banned/allowed tokens, DRY's breakers, the packed allowed_mask. The slot list is defined here only;
// the bindings export each index to JS by name (SLOT_<NAME>).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "options.h"

namespace bd {

#define BD_OPTION_SLOTS(X)                                                     \
  X(TEMPERATURE) X(DYNATEMP_RANGE) X(DYNATEMP_EXPONENT) X(TOP_K) X(TOP_P)      \
  X(MIN_P) X(MIN_KEEP) X(TYPICAL_P) X(EPSILON_CUTOFF) X(ETA_CUTOFF)            \
  X(TOP_N_SIGMA) X(XTC_PROBABILITY) X(XTC_THRESHOLD) X(REPETITION_PENALTY)     \
  X(FREQUENCY_PENALTY) X(PRESENCE_PENALTY) X(PENALTY_LAST_N)                   \
  X(DRY_MULTIPLIER) X(DRY_BASE) X(DRY_ALLOWED_LENGTH) X(DRY_PENALTY_LAST_N)    \
  X(NO_REPEAT_NGRAM_SIZE) X(MIROSTAT) X(MIROSTAT_TAU) X(MIROSTAT_ETA)          \
  X(P_LESS) X(TOP_H) X(ADAPTIVE_TARGET) X(ADAPTIVE_DECAY)                      \
  X(BREGMAN) X(BREGMAN_ALPHA) X(BREGMAN_LAMBDA) X(BREGMAN_K)                   \
  X(BREGMAN_K_MIN) X(BREGMAN_K_MAX) X(LOGPROBS) X(TOP_LOGPROBS) X(RETURN_DISTRIBUTION) X(UNSORTED) X(SEED_HI) X(SEED_LO) \
  X(STEP_HI) X(STEP_LO) X(HISTORY_OFFSET) X(HISTORY_LENGTH) X(BIAS_OFFSET)     \
  X(BIAS_LENGTH) X(BANNED_OFFSET) X(BANNED_LENGTH) X(ALLOWED_OFFSET)           \
  X(ALLOWED_LENGTH) X(RESTRICT_TO_ALLOWED) X(BREAKERS_OFFSET)                  \
  X(ALLOWED_MASK_OFFSET) X(ALLOWED_MASK_LENGTH)                                \
  X(BREAKERS_LENGTH) X(ORDER_LENGTH) X(ORDER)

enum OptionSlot : int32_t {
#define BD_SLOT_ENUM(name) kSlot_##name,
  BD_OPTION_SLOTS(BD_SLOT_ENUM)
#undef BD_SLOT_ENUM
  // ORDER is the first of kMaxChainLength slots holding StageId values.
  kNumOptionSlots = kSlot_ORDER + kMaxChainLength
};

// The scalar options, as the JS API names them: their slot, whether they are
// integers, the value that leaves them at their stage's "off" (the slot
// block's default), for integers the lowest value a range check accepts (the
// JS API names it when a value does not fit the slot's int32), and the stage
// they configure (kCount: the whole call).
// kChoice: a value the JS API maps to a number of its own (p_less: false,
// true or 'norm' -> 0, 1, 2; web/src/options.js).
enum class OptionKind : uint8_t { kNumber, kInt, kChoice };
struct ScalarOption {
  const char* name;
  OptionSlot slot;
  OptionKind kind;
  double off;
  double lowest;
  StageId stage;
};
constexpr ScalarOption kScalarOptions[] = {
    {"temperature", kSlot_TEMPERATURE, OptionKind::kNumber, 1, 0, StageId::kTemperature},
    {"dynatemp_range", kSlot_DYNATEMP_RANGE, OptionKind::kNumber, 0, 0, StageId::kTemperature},
    {"dynatemp_exponent", kSlot_DYNATEMP_EXPONENT, OptionKind::kNumber, 1, 0, StageId::kTemperature},
    {"top_k", kSlot_TOP_K, OptionKind::kInt, 0, 0, StageId::kTopK},
    {"top_p", kSlot_TOP_P, OptionKind::kNumber, 1, 0, StageId::kTopP},
    {"min_p", kSlot_MIN_P, OptionKind::kNumber, 0, 0, StageId::kMinP},
    {"min_keep", kSlot_MIN_KEEP, OptionKind::kInt, 1, 0, StageId::kCount},
    {"typical_p", kSlot_TYPICAL_P, OptionKind::kNumber, 1, 0, StageId::kTypical},
    {"epsilon_cutoff", kSlot_EPSILON_CUTOFF, OptionKind::kNumber, 0, 0, StageId::kEpsilon},
    {"eta_cutoff", kSlot_ETA_CUTOFF, OptionKind::kNumber, 0, 0, StageId::kEta},
    {"top_n_sigma", kSlot_TOP_N_SIGMA, OptionKind::kNumber, 0, 0, StageId::kTopNSigma},
    {"xtc_probability", kSlot_XTC_PROBABILITY, OptionKind::kNumber, 0, 0, StageId::kXtc},
    {"xtc_threshold", kSlot_XTC_THRESHOLD, OptionKind::kNumber, 0.1, 0, StageId::kXtc},
    {"repetition_penalty", kSlot_REPETITION_PENALTY, OptionKind::kNumber, 1, 0, StageId::kPenalties},
    {"frequency_penalty", kSlot_FREQUENCY_PENALTY, OptionKind::kNumber, 0, 0, StageId::kPenalties},
    {"presence_penalty", kSlot_PRESENCE_PENALTY, OptionKind::kNumber, 0, 0, StageId::kPenalties},
    {"penalty_last_n", kSlot_PENALTY_LAST_N, OptionKind::kInt, 64, -1, StageId::kPenalties},
    {"dry_multiplier", kSlot_DRY_MULTIPLIER, OptionKind::kNumber, 0, 0, StageId::kDry},
    {"dry_base", kSlot_DRY_BASE, OptionKind::kNumber, 1.75, 0, StageId::kDry},
    {"dry_allowed_length", kSlot_DRY_ALLOWED_LENGTH, OptionKind::kInt, 2, 0, StageId::kDry},
    {"dry_penalty_last_n", kSlot_DRY_PENALTY_LAST_N, OptionKind::kInt, -1, -1, StageId::kDry},
    {"no_repeat_ngram_size", kSlot_NO_REPEAT_NGRAM_SIZE, OptionKind::kInt, 0, 0, StageId::kNoRepeatNgram},
    {"mirostat", kSlot_MIROSTAT, OptionKind::kInt, 0, 0, StageId::kMirostat},
    {"mirostat_tau", kSlot_MIROSTAT_TAU, OptionKind::kNumber, 5, 0, StageId::kMirostat},
    {"mirostat_eta", kSlot_MIROSTAT_ETA, OptionKind::kNumber, 0.1, 0, StageId::kMirostat},
    {"p_less", kSlot_P_LESS, OptionKind::kChoice, 0, 0, StageId::kPLess},
    {"top_h", kSlot_TOP_H, OptionKind::kNumber, 0, 0, StageId::kTopH},
    {"adaptive_target", kSlot_ADAPTIVE_TARGET, OptionKind::kNumber, -1, 0, StageId::kAdaptiveP},
    {"adaptive_decay", kSlot_ADAPTIVE_DECAY, OptionKind::kNumber, 0.9, 0, StageId::kAdaptiveP},
    {"top_logprobs", kSlot_TOP_LOGPROBS, OptionKind::kInt, 0, 0, StageId::kCount},
};

namespace slot_detail {

// Slot values into C++ types: integers clamped into int32 (NaN reads as -2,
// out of every range), counts into [0, 2^32), 32-bit halves of a 64-bit
// value (anything else, only in a malformed block, reads as 0).
inline int32_t I32(double v) {
  if (!(v == v)) return -2;
  if (v > 2147483647.0) return 2147483647;
  if (v < -2147483648.0) return -2147483647 - 1;
  return static_cast<int32_t>(v);
}
inline size_t Count(double v) {
  return v >= 1.0 ? static_cast<size_t>(std::fmin(v, 4294967295.0)) : 0;
}
inline uint64_t U32(double v) {
  return v >= 0.0 && v < 4294967296.0 ? static_cast<uint64_t>(v) : 0;
}
inline uint64_t U64(double hi, double lo) { return (U32(hi) << 32) | U32(lo); }
// A [offset, offset + length) range of an aux array of `cap` entries, or
// empty; returns the offset and writes the length.
inline size_t Range(double off, double len, size_t cap, size_t* out_len) {
  const size_t o = off >= 0.0 && off <= static_cast<double>(cap) ? static_cast<size_t>(off) : cap;
  size_t l = len >= 0.0 ? static_cast<size_t>(std::fmin(len, static_cast<double>(cap))) : 0;
  if (o + l > cap) l = cap - o;
  *out_len = l;
  return o;
}

// The stages' scalar parameters and the call's flags.
inline void ReadScalars(const double* s, DecodeOptions& o) {
  o.temperature = static_cast<float>(s[kSlot_TEMPERATURE]);
  o.dynatemp.temperature = o.temperature;
  o.dynatemp.range = static_cast<float>(s[kSlot_DYNATEMP_RANGE]);
  o.dynatemp.exponent = static_cast<float>(s[kSlot_DYNATEMP_EXPONENT]);
  o.top_k = I32(s[kSlot_TOP_K]);
  o.top_p = static_cast<float>(s[kSlot_TOP_P]);
  o.min_p = static_cast<float>(s[kSlot_MIN_P]);
  o.min_keep = I32(s[kSlot_MIN_KEEP]);
  const size_t min_keep = static_cast<size_t>(o.min_keep > 1 ? o.min_keep : 1);
  o.typical.p = static_cast<float>(s[kSlot_TYPICAL_P]);
  o.typical.min_keep = min_keep;
  o.epsilon.epsilon = static_cast<float>(s[kSlot_EPSILON_CUTOFF]);
  o.epsilon.min_keep = min_keep;
  o.eta.eta = static_cast<float>(s[kSlot_ETA_CUTOFF]);
  o.eta.min_keep = min_keep;
  o.top_n_sigma.n = static_cast<float>(s[kSlot_TOP_N_SIGMA]);
  o.xtc.probability = static_cast<float>(s[kSlot_XTC_PROBABILITY]);
  o.xtc.threshold = static_cast<float>(s[kSlot_XTC_THRESHOLD]);
  o.xtc.min_keep = min_keep;
  o.penalties.repetition = static_cast<float>(s[kSlot_REPETITION_PENALTY]);
  o.penalties.frequency = static_cast<float>(s[kSlot_FREQUENCY_PENALTY]);
  o.penalties.presence = static_cast<float>(s[kSlot_PRESENCE_PENALTY]);
  o.penalties.last_n = I32(s[kSlot_PENALTY_LAST_N]);
  o.dry.multiplier = static_cast<float>(s[kSlot_DRY_MULTIPLIER]);
  o.dry.base = static_cast<float>(s[kSlot_DRY_BASE]);
  o.dry.allowed_length = I32(s[kSlot_DRY_ALLOWED_LENGTH]);
  o.dry.last_n = I32(s[kSlot_DRY_PENALTY_LAST_N]);
  o.no_repeat_ngram.size = I32(s[kSlot_NO_REPEAT_NGRAM_SIZE]);
  o.mirostat_enabled = s[kSlot_MIROSTAT] == 1.0 || s[kSlot_MIROSTAT] == 2.0;
  o.mirostat.version = s[kSlot_MIROSTAT] == 1.0 ? 1 : 2;
  // Any other value (only in a malformed block) reads as off.
  o.p_less.mode = s[kSlot_P_LESS] == 1.0   ? PLessMode::kPLess
                  : s[kSlot_P_LESS] == 2.0 ? PLessMode::kNorm
                                           : PLessMode::kOff;
  o.p_less.min_keep = min_keep;
  o.top_h.coefficient = static_cast<float>(s[kSlot_TOP_H]);
  o.top_h.min_keep = min_keep;
  o.adaptive_p.target = static_cast<float>(s[kSlot_ADAPTIVE_TARGET]);
  o.adaptive_p.decay = static_cast<float>(s[kSlot_ADAPTIVE_DECAY]);
  o.mirostat.tau = static_cast<float>(s[kSlot_MIROSTAT_TAU]);
  o.mirostat.eta = static_cast<float>(s[kSlot_MIROSTAT_ETA]);
  o.bregman_enabled = s[kSlot_BREGMAN] != 0.0;
  o.bregman.divergence =
      s[kSlot_BREGMAN] == 2.0 ? BregmanDivergence::kDual : BregmanDivergence::kPrimal;
  o.bregman.alpha = s[kSlot_BREGMAN_ALPHA];
  o.bregman.lambda = s[kSlot_BREGMAN_LAMBDA];
  o.bregman.fixed_k = Count(s[kSlot_BREGMAN_K]);
  o.bregman.k_min = s[kSlot_BREGMAN_K_MIN] >= 1.0 ? Count(s[kSlot_BREGMAN_K_MIN]) : 1;
  o.bregman.k_max = s[kSlot_BREGMAN_K_MAX] >= 1.0 ? Count(s[kSlot_BREGMAN_K_MAX]) : SIZE_MAX;
  o.logprobs = s[kSlot_LOGPROBS] != 0.0;
  o.return_distribution = s[kSlot_RETURN_DISTRIBUTION] != 0.0;
  o.sorted = s[kSlot_UNSORTED] == 0.0;  // zero (the default): sorted
  o.top_logprobs = I32(s[kSlot_TOP_LOGPROBS]);
  o.seed = U64(s[kSlot_SEED_HI], s[kSlot_SEED_LO]);
  o.step = U64(s[kSlot_STEP_HI], s[kSlot_STEP_LO]);
}

// The variable-length inputs: each a range of an aux array.
inline void ReadLists(const double* s, const int32_t* aux_i32, size_t aux_i32_len,
                      const float* aux_f32, size_t aux_f32_len, DecodeOptions& o) {
  size_t len = 0;
  size_t off = Range(s[kSlot_HISTORY_OFFSET], s[kSlot_HISTORY_LENGTH], aux_i32_len, &len);
  o.history = aux_i32 + off;
  o.history_len = len;
  // logit_bias: ids in the int32 aux, biases at the same offset in the float aux.
  off = Range(s[kSlot_BIAS_OFFSET], s[kSlot_BIAS_LENGTH],
              aux_i32_len < aux_f32_len ? aux_i32_len : aux_f32_len, &len);
  o.logit_bias.ids = aux_i32 + off;
  o.logit_bias.bias = aux_f32 + off;
  o.logit_bias.n = len;
  off = Range(s[kSlot_BANNED_OFFSET], s[kSlot_BANNED_LENGTH], aux_i32_len, &len);
  o.logit_bias.banned = aux_i32 + off;
  o.logit_bias.n_banned = len;
  off = Range(s[kSlot_ALLOWED_OFFSET], s[kSlot_ALLOWED_LENGTH], aux_i32_len, &len);
  o.logit_bias.allowed = aux_i32 + off;
  o.logit_bias.n_allowed = len;
  o.logit_bias.restrict_to_allowed = s[kSlot_RESTRICT_TO_ALLOWED] != 0.0;
  off = Range(s[kSlot_BREAKERS_OFFSET], s[kSlot_BREAKERS_LENGTH], aux_i32_len, &len);
  o.dry.breakers = aux_i32 + off;
  o.dry.n_breakers = len;
  // allowed_mask: its 32-bit words in the int32 aux (the bits as given).
  off = Range(s[kSlot_ALLOWED_MASK_OFFSET], s[kSlot_ALLOWED_MASK_LENGTH], aux_i32_len, &len);
  o.logit_bias.mask = reinterpret_cast<const uint32_t*>(aux_i32 + off);
  o.logit_bias.mask_words = len;
}

// The stage order; an id past the registry reads as kCount (skipped).
inline void ReadOrder(const double* s, DecodeOptions& o) {
  o.order_len = Count(s[kSlot_ORDER_LENGTH]);
  if (o.order_len > kMaxChainLength) o.order_len = kMaxChainLength;
  for (size_t i = 0; i < o.order_len; ++i) {
    const double v = s[kSlot_ORDER + i];
    o.order[i] = (v >= 0.0 && v < static_cast<double>(StageId::kCount))
                     ? static_cast<StageId>(static_cast<int>(v))
                     : StageId::kCount;
  }
}

}  // namespace slot_detail

// Reads the slot block into DecodeOptions. Numeric ranges are checked by
// Decoder::Validate; here integers are clamped into their C++ types and aux
// ranges into the aux arrays, so a malformed block can never cause undefined
// behaviour.
inline DecodeOptions OptionsFromSlots(const double* s, const int32_t* aux_i32,
                                      size_t aux_i32_len, const float* aux_f32,
                                      size_t aux_f32_len) {
  DecodeOptions o;
  slot_detail::ReadScalars(s, o);
  slot_detail::ReadLists(s, aux_i32, aux_i32_len, aux_f32, aux_f32_len, o);
  slot_detail::ReadOrder(s, o);
  return o;
}

}  // namespace bd
