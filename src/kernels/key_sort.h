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

// Sorts keys[0..n) descending. scratch: room for n keys (overwritten).
// wide_counts: null, or room for kWideRadixCounts (overwritten).
// in_id_order: the keys come in ascending id order (a gather's or the row's
// order: equal logits then already lie in their sorted order, lower id
// first), so the radix sort, stable, leaves nothing for the pass that
// finishes runs of equal high halves (it was a fifth of a whole row's sort
// on the bench's rows, natively).
// Natively (libhwy_contrib's vqsort built in) a sort given wide_counts of
// kWideRadixMin keys or more is the 16-bit radix sort or vqsort, whichever
// sorted the process's first such set faster (key_sort.cc); the same order.
void SortKeysDescending(uint64_t* keys, size_t n, uint64_t* scratch,
                        uint32_t* wide_counts = nullptr, bool in_id_order = false);

// Tests only: the whole-row sort natively, 0 to let the next one's timing
// decide again, 1 the radix sort, 2 vqsort; returns the choice in force
// before (0: not decided yet). No-op returning 1 where vqsort is not built
// (wasm).
int SetWideSortForTesting(int which);

}  // namespace bd
