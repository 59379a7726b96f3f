#include "draw.h"

#include <algorithm>

#include "kernels/blocks.h"
#include "kernels/det_math.h"
#include "kernels/moments.h"
#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "walk_probs.h"

namespace bd {
namespace {

struct DrawPick {
  size_t index;
  float e;  // its unnormalised probability exp((v - max) * scale)
};

// The block holding target: the first whose block sum takes the running sum
// (block by block, in double) past it, or at the end (target within rounding
// of Z) the last with a positive sum. *cum: the sum of the blocks before it.
size_t BlockHolding(const float* block_sums, size_t nb, double target, double* cum) {
  double sum = 0.0, sum_before_last = 0.0;
  size_t b = 0, last = nb;
  for (; b < nb; ++b) {
    if (!(block_sums[b] > 0.0f)) continue;
    if (sum + block_sums[b] > target) break;
    last = b;
    sum_before_last = sum;
    sum += block_sums[b];
  }
  if (b == nb) {
    b = last;
    sum = sum_before_last;
  }
  *cum = sum;
  return b;
}

// The first index whose running sum of e (in id order; blocks by their block
// sums, then one block element by element, in double) exceeds target; at the
// end (target within rounding of Z), the last index with e > 0.
DrawPick WalkBlocks(const float* row, size_t n, float max, float scale,
                    const float* block_sums, double target, float* e) {
  double cum;
  const size_t begin = BlockHolding(block_sums, NumBlocks(n), target, &cum) * kBlock;
  const size_t len = std::min(kBlock, n - begin);
  ExpWrite(row + begin, len, max, scale, e);
  size_t pick = 0;
  for (size_t i = 0; i < len; ++i) {
    if (!(e[i] > 0.0f)) continue;
    pick = i;
    cum += e[i];
    if (cum > target) break;
  }
  return DrawPick{begin + pick, e[pick]};
}

// WalkBlocks over a band of the row: the entries with lo <= row[i] <= hi,
// weighed by e[i] (the others 0), block_sums from SumBandBlocks.
DrawPick WalkBand(const float* row, const float* e, size_t n, float lo, float hi,
                  const float* block_sums, double target) {
  double cum;
  const size_t begin = BlockHolding(block_sums, NumBlocks(n), target, &cum) * kBlock;
  const size_t end = std::min(begin + kBlock, n);
  size_t pick = begin;
  for (size_t i = begin; i < end; ++i) {
    if (!(row[i] >= lo && row[i] <= hi && e[i] > 0.0f)) continue;
    pick = i;
    cum += e[i];
    if (cum > target) break;
  }
  return DrawPick{pick, e[pick]};
}

// A band of the row left by its stage (top-p, typical: DrawHint::kRowBand):
// the row's draw with every entry outside the band weighing 0, i.e. the
// band's sums per row block (one pass over the row and the stage's exps),
// then one block.
Drawn DrawFromRowBand(const Candidates& c, const DrawHint& band, double u, Workspace& ws,
                      bool reuse) {
  const float* e = band.exps;
  if (!reuse) {
    ExpWrite(c.row, c.vocab, band.max, band.scale, ws.row_exp.data());
    e = ws.row_exp.data();
  }
  float* block_sums = ws.block_sums.data();
  const double z = SumBandBlocks(c.row, e, c.vocab, band.lo, band.hi, block_sums);
  const DrawPick d = WalkBand(c.row, e, c.vocab, band.lo, band.hi, block_sums, u * z);
  return Drawn{static_cast<int32_t>(d.index), band.count, static_cast<double>(d.e) / z,
               LogF64(static_cast<double>(d.e)) - LogF64(z), reuse, true};
}

// The whole row (nothing truncated): inverse CDF in id order, no sort. One
// exp pass leaves the block sums; walk them to the block holding u * Z, then
// walk that block's exps (recomputed bit-identically).
Drawn DrawFromRow(const Candidates& c, double u, Workspace& ws) {
  const float scale = static_cast<float>(1.0 / c.temperature);
  float* block_sums = ws.block_sums.data();
  const double z = ExpBlockSums(c.row, c.vocab, c.row_max, scale, block_sums);
  const DrawPick d = WalkBlocks(c.row, c.vocab, c.row_max, scale, block_sums, u * z,
                                ws.tmp_logits.data());
  return Drawn{static_cast<int32_t>(d.index), c.row_finite, static_cast<double>(d.e) / z,
               LogF64(static_cast<double>(d.e)) - LogF64(z), false, false};
}

// A truncated list, walked in a canonical order (sorted, or ascending ids),
// so every platform draws the same token whatever its nth_element; any other
// order (a partially sorted list) is sorted first.
Drawn DrawFromList(Candidates& c, const DrawHint& hint, double u, Workspace& ws,
                   bool reuse_stage_exps) {
  const float scale = static_cast<float>(1.0 / c.temperature);
  // A stage's exps of this very list (ascending ids) at this scale are its
  // weights, measured from the max the stage measured them from
  // (DrawHint::kListExps): summed as they are, or recomputed (the same bits).
  const bool measured =
      hint.kind == DrawHint::Kind::kListExps && !c.probs_valid && hint.scale == scale;
  const bool reuse = reuse_stage_exps && measured;
  // A sorted list (Bregman's q) needs no scan: it is canonical already.
  const bool sorted = c.sorted >= c.size;
  const ListScan scan = measured ? ListScan{true, hint.max}
                        : sorted ? ListScan{false, 0.0f}
                                 : ScanList(c.ids, c.logits, c.size);
  if (!scan.ids_ascending) EnsureSorted(c, c.size, ws);
  if (c.probs_valid) {
    // Explicit probabilities (Bregman's q): walked in float64.
    const size_t pick = WalkProbs(c.probs, c.size, u);
    return Drawn{c.ids[pick], c.size, c.probs[pick], LogF64(c.probs[pick]), false, false};
  }
  // softmax of the list: the row's draw (one SIMD exp pass with block sums,
  // then one block).
  const float max = scan.ids_ascending ? scan.max : CandidateMax(c);
  float* block_sums = ws.block_sums.data();
  const double z = reuse ? SumBlocks(hint.exps, c.size, block_sums)
                         : ExpBlockSums(c.logits, c.size, max, scale, block_sums);
  const DrawPick d = WalkBlocks(c.logits, c.size, max, scale, block_sums, u * z,
                                ws.tmp_logits.data());
  const double p = static_cast<double>(d.e) / z;
  return Drawn{c.ids[d.index], c.size, p, LogF64(p), reuse, false};
}

}  // namespace

Drawn DrawToken(Candidates& c, const DrawHint& hint, double u, Workspace& ws,
                bool reuse_stage_exps) {
  if (hint.kind == DrawHint::Kind::kRowBand) {
    return DrawFromRowBand(c, hint, u, ws, reuse_stage_exps);
  }
  if (!c.truncated) return DrawFromRow(c, u, ws);
  return DrawFromList(c, hint, u, ws, reuse_stage_exps);
}

}  // namespace bd
