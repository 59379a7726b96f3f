// Threshold selection: count and gather the entries of a row at or above a
// threshold. The building block of every sort-free truncation (top-k via a
// threshold search, min-p, epsilon, ...): O(n) SIMD passes, no sort.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

// Number of i with row[i] >= t (NaN and entries below t are not counted).
size_t CountAtLeast(const float* row, size_t n, float t);

// Writes the ids (ascending) and values of the entries >= t, compacted, and
// returns their count. ids_out/vals_out need room for the count plus
// kCompressSlack entries (the SIMD compress-store may write a full vector).
size_t GatherAtLeast(const float* row, size_t n, float t, int32_t* ids_out,
                     float* vals_out);

constexpr size_t kCompressSlack = 64;

}  // namespace bd
