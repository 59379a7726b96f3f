// The largest inputs a decoder accepts. Checked before anything is
// allocated, so an oversized row is a RangeError, never an out-of-memory
// abort (in wasm32 a failed allocation aborts the module).
#pragma once

#include <cstddef>

namespace bd {

// 2^22 tokens: 16x the largest vocabulary in use today (Gemma's 262144).
// A decoder's workspace holds about 76 bytes per token (docs: README
// "Limits"), so the largest row needs about 300 MB, within the wasm build's
// 2 GiB memory cap with room for the caller's own buffers.
constexpr size_t kMaxVocab = size_t{1} << 22;

}  // namespace bd
