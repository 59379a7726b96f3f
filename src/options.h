// Options of one decoding step, as plain data: one params struct per stage
// (defaults = off) plus the chain order and the random stream. Field names
// follow the JS contract (docs/api-contract.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "bregman/bregman.h"
#include "stages/dry.h"
#include "stages/dynamic_temperature.h"
#include "stages/epsilon_eta.h"
#include "stages/logit_bias.h"
#include "stages/mirostat.h"
#include "stages/adaptive_p.h"
#include "stages/no_repeat_ngram.h"
#include "stages/p_less.h"
#include "stages/penalties.h"
#include "stages/stage.h"
#include "stages/top_h.h"
#include "stages/top_n_sigma.h"
#include "stages/typical.h"
#include "stages/xtc.h"

namespace bd {

struct DecodeOptions {
  float temperature = 1.0f;  // 0: greedy
  DynamicTemperatureParams dynatemp;  // range > 0: entropy-based temperature
  int32_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  int32_t min_keep = 1;      // every truncation keeps at least this many
  TypicalParams typical;
  EpsilonParams epsilon;
  EtaParams eta;
  PLessParams p_less;
  TopHParams top_h;
  TopNSigmaParams top_n_sigma;
  XtcParams xtc;
  LogitBiasParams logit_bias;
  PenaltyParams penalties;
  DryParams dry;
  NoRepeatNgramParams no_repeat_ngram;
  bool mirostat_enabled = false;
  MirostatParams mirostat;
  bool bregman_enabled = false;
  BregmanParams bregman;
  AdaptivePParams adaptive_p;  // target < 0: off

  // The stages to run, in order; order_len == 0 means kDefaultOrder.
  StageId order[kMaxChainLength] = {};
  size_t order_len = 0;

  // Previous tokens (oldest first) for the stateless calls; a Sampler
  // supplies its own accepted history instead.
  const int32_t* history = nullptr;
  size_t history_len = 0;

  // Report log p(token) under softmax(logits) (OpenAI's `logprobs`), and
  // how many of the raw distribution's most probable tokens to report.
  bool logprobs = false;
  // sample(): also write the processed distribution (as Decode does).
  bool return_distribution = false;
  // decode() / return_distribution: survivors most probable first (the
  // contract). false skips the sort of a large nucleus: the same ids and
  // probabilities in an unspecified order.
  bool sorted = true;
  int32_t top_logprobs = 0;

  // Randomness: draw `step` of stream `seed`.
  uint64_t seed = 0;
  uint64_t step = 0;
};

// llama.cpp's default order for the samplers it has (logit bias, penalties,
// DRY, top-n-sigma, top-k, typical, top-p, min-p, XTC, temperature), with
// Hugging Face's no-repeat-n-gram beside the other history stages, epsilon and
// eta after min-p, then p-less and Top-H (the truncations after the paper),
// and the Bregman decoder last among the truncations: it decodes
// softmax(logits / T) of whatever survived. Mirostat runs after temperature;
// adaptive-p, a final selector in llama.cpp, is the last stage of all.
constexpr StageId kDefaultOrder[] = {
    StageId::kLogitBias, StageId::kPenalties, StageId::kDry,
    StageId::kNoRepeatNgram, StageId::kTopNSigma, StageId::kTopK,
    StageId::kTypical, StageId::kTopP, StageId::kMinP,
    StageId::kXtc, StageId::kEpsilon, StageId::kEta,
    StageId::kPLess, StageId::kTopH,
    StageId::kTemperature, StageId::kMirostat, StageId::kBregman,
    StageId::kAdaptiveP};

}  // namespace bd
