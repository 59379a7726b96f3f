// Row scans over one logits row: the finite maximum (and whether any NaN is
// present), and the index of the first maximum.
#pragma once

#include <cstddef>

namespace bd {

struct RowScan {
  float max;     // largest non-NaN value; -inf when n == 0 or all are -inf
  bool has_nan;  // any NaN in the row
};

// One SIMD pass. NaNs do not take part in the maximum.
RowScan ScanRow(const float* row, size_t n);

// Lowest index i with row[i] == max (max must be a value of the row, e.g.
// ScanRow's). Stops at the first hit. Returns n when there is none.
size_t FindFirstEqual(const float* row, size_t n, float max);

}  // namespace bd
