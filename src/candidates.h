// The candidate set every stage reads and narrows (llama.cpp's
// llama_token_data_array, but structure-of-arrays and lazy). It is in one of
// two modes, told by `truncated`:
//
//  row  (!truncated): the candidates are the finite entries of the whole
//       logits row, never materialised.
//         valid: row, vocab, row_max / row_finite (after FinishEdits while
//         row_edited), block_max (while blocks_valid), own_row /
//         row_borrowed (MutableRow's copy).
//         ids / logits / size: a cache, the sorted top `size` of the row
//         (size == sorted; grown on demand by EnsureSorted's threshold
//         selection, no sort of the vocabulary).
//         probs: not valid.
//  list (truncated): the candidates are the explicit list ids / logits
//       (size entries); its first `sorted` are in final order (logit
//       descending, lower id first), the rest in any order.
//         row / vocab / row_max / row_finite / block_max still describe
//         the row the list came from, not the candidates.
//         probs (while probs_valid): explicit probabilities of the list,
//         ids-aligned, when a stage's law is not softmax(logits) (Bregman).
//
//  Both modes: temperature (the law's scale) and list_version (advanced by
//  every change of the candidates, so a DrawHint can tell it is current).
//  A large cut the draw reads straight from the row (DrawHint::kRowBand)
//  leaves the candidates in row mode with an empty cache; the band itself is
//  the hint's, and only the draw (or GatherRowBand) reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "draw_hint.h"

namespace bd {

struct Workspace;

struct Candidates {
  // Full row: logits of the whole vocabulary. Until a stage edits it, this
  // is the caller's row itself (borrowed, read only: no copy for the chains
  // that only read); the first edit copies it into own_row (MutableRow).
  float* row = nullptr;
  float* own_row = nullptr;  // the workspace's copy buffer
  bool row_borrowed = false;
  size_t vocab = 0;
  float row_max = 0.0f;   // max over the row (kept current by stages)
  size_t row_finite = 0;  // number of finite logits in the row
  bool row_edited = false;  // row_max / row_finite need FinishEdits
  // The row's block maxima (ScanRow, NumBlocks(vocab) of them), valid while
  // blocks_valid: threshold passes over the row read only the blocks that can
  // reach their threshold. Any edit of the row invalidates them until
  // FinishEdits rescans.
  float* block_max = nullptr;
  bool blocks_valid = false;

  bool truncated = false;
  // When !truncated: the sorted top `size` of the row (a cache).
  // When truncated: the candidate list; its first `sorted` entries are sorted.
  int32_t* ids = nullptr;
  float* logits = nullptr;
  size_t size = 0;
  size_t sorted = 0;

  // Temperature of the distribution: p_i is proportional to
  // exp((logit_i - max) / temperature). Kept as a factor (not applied to the
  // logits) so order is always decided on the original logits and every stage
  // after the temperature sees the tempered law.
  double temperature = 1.0;

  // Optional explicit probabilities of the list (after a stage like Bregman
  // whose output is not softmax(logits)); ids-aligned, valid when set.
  double* probs = nullptr;
  bool probs_valid = false;

  // Changes whenever the candidates change after a truncation or a stage's
  // edit: every helper below that edits, reorders or replaces them advances
  // it, and so must a stage that writes c.ids / c.logits / c.row itself.
  // A DrawHint records it: a hint whose version differs describes other
  // candidates (tests/native/test_decoder.cc checks each stage after top-p
  // against a decoder that never reuses a hint's exps).
  uint32_t list_version = 0;

