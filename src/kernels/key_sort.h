// Sorting of unique 64-bit keys in descending order (the candidates' order
// keys, candidates.cc): for large sets an LSD radix sort on the high 32 bits
// (the logit) with runs of equal high halves finished by std::sort, for small
// ones std::sort. Keys are unique, so every correct sort gives the same order: the
// radix sort only makes full sorts of large nuclei (typical's draw, decode's
// sorted output) linear instead of n log n with mispredicted branches.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

// From this many keys on a sort given wide_counts takes 16-bit digits.
constexpr size_t kWideRadixMin = 65536;
constexpr size_t kWideRadixCounts = 2 * 65536;

// Which sort a whole row's sort (wide_counts given, kWideRadixMin keys or
// more) takes natively, where libhwy_contrib's vqsort is built in. Every
// choice gives the same order (the keys are unique); only the speed differs.
// Where vqsort is not built (wasm) every choice is the 16-bit radix sort.
enum class WideSort : uint8_t {
  // The product's: the faster of the two on this machine, measured once per
  // process by timing both on the first such set of keys (key_sort.cc).
  kMeasured,
  kRadix,   // the 16-bit radix sort
  kVQSort,  // vqsort (the radix sort where no SIMD target runs)
  // Times both on these keys now, as the first kMeasured call does, without
  // touching the process's measured choice.
  kMeasureAgain,
};

// Sorts keys[0..n) descending. scratch: room for n keys (overwritten).
// wide_counts: null, or room for kWideRadixCounts (overwritten).
// in_id_order: the keys come in ascending id order (a gather's or the row's
// order: equal logits then already lie in their sorted order, lower id
// first), so the radix sort, stable, leaves nothing for the pass that
// finishes runs of equal high halves.
// wide_sort: which sort a sort given wide_counts of kWideRadixMin keys or
// more takes (WideSort).
void SortKeysDescending(uint64_t* keys, size_t n, uint64_t* scratch,
                        uint32_t* wide_counts = nullptr, bool in_id_order = false,
                        WideSort wide_sort = WideSort::kMeasured);

}  // namespace bd
