// The state a sampler carries from step to step: the accepted tokens (for
// penalties, DRY and no-repeat-n-gram), mirostat's mu, adaptive-p's EMA and
// the draw counter.
// A value type: copying it clones the sampler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stages/adaptive_p.h"
#include "stages/mirostat.h"

namespace bd {

class SamplerState {
 public:
  // The stages see the latest min(accepted, kMaxHistory) tokens, always (a
  // window of up to kMaxHistory reads what the stateless call with the whole
  // history reads). The buffer holds up to twice that and, when full, drops
  // the oldest kMaxHistory (one move per kMaxHistory accepts): memory stays
  // bounded. (Dropping half of a kMaxHistory buffer left windows above
  // kMaxHistory / 2 short of tokens right after each drop.)
  static constexpr size_t kMaxHistory = 8192;

  SamplerState() { history_.reserve(2 * kMaxHistory); }
  // A clone keeps the full capacity, so it never allocates in steady state.
  SamplerState(const SamplerState& o)
      : mirostat_(o.mirostat_), adaptive_p_(o.adaptive_p_), step_(o.step_),
        max_token_(o.max_token_) {
    history_.reserve(2 * kMaxHistory);
    history_ = o.history_;
  }
  SamplerState& operator=(const SamplerState& o) {
    history_ = o.history_;
    mirostat_ = o.mirostat_;
    adaptive_p_ = o.adaptive_p_;
    step_ = o.step_;
    max_token_ = o.max_token_;
    return *this;
  }

  void Accept(int32_t token) {
    if (history_.size() == 2 * kMaxHistory) {
      history_.erase(history_.begin(), history_.begin() + kMaxHistory);
    }
    history_.push_back(token);
    // As unsigned: a negative id counts as out of every vocabulary.
    const size_t id = static_cast<size_t>(static_cast<uint32_t>(token));
    if (id > max_token_) max_token_ = id;
  }
  void Reset(const MirostatParams& mirostat,
             const AdaptivePParams& adaptive_p = AdaptivePParams{}) {
    history_.clear();
    max_token_ = 0;
    MirostatReset(mirostat_, mirostat);
    AdaptivePReset(adaptive_p_, adaptive_p);
    step_ = 0;
  }

  // The latest history_len() accepted tokens, oldest first.
  const int32_t* history() const { return history_.data() + (history_.size() - history_len()); }
  size_t history_len() const { return history_.size() < kMaxHistory ? history_.size() : kMaxHistory; }
  MirostatState& mirostat() { return mirostat_; }
  const MirostatState& mirostat() const { return mirostat_; }
  AdaptivePState& adaptive_p() { return adaptive_p_; }
  const AdaptivePState& adaptive_p() const { return adaptive_p_; }
  uint64_t step() const { return step_; }
  // The largest id accepted since the last Reset (ids dropped from a full
  // history still count: a sampler that saw an id is tied to a vocabulary
  // that has it). Meaningful when history_len() > 0.
  size_t max_token() const { return max_token_; }
  void AdvanceStep() { ++step_; }

 private:
  std::vector<int32_t> history_;
  MirostatState mirostat_;
  AdaptivePState adaptive_p_;
  uint64_t step_ = 0;
  size_t max_token_ = 0;
};

}  // namespace bd
