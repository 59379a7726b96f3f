// The largest inputs a decoder accepts. Checked before anything is
// allocated, so an oversized row is a RangeError, never an out-of-memory
// abort (in wasm32 a failed allocation aborts the module).
#pragma once

#include <cstddef>

namespace bd {

// 2^22 tokens: 16x the largest vocabulary in use today (Gemma's 262144).
// A decoder's workspace holds about 76 bytes per token (docs: README
// "Limits"), so the largest row needs about 300 MB, within the wasm build's
// 2 GiB memory cap with room for the caller's own buffers.
constexpr size_t kMaxVocab = size_t{1} << 22;

// The largest temperature (and dynamic-temperature range). Beyond it the
// float passes and the float64 ones part ways: a logit gap above FLT_MAX
// overflows (v - max) in float to -inf (weight 0) where float64 still gives
// it e^{gap / T} > 0, so the draw, top-p and typical disagreed with decode()'s
// probabilities at T ~ 3e38. At T <= 1e30 that weight is
// below e^{-6e8}: 0 both ways. A temperature of 1e30 is already uniform.
constexpr float kMaxTemperature = 1e30f;

}  // namespace bd
