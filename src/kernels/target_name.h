// Which Highway target the kernels run on ("WASM", "AVX3", ...), for the
// module's self-report and the SIMD-in-the-wasm test.
#pragma once

#include <string>

namespace bd {
const char* KernelTargetName();

// Native builds (every attainable x86 target is compiled in): the targets
// this CPU can run, best first, space separated ("AVX3 AVX2 SSE4 SSSE3
// SCALAR"); and pins the kernels to one of them by name (false if unknown),
// for the cross-target tests and tools. On wasm: "WASM" / only "WASM".
std::string KernelTargetsAvailable();
bool ForceKernelTarget(const std::string& name);
}  // namespace bd
