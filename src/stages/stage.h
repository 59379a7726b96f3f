// What every stage of the chain sees. A stage is a function
//   void ApplyX(Candidates& c, const XParams& params, Workspace& ws,
//               const StageContext& ctx)
// over the one candidate set (llama.cpp's llama_sampler_i::apply), with its
// parameters as plain data. State that outlives a step (the token history,
// mirostat's mu, adaptive-p's EMA) lives in SamplerState, so a sampler is a value: copying it
// is clone(), SamplerState::Reset() is reset(), SamplerState::Accept() is
// accept().
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

// The stages a chain can run, by name. The default order is kDefaultOrder.
enum class StageId : uint8_t {
  kLogitBias,
  kPenalties,
  kDry,
  kNoRepeatNgram,
  kTopNSigma,
  kTopK,
  kTypical,
  kTopP,
  kMinP,
  kXtc,
  kEpsilon,
  kEta,
  kPLess,
  kTopH,
  kTemperature,
  kMirostat,
  kBregman,
  kAdaptiveP,
  kCount
};

// Room for every stage once (a custom order may also list one twice).
constexpr size_t kMaxChainLength = 24;
static_assert(kMaxChainLength >= static_cast<size_t>(StageId::kCount),
              "a custom order can list every stage");

// Read-only inputs of one step besides the candidates.
struct StageContext {
  const int32_t* history = nullptr;  // previous tokens, oldest first
  size_t history_len = 0;
  uint64_t seed = 0;  // the step's random stream (stochastic stages derive
  uint64_t step = 0;  // their own uniforms from it, salted by stage)
  // Whether the caller reports the Bregman objective (decode does; a sample
  // does not, and skips the pass over the row that prices the dropped tail).
  bool want_objective = true;
  // Whether the chain's survivors go straight to a draw (Sample, not
  // greedy); RunStages narrows it, per stage, to "and no
  // stage acting after this one", where a stage may leave its survivors as a
  // band of the row (DrawHint::kRowBand) instead of gathering them.
  bool draw_follows = false;
};

}  // namespace bd
