// Threshold selection: count and gather the entries of a row at or above a
// threshold. The building block of every sort-free truncation (top-k via a
// threshold search, min-p, epsilon, ...): O(n) SIMD passes, no sort. With the
// row's block maxima (ScanRow) a pass reads only the blocks that can hold an
// entry >= t: a min-p or top-k cut near the maximum touches a few blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/moments.h"

namespace bd {

// Number of i with row[i] >= t (NaN and entries below t are not counted).
// block_max: ScanRow's block maxima of this row, or null (read every block).
size_t CountAtLeast(const float* row, size_t n, float t, const float* block_max = nullptr);

// Writes the ids (ascending) and values of the entries >= t, compacted, and
// returns their count. ids_out/vals_out need room for the count plus
// kCompressSlack entries (the SIMD compress-store may write a full vector).
size_t GatherAtLeast(const float* row, size_t n, float t, int32_t* ids_out,
                     float* vals_out, const float* block_max = nullptr);

// GatherAtLeast that also carries a parallel array: w_out[j] = w[i] for the
// j-th entry gathered (the same slack rule for w_out).
size_t GatherAtLeastWith(const float* row, size_t n, float t, int32_t* ids_out, float* vals_out,
                         const float* block_max, const float* w, float* w_out);

// GatherAtLeast for a threshold few entries reach (a min-p set, a sorted
// prefix's candidates): the same output; in wasm it tests 32 entries at a
// time and takes a sparse group's few entries by index (slower than
// GatherAtLeast on a dense set).
size_t GatherAtLeastSparse(const float* row, size_t n, float t, int32_t* ids_out,
                           float* vals_out, const float* block_max = nullptr);

// GatherAtLeastWith for a threshold few entries reach (as GatherAtLeastSparse).
size_t GatherAtLeastWithSparse(const float* row, size_t n, float t, int32_t* ids_out,
                               float* vals_out, const float* block_max, const float* w,
                               float* w_out);

// The entries with lo <= row[i] < hi, as GatherAtLeast writes them. Made
// for narrow bands (few entries kept): in wasm it tests 32 entries at a time
// and takes a sparse group's few entries by index.
size_t GatherInRange(const float* row, size_t n, float lo, float hi, int32_t* ids_out,
                     float* vals_out, const float* block_max = nullptr);

// The entries with lo <= row[i] < hi and their w, as GatherAtLeastWith
// writes them, for a wide band (a typical set: most of the row may be kept).
size_t GatherInRangeWith(const float* row, size_t n, float lo, float hi, int32_t* ids_out,
                         float* vals_out, const float* block_max, const float* w, float* w_out);

// GatherInRangeWith for a narrow band (GatherInRange's sparse groups in
// wasm): a typical band from the centre with its weights.
size_t GatherInRangeWithSparse(const float* row, size_t n, float lo, float hi, int32_t* ids_out,
                               float* vals_out, const float* block_max, const float* w,
                               float* w_out);

// One pass for a ring of a band: returns BandSum(row, w, n, hole_lo,
// hole_hi) (the same bits: the count and weight of the entries inside the
// hole) and gathers the entries with lo <= row[i] <= hi outside the hole,
// as GatherAtLeast writes them (ascending ids, the same slack rule), with
// their w into w_out when it is not null; *gathered receives their count.
BandTotals BandSumGatherRing(const float* row, const float* w, size_t n, float lo, float hi,
                             float hole_lo, float hole_hi, int32_t* ids_out, float* vals_out,
                             float* w_out, size_t* gathered);

// ExpWrite(row, n, max, scale, e_out) and BandSumGatherRing over the exps it
// writes, for the ring lo <= row[i] < hole_lo below the hole [hole_lo, +inf)
// (top-p's: a nucleus has no upper edge), in one pass: returns the exp
// pass's sum and writes its exps (ExpWrite's bits), *hole receives
// BandSum(row, e_out, n, hole_lo, +inf) (its bits), and the ring's entries
// are gathered as BandSumGatherRing gathers them, their exps into w_out.
// lo must be finite (-inf entries and the pad are never in the ring).
double ExpWriteGatherRing(const float* row, size_t n, float max, float scale, float* e_out,
                          float lo, float hole_lo, int32_t* ids_out, float* vals_out,
                          float* w_out, size_t* gathered, BandTotals* hole);

// Keeps, in place and in order, the entries i of a list with vals[i] > cut,
// or vals[i] == cut and ids[i] <= cut_id (a walk in sorted order that
// stopped at (cut, cut_id)), moving w[i] with them when w is not null;
// returns how many. NaN vals are dropped. Writes stay within [0, n).
size_t CompactAboveCut(int32_t* ids, float* vals, float* w, size_t n, float cut, int32_t cut_id);

// The complement, in place and in order: the entries with vals[i] < cut, or
// vals[i] == cut and ids[i] > cut_id (those after the cut in the order, as
// OrderKey ranks them); NaN vals are dropped.
size_t CompactBelowCut(int32_t* ids, float* vals, size_t n, float cut, int32_t cut_id);

constexpr size_t kCompressSlack = 64;

}  // namespace bd
