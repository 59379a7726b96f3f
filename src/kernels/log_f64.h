// Natural logs of many doubles, rounded to float: out_i = (float) LogF64(x_i)
// with det_math's LogF64 bits, as one SIMD pass (the Bregman stage turns its
// k renormalised probabilities back into logits with it; k reaches V).
#pragma once

#include <cstddef>

namespace bd {

// out[0..n) (floats; may not alias x).
void LogF64ToFloat(const double* x, size_t n, float* out);

}  // namespace bd
