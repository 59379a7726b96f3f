// Which Highway target the kernels run on ("WASM", "AVX3", ...), for the
// module's self-report and the SIMD-in-the-wasm test.
#pragma once

namespace bd {
const char* KernelTargetName();
}  // namespace bd
