#include "kernels/floor.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/floor.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/max_pass-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

float PlainMaxImpl(const float* HWY_RESTRICT row, size_t n) {
  return MaxPass(hn::ScalableTag<float>(), row, n, row[0]);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(PlainMaxImpl);
float PlainMax(const float* row, size_t n) { return HWY_DYNAMIC_DISPATCH(PlainMaxImpl)(row, n); }
}  // namespace bd
#endif  // HWY_ONCE
