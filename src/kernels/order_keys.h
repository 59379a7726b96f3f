// The candidates' 64-bit order keys: high half the logit's order-preserving
// bits, low half the complement of the id, so a descending sort of the keys
// is the project's candidate order (logit descending, lower id first). Keys
// are unique, so every correct sort gives the same order (native and wasm
// agree). The scalar forms are the definition; the row kernels below build
// and unpack them a vector at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/float_order.h"

namespace bd {

inline uint64_t OrderKey(float logit, int32_t id) {
  // -0 and +0 tie (they are the same logit): one key for both, so the tie
  // goes to the lower id as every other tie does. The key keeps +0.
  // (Without branches: OrderedBits' xor, and +0 by a select the compiler
  // makes a conditional move.)
  const float folded = logit == 0.0f ? 0.0f : logit;
  return (static_cast<uint64_t>(OrderedBits(folded)) << 32) |
         (0xFFFFFFFFu - static_cast<uint32_t>(id));
}
inline float KeyLogit(uint64_t key) { return FromOrderedBits(static_cast<uint32_t>(key >> 32)); }
inline int32_t KeyId(uint64_t key) {
  return static_cast<int32_t>(0xFFFFFFFFu - static_cast<uint32_t>(key));
}

// The keys OrderKey(row[i], i) of the entries with row[i] >= -FLT_MAX (no
// -inf, no NaN) and a key below `last` (~0 for all of them), in index
// order, into keys; returns their count. keys needs room for the count plus
// kCompressSlack (threshold.h). The whole row's part of a full sort.
size_t RowKeysBelow(const float* row, size_t n, uint64_t last, uint64_t* keys);

// ids[i] = KeyId(keys[i]), logits[i] = KeyLogit(keys[i]) for i < n.
void UnpackKeys(const uint64_t* keys, size_t n, int32_t* ids, float* logits);

// keys[i] = OrderKey(logits[i], ids[i]) for i < n (UnpackKeys' inverse).
void PackKeys(const int32_t* ids, const float* logits, size_t n, uint64_t* keys);

}  // namespace bd
