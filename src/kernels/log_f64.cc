#include "kernels/log_f64.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/log_f64.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/det_math.h"
#include "kernels/f64_vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace det_simd {
#include "kernels/det_math_generic-inl.h"  // per target, for F64
}  // namespace det_simd

// Vectors whose lanes are all normal, positive and finite take the SIMD path
// (LogF64 minus its special cases and denormal scaling: the same operations);
// anything else goes through LogF64 element by element.
void LogF64ToFloatImpl(const double* x, size_t n, float* out) {
  constexpr size_t N = F64::kLanes;
  HWY_ALIGN double logs[N];
  size_t i = 0;
  for (; i + N <= n; i += N) {
    bool normal = true;
    for (size_t j = 0; j < N; ++j) normal &= x[i + j] >= 0x1p-1022 && x[i + j] < HUGE_VAL;
    if (!normal) {
      for (size_t j = 0; j < N; ++j) out[i + j] = static_cast<float>(LogF64(x[i + j]));
      continue;
    }
    F64::V k;
    const F64::V m = F64::SplitNormal(F64::Load(x + i), &k);
    F64::Store(det_simd::LogFromSplitT<F64>(m, k), logs);
    for (size_t j = 0; j < N; ++j) out[i + j] = static_cast<float>(logs[j]);
  }
  for (; i < n; ++i) out[i] = static_cast<float>(LogF64(x[i]));
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(LogF64ToFloatImpl);

void LogF64ToFloat(const double* x, size_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(LogF64ToFloatImpl)(x, n, out);
}
}  // namespace bd
#endif  // HWY_ONCE
