// Result of a core call. The core never throws or aborts on bad input: it
// returns a code and a message naming the offending option, which the JS
// layer turns into TypeError / RangeError.
#pragma once

#include <cstdint>

namespace bd {

enum class StatusCode : int32_t { kOk = 0, kTypeError = 1, kRangeError = 2 };

}  // namespace bd
