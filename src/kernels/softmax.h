// Softmax building blocks over one logits row. Probabilities are
// exp((x - max) * scale) / Z; the sum Z is accumulated in float lanes and
// flushed to double every block so long rows keep ~1e-7 relative accuracy.
#pragma once

#include <cstddef>

namespace bd {

// sum_i exp((row[i] - max) * scale). -inf entries contribute 0. One SIMD pass.
// With scale = a / T this is also sum_i p_i^a * Z^a (used for Bregman's tail).
double ExpSum(const float* row, size_t n, float max, float scale);

// out[i] = exp((row[i] - max) * scale); returns their sum. One SIMD pass.
// `out` may alias `row`.
double ExpWrite(const float* row, size_t n, float max, float scale, float* out);

}  // namespace bd
