// The state a sampler carries from step to step: the accepted tokens (for
// penalties, DRY and no-repeat-n-gram), mirostat's mu and the draw counter.
// A value type: copying it clones the sampler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stages/mirostat.h"

namespace bd {

class SamplerState {
 public:
  // Keeps at most this many recent tokens (the longest window any stage can
  // use); reaching it drops the oldest half, so memory stays bounded.
  static constexpr size_t kMaxHistory = 8192;

  SamplerState() { history_.reserve(kMaxHistory); }
  // A clone keeps the full capacity, so it never allocates in steady state.
  SamplerState(const SamplerState& o) : mirostat_(o.mirostat_), step_(o.step_) {
    history_.reserve(kMaxHistory);
    history_ = o.history_;
  }
  SamplerState& operator=(const SamplerState& o) {
    history_ = o.history_;
    mirostat_ = o.mirostat_;
    step_ = o.step_;
    return *this;
  }

  void Accept(int32_t token) {
    if (history_.size() == kMaxHistory) {
      history_.erase(history_.begin(), history_.begin() + kMaxHistory / 2);
    }
    history_.push_back(token);
  }
  void Reset(const MirostatParams& mirostat) {
    history_.clear();
    MirostatReset(mirostat_, mirostat);
    step_ = 0;
  }

  const int32_t* history() const { return history_.data(); }
  size_t history_len() const { return history_.size(); }
  MirostatState& mirostat() { return mirostat_; }
  const MirostatState& mirostat() const { return mirostat_; }
  uint64_t step() const { return step_; }
  void AdvanceStep() { ++step_; }

 private:
  std::vector<int32_t> history_;
  MirostatState mirostat_;
  uint64_t step_ = 0;
};

}  // namespace bd
