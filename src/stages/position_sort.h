// The stages' small sorts of positions by a key, ties broken by token id:
// the boundary band of top-p, the annulus of typical. One comparator type, so
// one std::sort in the library for all of them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

// A position j (< 2^32) with its token id (>= 0) above it: sorting these
// entries by (key[j], id) is sorting by key, ties by lower id first.
inline uint64_t PositionWithId(int32_t id, size_t j) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(id)) << 32) | static_cast<uint32_t>(j);
}
inline size_t PositionOf(uint64_t entry) { return static_cast<uint32_t>(entry); }

// Sorts entries[0..n) (made by PositionWithId) by key[position] ascending,
// equal keys by id ascending. A NaN key compares as neither less nor
// greater (std::sort's result is then unspecified: the stages have none).
void SortPositionsByKey(const double* key, uint64_t* entries, size_t n);

}  // namespace bd
