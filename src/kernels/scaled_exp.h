// float64 probabilities of candidate logits: out_i = e^((l_i - max) / t) / z
// with e^x exactly det_math's ExpFullF64 (same bits), as one SIMD pass. The
// Bregman stage converts its sorted prefix with it (up to V values per decode).
#pragma once

#include <cstddef>

namespace bd {

// out[0..n) (doubles; may not alias logits). t > 0, z > 0.
void ScaledExpF64(const float* logits, size_t n, float max, double t, double z, double* out);

}  // namespace bd