  // Number of candidates (finite logits in the row, or the list size).
  size_t Count() const { return truncated ? size : row_finite; }
  // Number of candidates known in order: the list's sorted head, or on the
  // row the sorted prefix gathered so far (EnsureSorted).
  size_t SortedCount() const { return truncated ? sorted : size; }
};

// Whether a cut that keeps `kept` of a row of `vocab` entries, as a band of
// the row, is left as one (DrawHint::kRowBand) instead of gathered. A rule
// of the kept set alone: the draw over a band (the row's blocks, masked)
// differs in rounding from the draw over the same set gathered (the list's
// blocks), so whichever path found the set, the same set draws alike, also
// on a candidate row that holds it at the same ids (web/gpu).
inline bool KeepAsRowBand(size_t kept, size_t vocab) { return kept > vocab / 8; }

// Ensures the first min(m, Count()) candidates in order are available in
// c.ids / c.logits. On the row, the entries come from one gather at a
// threshold reached by at least that many: the m-th largest block maximum
// while m <= blocks, else a strided sample's estimate (checked by the
// gather's count), else a search by SIMD counting passes. Cost: O(V) SIMD
// passes plus a sort of the survivors it adds (a prefix already sorted is
// kept, so a growing prefix sorts each entry once).
void EnsureSorted(Candidates& c, size_t m, Workspace& ws);

// Leaves the candidates as the band lo <= logit <= hi of the row (count
// entries), weighed by the row-aligned exps measured from max at scale: the
// band's hint (DrawHint::kRowBand), for the draw that follows at once.
DrawHint TakeRowBand(Candidates& c, float lo, float hi, size_t count, const float* exps,
                     float max, float scale);

// Makes a band of the row (hint.kind == kRowBand) the candidate list it
// stands for: the band's entries in ascending ids, with the band's exps as
// the list's (hint becomes kListExps; one gather; for a sample() that also
// returns the distribution).
void GatherRowBand(Candidates& c, DrawHint& hint, Workspace& ws);

// Keeps only the first j (<= available sorted) candidates.
void TruncateToSorted(Candidates& c, size_t j);

// Makes the n entries a gather from the row left in ws.ids / ws.logits
// (ascending ids) the candidate list. Returns the hint of its exps (null:
// none) measured from max at scale (the weights the draw then uses).
DrawHint TakeRowGather(Candidates& c, size_t n, Workspace& ws, const float* exps, float max,
                       float scale);

// Keeps the list entries i (truncated sets only) for which keep(i) is true,
// in order; the sorted head keeps what is left of it. keep(i) sees the
// entry's original index, before any compaction. O(size).
// Branch-free (each entry is written, then kept or overwritten): a random
// keep pattern costs no mispredictions.
template <class Keep>
void CompactList(Candidates& c, Keep keep) {
  size_t kept = 0, kept_sorted = 0;
  ++c.list_version;
  for (size_t i = 0; i < c.size; ++i) {
    const bool k = keep(i);
    c.ids[kept] = c.ids[i];
    c.logits[kept] = c.logits[i];
    kept_sorted += k & (i < c.sorted);
    kept += k;
  }
  c.size = kept;
  c.sorted = kept_sorted;
  c.probs_valid = false;
}

// The row's block maxima when current, else null (for the threshold kernels).
inline const float* RowBlocks(const Candidates& c) {
  return c.blocks_valid ? c.block_max : nullptr;
}

// The want-th largest of the nb block maxima: at least `want` entries are
// >= it, and only the blocks whose maximum reaches it can hold them (NaN
// when fewer than `want` blocks hold a finite entry). scratch: nb floats.
float ThresholdFromBlocks(const float* block_max, size_t nb, size_t want, float* scratch);

// The full row, writable: copies a borrowed row into own_row first (once).
// Every in-place write to c.row goes through this.
float* MutableRow(Candidates& c);

// Number of candidates with logit >= t. Full row: the blocks that can reach
// t only.
size_t CountCandidatesAtLeast(const Candidates& c, float t);

// Keeps the candidates with logit >= t (order preserved). O(Count()).
// expect_few: few entries of a full row reach t (a cut by probability): the
// row is gathered with GatherAtLeastSparse (same result).
void KeepAtLeast(Candidates& c, float t, Workspace& ws, bool expect_few = false);

// Logit of token `id` if it is a candidate, else -inf. Full row: O(1);
// list: O(Count()).
float GetLogit(const Candidates& c, int32_t id);

// Sets the logit of candidate `id` (no-op when it is not a candidate; -inf
// removes it). For penalties, biases and bans. Full row: O(1), with the row's
// max and finite count refreshed by one SIMD pass in FinishEdits; list:
// O(Count()) per edit. Invalidates the sorted prefix and explicit probs.
void EditLogit(Candidates& c, int32_t id, float logit);

// Call once after a batch of EditLogit: refreshes the row statistics.
void FinishEdits(Candidates& c);

// Max logit among the candidates.
float CandidateMax(const Candidates& c);

// An additive logit edit (a bias, a penalty) in the units of the law the
// stage sees. llama.cpp's samplers placed after its temperature sampler add
// to logits already divided by T; here the logits stay untempered and T is a
// factor, so the amount is scaled by it: (l + a T) / T = l / T + a. At T = 1
// (the history stages in the default order run before the temperature) it is
// the amount itself, bit for bit.
inline float TemperedAmount(const Candidates& c, float amount) {
  return c.temperature == 1.0 ? amount : static_cast<float>(amount * c.temperature);
}

// Z = sum exp((l - max) / temperature) over the candidates, in double.
double CandidateExpSum(const Candidates& c, float max);

}  // namespace bd
