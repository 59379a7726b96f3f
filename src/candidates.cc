#include "candidates.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>

#include "kernels/blocks.h"
#include "kernels/exp_f64.h"
#include "kernels/float_order.h"
#include "kernels/key_sort.h"
#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "kernels/order_keys.h"
#include "kernels/threshold.h"
#include "workspace.h"

namespace bd {
namespace {

// The radix sort's wide counts, where the workspace has them.
uint32_t* WideCounts(Workspace& ws) {
  return ws.radix_counts.empty() ? nullptr : ws.radix_counts.data();
}

// Puts the largest `m` of ids/logits[0..n) first, in order. O(n + m log m).
// in_id_order: ids[0..n) ascend (a gather's order; see SortKeysDescending).
void PartialSortByKey(int32_t* ids, float* logits, size_t n, size_t m, Workspace& ws,
                      bool in_id_order = false) {
  uint64_t* keys = ws.keys.data();
  PackKeys(ids, logits, n, keys);
  if (m < n) std::nth_element(keys, keys + m, keys + n, std::greater<uint64_t>());
  SortKeysDescending(keys, m, ws.sort_scratch.data(), WideCounts(ws), in_id_order && m == n);
  UnpackKeys(keys, n, ids, logits);
}

// Largest threshold t (found by widening then bisecting a gap below the max)
// with CountAtLeast(t) >= want, while keeping the count near `want` so the
// survivors' sort stays small. Invariant: count(t_lo) >= want > count(t_hi).
float ThresholdForTop(const float* row, size_t n, float max, size_t want,
                      size_t finite, const float* block_max) {
  if (want >= finite) return -FLT_MAX;
  float gap = std::max(1.0f, std::fabs(max)) * 1e-3f;
  float t_hi = max;  // nothing above max
  // count(max) may already reach `want` (ties at the top).
  size_t c = CountAtLeast(row, n, max, block_max);
  if (c >= want) return max;
  float t_lo;
  for (;;) {
    t_lo = max - gap;
    if (!(t_lo > -FLT_MAX) || gap > 1e30f) return -FLT_MAX;
    c = CountAtLeast(row, n, t_lo, block_max);
    if (c >= want) break;
    t_hi = t_lo;
    gap *= 8.0f;
  }
  const size_t enough = 4 * want + 256;
  for (int iter = 0; iter < 24 && c > enough; ++iter) {
    const float mid = t_lo + (t_hi - t_lo) * 0.5f;
    if (!(mid > t_lo && mid < t_hi)) break;  // float resolution reached
    const size_t cm = CountAtLeast(row, n, mid, block_max);
    if (cm >= want) {
      t_lo = mid;
      c = cm;
    } else {
      t_hi = mid;
    }
  }
  return t_lo;
}

// A threshold with, very likely, at least `want` entries >= it, from a fixed
// strided sample of the row (every stride-th entry, ~n / 32 of them): the
// sample's j-th largest, j its share of `want` plus a margin of a few
// standard deviations. One pass over 1/stride of the row instead of the
// dozen counting passes of ThresholdForTop; the caller checks the count the
// gather finds and falls back when it is short. NaN when the row is too small
// for a sample, or the sample cannot place it.
float ThresholdFromSample(const float* row, size_t n, size_t want, float* scratch) {
  // A thirty-second of the row, 1024 to 4096 entries. The selection over the
  // sample is scalar: 4096 of a 32 000 row (every 7th) made the two
  // selections of a k ~ 1000 Bregman decode 8 % of it in wasm, more than the
  // gathers they guide. The smaller sample's wider margin gathers more
  // (sorted once, and it can spare the next growth).
  constexpr size_t kMinRow = 16384, kMinSample = 1024, kMaxSample = 4096;
  if (n < kMinRow) return NAN;
  const size_t stride = n / std::clamp(n / 32, kMinSample, kMaxSample);
  size_t m = 0;
  for (size_t i = 0; i < n; i += stride) scratch[m++] = row[i];
  const double share = static_cast<double>(want) / static_cast<double>(stride);
  const size_t j = static_cast<size_t>(1.3 * share + 3.0 * std::sqrt(share) + 2.0);
  if (j >= m) return NAN;
  std::nth_element(scratch, scratch + j, scratch + m, std::greater<float>());
  const float t = scratch[j];
  return t > -FLT_MAX ? t : NAN;
}

}  // namespace

// The want-th largest block maximum: at least `want` entries (one per such
// block) are >= it, and only those blocks can hold entries >= it. One
// selection over V / kBlock floats replaces the threshold search's passes.
// NaN when fewer than `want` blocks hold a finite entry.
float ThresholdFromBlocks(const float* block_max, size_t nb, size_t want, float* scratch) {
  if (want == 0 || want > nb) return NAN;
  std::copy(block_max, block_max + nb, scratch);
  std::nth_element(scratch, scratch + (want - 1), scratch + nb, std::greater<float>());
  const float t = scratch[want - 1];
  return t >= -FLT_MAX ? t : NAN;
}

void EnsureSorted(Candidates& c, size_t m, Workspace& ws) {
  if (!c.truncated) {
    const size_t want_min = std::min(m, c.row_finite);
    if (c.size >= want_min) return;
    // Grow geometrically so repeated requests cost O(V) amortised passes.
    const size_t want =
        std::min(c.row_finite, std::max(want_min, std::max<size_t>(64, 2 * c.size)));
    const size_t have = c.size;
    if (want >= c.row_finite) {
      // The whole rest of the row: its keys straight from the row (no
      // gather, no compaction of ids and logits, no copy after the sort).
      // The sorted prefix holds the `have` largest keys: the rest are the
      // finite entries below its last key.
      const uint64_t last =
          have > 0 ? OrderKey(ws.logits[have - 1], ws.ids[have - 1]) : ~uint64_t{0};
      uint64_t* keys = ws.keys.data();
      const size_t n = RowKeysBelow(c.row, c.vocab, last, keys);
      SortKeysDescending(keys, n, ws.sort_scratch.data(), WideCounts(ws), /*in_id_order=*/true);
      UnpackKeys(keys, n, ws.ids.data() + have, ws.logits.data() + have);
      c.ids = ws.ids.data();
      c.logits = ws.logits.data();
      c.size = have + n;
      c.sorted = have + n;
      return;
    }
    const float* blocks = RowBlocks(c);
    float t = blocks ? ThresholdFromBlocks(blocks, NumBlocks(c.vocab), want, ws.block_scratch.data())
                     : NAN;
    int32_t* g_ids = ws.tmp_ids.data();
    float* g_logits = ws.tmp_logits.data();
    // More than one entry per block wanted: the sample's estimate (g_logits
    // is free until the gather), checked by the gather's count.
    bool sampled = false;
    if (t != t) {
      t = ThresholdFromSample(c.row, c.vocab, want, g_logits);
      sampled = t == t;
    }
    if (t != t) t = ThresholdForTop(c.row, c.vocab, c.row_max, want, c.row_finite, blocks);
    // A prefix of under an eighth of the row: a sparse gather.
    const bool few = 8 * want < c.vocab;
    size_t n = few ? GatherAtLeastSparse(c.row, c.vocab, t, g_ids, g_logits, blocks)
                   : GatherAtLeast(c.row, c.vocab, t, g_ids, g_logits, blocks);
    if (sampled && n < want) {  // the sample misled: the exact search
      t = ThresholdForTop(c.row, c.vocab, c.row_max, want, c.row_finite, blocks);
      n = GatherAtLeast(c.row, c.vocab, t, g_ids, g_logits, blocks);
    }
    // The prefix already sorted (the top c.size, in ws.ids / ws.logits)
    // stays: only what follows it in the order is selected and sorted, so
    // a growing prefix sorts each entry once.
    if (have > 0) n = CompactBelowCut(g_ids, g_logits, n, ws.logits[have - 1], ws.ids[have - 1]);
    // The gather holds every entry at or above t, so all n of them sorted
    // are the next n of the order: keep them. Selecting want - have first
    // (nth_element) costs more than sorting the ~1.3-2x the threshold's
    // margin gathers, and a longer prefix spares the next growth. Only a
    // gather far above want is cut down first.
    constexpr size_t kSortAllFactor = 3;
    const size_t take = n <= kSortAllFactor * (want - have) ? n : want - have;
    PartialSortByKey(g_ids, g_logits, n, take, ws, /*in_id_order=*/true);  // (gathers ascend)
    std::memcpy(ws.ids.data() + have, g_ids, take * sizeof(int32_t));
    std::memcpy(ws.logits.data() + have, g_logits, take * sizeof(float));
    c.ids = ws.ids.data();
    c.logits = ws.logits.data();
    c.size = have + take;
    c.sorted = have + take;
    return;
  }
  const size_t want = std::min(m, c.size);
  if (c.sorted >= want) return;
  ++c.list_version;  // reordered
  // The unsorted tail holds only entries below the sorted head.
  PartialSortByKey(c.ids + c.sorted, c.logits + c.sorted, c.size - c.sorted,
                   want - c.sorted, ws);
  c.sorted = want;
}

DrawHint TakeRowGather(Candidates& c, size_t n, Workspace& ws, const float* exps, float max,
                       float scale) {
  c.ids = ws.ids.data();
  c.logits = ws.logits.data();
  c.size = n;
  c.sorted = 0;
  c.truncated = true;
  c.probs_valid = false;
  ++c.list_version;
  if (exps == nullptr) return DrawHint{};
  return DrawHint::ListExps(exps, max, scale, c.list_version);
}

DrawHint TakeRowBand(Candidates& c, float lo, float hi, size_t count, const float* exps,
                     float max, float scale) {
  c.truncated = false;
  c.size = 0;
  c.sorted = 0;
  ++c.list_version;
  return DrawHint::RowBand(lo, hi, count, exps, max, scale, c.list_version);
}

void GatherRowBand(Candidates& c, DrawHint& hint, Workspace& ws) {
  float* list_exp = ws.stage_f32.data();
  const size_t n =
      GatherInRangeWith(c.row, c.vocab, hint.lo, std::nextafter(hint.hi, INFINITY),
                        ws.ids.data(), ws.logits.data(), RowBlocks(c), hint.exps, list_exp);
  hint = TakeRowGather(c, n, ws, list_exp, hint.max, hint.scale);
}

void TruncateToSorted(Candidates& c, size_t j) {
  if (j < c.size) c.probs_valid = false;
  if (j < c.size || !c.truncated) ++c.list_version;
  c.truncated = true;
  c.size = j;
  c.sorted = std::min(c.sorted, j);
}

void KeepAtLeast(Candidates& c, float t, Workspace& ws, bool expect_few) {
  ++c.list_version;
  if (!c.truncated) {
    c.size = expect_few
                 ? GatherAtLeastSparse(c.row, c.vocab, t, ws.ids.data(), ws.logits.data(), RowBlocks(c))
                 : GatherAtLeast(c.row, c.vocab, t, ws.ids.data(), ws.logits.data(), RowBlocks(c));
    c.ids = ws.ids.data();
    c.logits = ws.logits.data();
    c.sorted = 0;
    c.truncated = true;
    c.probs_valid = false;
    return;
  }
  // Reads logits[i] before any write to index i (writes only go to <= i).
  CompactList(c, [&c, t](size_t i) { return c.logits[i] >= t; });
}

float GetLogit(const Candidates& c, int32_t id) {
  if (!c.truncated) {
    return (id >= 0 && static_cast<size_t>(id) < c.vocab) ? c.row[id] : -INFINITY;
  }
  for (size_t i = 0; i < c.size; ++i) {
    if (c.ids[i] == id) return c.logits[i];
  }
  return -INFINITY;
}

float* MutableRow(Candidates& c) {
  if (c.row_borrowed) {
    std::memcpy(c.own_row, c.row, c.vocab * sizeof(float));
    c.row = c.own_row;
    c.row_borrowed = false;
  }
  c.blocks_valid = false;  // the caller is about to write
  return c.row;
}

size_t CountCandidatesAtLeast(const Candidates& c, float t) {
  return c.truncated ? CountAtLeast(c.logits, c.size, t)
                     : CountAtLeast(c.row, c.vocab, t, RowBlocks(c));
}

void EditLogit(Candidates& c, int32_t id, float logit) {
  ++c.list_version;
  if (!c.truncated) {
    if (id < 0 || static_cast<size_t>(id) >= c.vocab || c.row[id] == -INFINITY) return;
    MutableRow(c)[id] = logit;
    c.row_edited = true;
    c.size = 0;  // the sorted prefix cache is stale
    c.sorted = 0;
    return;
  }
  for (size_t i = 0; i < c.size; ++i) {
    if (c.ids[i] != id) continue;
    if (logit == -INFINITY) {
      // Removal keeps the others in order.
      for (size_t j = i + 1; j < c.size; ++j) {
        c.ids[j - 1] = c.ids[j];
        c.logits[j - 1] = c.logits[j];
      }
      --c.size;
      c.sorted = std::min(c.sorted, i);
    } else {
      c.logits[i] = logit;
      c.sorted = 0;  // the new value may belong anywhere in the order
    }
    c.probs_valid = false;
    return;
  }
}

void FinishEdits(Candidates& c) {
  if (!c.truncated && c.row_edited) {
    const RowScan scan = ScanRow(c.row, c.vocab, c.block_max);
    c.row_max = scan.max;
    c.row_finite = scan.finite;
    c.blocks_valid = c.block_max != nullptr;
    c.row_edited = false;
  }
}

float CandidateMax(const Candidates& c) {
  if (!c.truncated) return c.row_max;
  if (c.sorted > 0) return c.logits[0];
  float m = -INFINITY;
  for (size_t i = 0; i < c.size; ++i) m = std::max(m, c.logits[i]);
  return m;
}

double CandidateExpSum(const Candidates& c, float max) {
  const float scale = static_cast<float>(1.0 / c.temperature);
  if (!c.truncated) return ExpSum(c.row, c.vocab, max, scale);
  return ExpSum(c.logits, c.size, max, scale);
}

}  // namespace bd
