// Options cross the JS/wasm boundary as one block of doubles in the wasm heap
// (one HEAPF64.set per call instead of an Embind object walk). The slot order
// is defined here only; the bindings export each index to JS by name.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "options.h"

namespace bd {

enum OptionSlot : int32_t {
  kSlotTemperature = 0,
  kSlotTopK,
  kSlotTopP,
  kSlotMinP,
  kSlotMinKeep,
  kSlotBregman,         // 0: off, 1: primal, 2: dual
  kSlotBregmanAlpha,
  kSlotBregmanLambda,
  kSlotBregmanK,        // 0: adaptive (lambda)
  kSlotBregmanKMin,
  kSlotBregmanKMax,     // 0: no upper clamp
  kSlotSeedHi,          // seed = hi * 2^32 + lo, each an integer in [0, 2^32)
  kSlotSeedLo,
  kSlotStepHi,
  kSlotStepLo,
  kNumOptionSlots
};

// Reads the slot block into DecodeOptions. Integer slots hold integers already
// checked by the JS layer; values are clamped into their C++ types here so a
// bad block can never cause undefined behaviour.
inline DecodeOptions OptionsFromSlots(const double* s) {
  auto to_i32 = [](double v) -> int32_t {
    if (!(v == v)) return -1;
    if (v > 2147483647.0) return 2147483647;
    if (v < -2147483648.0) return -2147483647 - 1;
    return static_cast<int32_t>(v);
  };
  auto to_u64 = [](double hi, double lo) -> uint64_t {
    return (static_cast<uint64_t>(hi) << 32) | static_cast<uint64_t>(lo);
  };
  DecodeOptions o;
  o.temperature = static_cast<float>(s[kSlotTemperature]);
  o.top_k = to_i32(s[kSlotTopK]);
  o.top_p = static_cast<float>(s[kSlotTopP]);
  o.min_p = static_cast<float>(s[kSlotMinP]);
  o.min_keep = to_i32(s[kSlotMinKeep]);
  o.bregman_enabled = s[kSlotBregman] != 0.0;
  o.bregman.divergence =
      s[kSlotBregman] == 2.0 ? BregmanDivergence::kDual : BregmanDivergence::kPrimal;
  o.bregman.alpha = s[kSlotBregmanAlpha];
  o.bregman.lambda = s[kSlotBregmanLambda];
  const double fixed_k = s[kSlotBregmanK];
  o.bregman.fixed_k = fixed_k >= 1.0 ? static_cast<size_t>(std::fmin(fixed_k, 4294967295.0)) : 0;
  o.bregman.k_min = s[kSlotBregmanKMin] >= 1.0
                        ? static_cast<size_t>(std::fmin(s[kSlotBregmanKMin], 4294967295.0))
                        : 1;
  o.bregman.k_max = s[kSlotBregmanKMax] >= 1.0
                        ? static_cast<size_t>(std::fmin(s[kSlotBregmanKMax], 4294967295.0))
                        : SIZE_MAX;
  o.seed = to_u64(s[kSlotSeedHi], s[kSlotSeedLo]);
  o.step = to_u64(s[kSlotStepHi], s[kSlotStepLo]);
  return o;
}

}  // namespace bd
