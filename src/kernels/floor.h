// The floor a row pass is measured against: the least work any decoder must
// do over a row (read it once and take its maximum), as a plain SIMD max with
// nothing fused in. Only the pass-count measurement uses it (tools/).
#pragma once

#include <cstddef>

namespace bd {

// max_i row[i] (n >= 1, no NaN expected). One SIMD pass.
float PlainMax(const float* row, size_t n);

}  // namespace bd
