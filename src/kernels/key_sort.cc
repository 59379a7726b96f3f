#include "kernels/key_sort.h"

#include <algorithm>
#include <cstring>
#include <functional>

#if defined(BD_NATIVE_VQSORT)
#include <atomic>
#include <chrono>
#include <vector>

#include "hwy/contrib/sort/vqsort.h"
#include "hwy/targets.h"
#endif

namespace bd {
namespace {

// Below this many keys a comparison sort beats the radix sort's histograms.
constexpr size_t kRadixMin = 2048;

#if defined(BD_NATIVE_VQSORT)
// From this many keys up to the 16-bit radix sort's range, natively, Highway's
// vectorised quicksort: on AVX-512 (the bench's keys) it is about 1.3x faster
// than std::sort at 850 keys and 1.6x faster than the 8-bit radix sort from
// 3400 to 16 000. Not in wasm: libhwy_contrib's sources are not built there.
// Keys are unique, so the order is the same.
constexpr size_t kVQSortMin = 512;

// Sorts with it where a SIMD target runs (on SCALAR it falls back to a heap
// sort, on EMU128 it runs emulated: std::sort and the radix sort are faster
// there). Decided at the first call (a later ForceKernelTarget changes only
// the speed: every sort gives the same order).
bool SortedByVQSort(uint64_t* keys, size_t n) {
  static const bool simd =
      (hwy::SupportedTargets() & ~static_cast<int64_t>(HWY_SCALAR | HWY_EMU128)) != 0;
  if (!simd) return false;
  thread_local const hwy::Sorter sorter;  // its buffer, once per thread
  sorter(keys, n, hwy::SortDescending());
  return true;
}
#endif

// The high halves of keys[0..n) sorted (ascending on ~key) by LSD passes of
// kBits-bit digits: all digit histograms in one pass; a digit every key
// shares needs no pass (nearby logits share their top bits). Stable, so
// equal high halves keep their order. count: (32 / kBits) * 2^kBits entries.
template <unsigned kBits>
void RadixOnHighHalves(uint64_t* keys, size_t n, uint64_t* scratch, uint32_t* count) {
  constexpr unsigned kDigitCount = 32 / kBits;
  constexpr uint32_t kBuckets = 1u << kBits;
  constexpr uint32_t kMask = kBuckets - 1;
  std::memset(count, 0, sizeof(uint32_t) * kDigitCount * kBuckets);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = ~keys[i] >> 32;
    for (unsigned d = 0; d < kDigitCount; ++d) ++count[d * kBuckets + ((k >> (kBits * d)) & kMask)];
  }
  uint64_t* from = keys;
  uint64_t* to = scratch;
  for (unsigned d = 0; d < kDigitCount; ++d) {
    const unsigned shift = 32 + kBits * d;
    uint32_t* offset = count + d * kBuckets;
    if (offset[(~from[0] >> shift) & kMask] == n) continue;  // one value: no-op
    uint32_t sum = 0;
    for (uint32_t j = 0; j < kBuckets; ++j) {
      const uint32_t c = offset[j];
      offset[j] = sum;
      sum += c;
    }
    // Stable scatter: equal digits keep the order of the previous passes.
    for (size_t i = 0; i < n; ++i) to[offset[(~from[i] >> shift) & kMask]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys) std::memcpy(keys, from, n * sizeof(uint64_t));
}

#if defined(BD_NATIVE_VQSORT)
// The whole row's sort (kWideRadixMin keys and up): the 16-bit radix sort or
// vqsort, whichever sorts this machine's keys faster. Which one that is
// depends on the CPU (the radix sort is the faster on some x86 VMs, vqsort on
// others), not on a decoder or a row, so it is measured once per process, on
// its first such set of keys (each sort timed twice on copies of them, the
// better of the two), and kept in this process-wide cache. Keys are unique,
// so the order is the same either way: only the speed depends on the timing.
enum : int { kWideUnknown = 0, kWideRadix = 1, kWideVQSort = 2 };
std::atomic<int> g_measured_wide_sort{kWideUnknown};

// Times vqsort against the 16-bit radix sort on copies of keys[0..n) and
// leaves keys sorted. Returns the faster (kWideRadix where no SIMD target
// runs vqsort; keys are then left unsorted for the caller's radix sort) and
// writes whether keys were sorted here.
int MeasureWideSort(uint64_t* keys, size_t n, uint64_t* scratch, uint32_t* wide_counts,
                    bool* sorted) {
  // An allocation of two copies: once per process in the product.
  using Clock = std::chrono::steady_clock;
  std::vector<uint64_t> a(n), b(n);
  double vq = 1e300, radix = 1e300;
  *sorted = false;
  for (int round = 0; round < 2; ++round) {
    std::memcpy(a.data(), keys, n * sizeof(uint64_t));
    std::memcpy(b.data(), keys, n * sizeof(uint64_t));
    const auto t0 = Clock::now();
    if (!SortedByVQSort(a.data(), n)) return kWideRadix;  // no SIMD target
    const auto t1 = Clock::now();
    RadixOnHighHalves<16>(b.data(), n, scratch, wide_counts);
    const auto t2 = Clock::now();
    vq = std::min(vq, std::chrono::duration<double>(t1 - t0).count());
    radix = std::min(radix, std::chrono::duration<double>(t2 - t1).count());
  }
  std::memcpy(keys, a.data(), n * sizeof(uint64_t));  // vqsort's: fully sorted
  *sorted = true;
  return vq < radix ? kWideVQSort : kWideRadix;
}

// The whole row's sort by the given choice. Returns whether keys were sorted
// here (else the caller's radix sort runs).
bool WideSortedByVQSort(uint64_t* keys, size_t n, uint64_t* scratch, uint32_t* wide_counts,
                        WideSort wide_sort) {
  bool sorted = false;
  switch (wide_sort) {
    case WideSort::kRadix:
      return false;
    case WideSort::kVQSort:
      return SortedByVQSort(keys, n);
    case WideSort::kMeasureAgain:
      MeasureWideSort(keys, n, scratch, wide_counts, &sorted);
      return sorted;
    case WideSort::kMeasured:
      break;
  }
  const int choice = g_measured_wide_sort.load(std::memory_order_relaxed);
  if (choice == kWideVQSort) return SortedByVQSort(keys, n);
  if (choice == kWideRadix) return false;
  g_measured_wide_sort.store(MeasureWideSort(keys, n, scratch, wide_counts, &sorted),
                             std::memory_order_relaxed);
  return sorted;
}
#endif

}  // namespace

void SortKeysDescending(uint64_t* keys, size_t n, uint64_t* scratch, uint32_t* wide_counts,
                        bool in_id_order, WideSort wide_sort) {
#if defined(BD_NATIVE_VQSORT)
  if (wide_counts && n >= kWideRadixMin) {
    if (WideSortedByVQSort(keys, n, scratch, wide_counts, wide_sort)) return;
  } else if (n >= kVQSortMin && SortedByVQSort(keys, n)) {
    return;
  }
#else
  (void)wide_sort;
#endif
  if (n < kRadixMin) {
    std::sort(keys, keys + n, std::greater<uint64_t>());
    return;
  }
  // Descending = ascending on ~key. Radix passes only over the high 32 bits
  // (a candidate key's logit; its low half is the id): equal high halves are
  // rare and short, and are finished by std::sort below. From kWideRadixMin
  // keys on, two passes of 16-bit digits instead of four of 8 bits (their
  // 2 x 65536 counts cost more than they save below it; above it the two
  // passes sort a whole row about a fifth faster, in wasm and natively).
  if (wide_counts && n >= kWideRadixMin) {
    RadixOnHighHalves<16>(keys, n, scratch, wide_counts);
  } else {
    uint32_t count[4 * 256];
    RadixOnHighHalves<8>(keys, n, scratch, count);
  }
  // Runs of equal high halves: order by the whole key (their low halves,
  // 0xFFFFFFFF - id, already descend when the ids came ascending).
  if (in_id_order) return;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && (keys[j] >> 32) == (keys[i] >> 32)) ++j;
    if (j - i > 1) std::sort(keys + i, keys + j, std::greater<uint64_t>());
    i = j;
  }
}

}  // namespace bd
