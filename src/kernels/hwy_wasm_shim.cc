// Highway's static-dispatch headers need hwy::Abort on wasm, where the Highway
// library itself is not linked (header-only use). Abort is reached only on a
// broken internal invariant, never on user input.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include <hwy/base.h>

namespace hwy {
HWY_NORETURN void HWY_FORMAT(3, 4) Abort(const char* file, int line, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "Abort at %s:%d: ", file, line);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::abort();
}
}  // namespace hwy
