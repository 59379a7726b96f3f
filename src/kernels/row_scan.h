// Row scans over one logits row: the fused first pass of every call (the
// finite maximum, NaN, the finite count and the per-block maxima, in one
// read of the row), and the index of the first maximum.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

struct RowScan {
  float max;      // largest non-NaN value; -inf when n == 0 or all are -inf
  bool has_nan;   // any NaN in the row
  size_t finite;  // entries with -FLT_MAX <= v (finite or +inf; not NaN/-inf)
};

// One SIMD pass. NaNs take part in nothing but has_nan. When block_max is
// non-null it receives the maximum of each kBlock-element block
// (NumBlocks(n) floats; NaN ignored, -inf for an all -inf block): threshold
// passes skip the blocks whose maximum is below their threshold.
RowScan ScanRow(const float* row, size_t n, float* block_max = nullptr);

// The packed-mask pass (XGrammar's token bitmask) fused with the row's scan:
// out[i] = row[i] where bit i % 32 of mask[i / 32] is set, else -inf, for i
// in [0, n); `masked` is ScanRow of out (max, finite count, the block maxima
// in block_max; has_nan false: a NaN of the row at an allowed id counts in
// the raw checks, not in out's), and the raw fields check the row itself as
// ScanRow does: any NaN, any +inf, its finite count (entries not NaN or
// -inf). One read of the row and the mask, one write of out; a block whose
// raw entries are not all finite is counted again. mask holds ceil(n / 32)
// words; bits past n are not read as tokens. out may be row (in place:
// then the raw fields are not the row's).
struct MaskedRowScan {
  RowScan masked;
  bool raw_has_nan;
  bool raw_has_pos_inf;
  size_t raw_finite;
};
MaskedRowScan MaskRow(const float* row, const uint32_t* mask, float* out, size_t n,
                      float* block_max);

// Lowest index i with row[i] == max (max must be a value of the row, e.g.
// ScanRow's). Stops at the first hit; with block_max (ScanRow's, for this
// row) it reads only the first block that holds max. Returns n when none.
size_t FindFirstEqual(const float* row, size_t n, float max,
                      const float* block_max = nullptr);

// One pass over a candidate list: whether its ids strictly ascend (the
// draw's canonical order for a gathered list) and its largest logit
// (-inf when n == 0; lists hold no NaN).
struct ListScan {
  bool ids_ascending;
  float max;
};
ListScan ScanList(const int32_t* ids, const float* logits, size_t n);

}  // namespace bd
