#include "kernels/key_sort.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace bd {
namespace {

// Below this many keys a comparison sort beats the radix sort's histograms.
constexpr size_t kRadixMin = 2048;
constexpr size_t kDigits = 4;  // 8-bit digits of the high 32 bits (4 KiB of counts)

}  // namespace

void SortKeysDescending(uint64_t* keys, size_t n, uint64_t* scratch) {
  if (n < kRadixMin) {
    std::sort(keys, keys + n, std::greater<uint64_t>());
    return;
  }
  // Descending = ascending on ~key. Radix passes only over the high 32 bits
  // (a candidate key's logit; its low half is the id): equal high halves are
  // rare and short, and are finished by std::sort below. All digit
  // histograms in one pass; a digit every key shares needs no pass (nearby
  // logits share their top bits).
  uint32_t count[kDigits][256];
  std::memset(count, 0, sizeof(count));
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = ~keys[i] >> 32;
    for (size_t d = 0; d < kDigits; ++d) ++count[d][(k >> (8 * d)) & 0xFF];
  }
  uint64_t* from = keys;
  uint64_t* to = scratch;
  for (size_t d = 0; d < kDigits; ++d) {
    const unsigned shift = static_cast<unsigned>(32 + 8 * d);
    if (count[d][(~from[0] >> shift) & 0xFF] == n) continue;  // one value: no-op
    uint32_t offset[256];
    uint32_t sum = 0;
    for (size_t j = 0; j < 256; ++j) {
      offset[j] = sum;
      sum += count[d][j];
    }
    // Stable scatter: equal digits keep the order of the previous passes.
    for (size_t i = 0; i < n; ++i) to[offset[(~from[i] >> shift) & 0xFF]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys) std::memcpy(keys, from, n * sizeof(uint64_t));
  // Runs of equal high halves: order by the whole key.
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && (keys[j] >> 32) == (keys[i] >> 32)) ++j;
    if (j - i > 1) std::sort(keys + i, keys + j, std::greater<uint64_t>());
    i = j;
  }
}

}  // namespace bd
