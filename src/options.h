// Options of one decoding step, as plain data. Field names follow the JS
// contract (shared/spec/api.md): snake_case there, the same words here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bregman/bregman.h"

namespace bd {

struct DecodeOptions {
  float temperature = 1.0f;  // 0: greedy
  int32_t top_k = 0;         // 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  int32_t min_keep = 1;
  bool bregman_enabled = false;
  BregmanParams bregman;
  // Randomness: draw `step` of stream `seed`.
  uint64_t seed = 0;
  uint64_t step = 0;
};

}  // namespace bd
