#include "kernels/target_name.h"

#include <cstdint>
#include <string>

#include <hwy/targets.h>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/target_name.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
// The target this function was compiled for: dispatching to it reports the
// target every other kernel runs on.
int64_t KernelTarget() { return HWY_TARGET; }
}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(KernelTarget);
const char* KernelTargetName() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(KernelTarget)());
}

#if defined(__EMSCRIPTEN__)
std::string KernelTargetsAvailable() { return KernelTargetName(); }
bool ForceKernelTarget(const std::string& name) { return name == KernelTargetName(); }
#else
std::string KernelTargetsAvailable() {
  std::string list;
  for (const int64_t t : hwy::SupportedAndGeneratedTargets()) {
    if (!list.empty()) list += ' ';
    list += hwy::TargetName(t);
  }
  return list;
}
bool ForceKernelTarget(const std::string& name) {
  hwy::SetSupportedTargetsForTest(0);
  for (const int64_t t : hwy::SupportedAndGeneratedTargets()) {
    if (name == hwy::TargetName(t)) {
      hwy::SetSupportedTargetsForTest(t);
      return true;
    }
  }
  return false;
}
#endif
}  // namespace bd
#endif  // HWY_ONCE
