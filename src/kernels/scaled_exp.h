// float64 probabilities of candidate logits: out_i = e^((l_i - max) / t) / z
// with e^x exactly exp_f64.h's ExpF64 for |x| <= 700 (within ~2 ulp; a
// Cody-Waite reduction, half the work of the two-double ExpFullF64 it used
// before) and det_math's ExpFullF64 beyond (denormal p at a low temperature),
// as one SIMD pass, the same bits on every target. The Bregman stage converts
// its sorted prefix with it (up to V values per decode).
#pragma once

#include <cstddef>

namespace bd {

// out[0..n) (doubles; may not alias logits). t > 0, z > 0.
void ScaledExpF64(const float* logits, size_t n, float max, double t, double z, double* out);

}  // namespace bd
