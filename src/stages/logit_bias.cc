#include "stages/logit_bias.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/row_scan.h"

namespace bd {
namespace {

inline bool InVocab(int32_t id, size_t vocab) {
  return id >= 0 && static_cast<size_t>(id) < vocab;
}

// Whether the packed mask allows token id (id in [0, 32 * words)).
inline bool MaskAllows(const uint32_t* mask, int32_t id) {
  const uint32_t t = static_cast<uint32_t>(id);
  return (mask[t / 32] >> (t % 32)) & 1u;
}

// The mask on the full row: one pass writes the masked row into the
// workspace's copy (from the caller's row while it is borrowed, else in
// place) and scans it, leaving the row state FinishEdits would.
void MaskFullRow(Candidates& c, const uint32_t* mask) {
  float* out = c.row_borrowed ? c.own_row : c.row;
  const RowScan scan = MaskRow(c.row, mask, out, c.vocab, c.block_max).masked;
  c.row = out;
  c.row_borrowed = false;
  c.row_max = scan.max;
  c.row_finite = scan.finite;
  c.blocks_valid = c.block_max != nullptr;
  c.row_edited = false;
  c.size = 0;  // the sorted-prefix cache is stale
  c.sorted = 0;
  ++c.list_version;
}

// A bias the core applies: finite, or -inf (a ban). NaN and +inf are skipped.
inline bool UsableBias(float b) { return b < INFINITY; }

// logit + bias, with an overflow to +inf saturated (a +inf logit would break
// every later stage's arithmetic).
inline float AddBias(float logit, float b) { return std::min(logit + b, FLT_MAX); }

// The list state: pos[id] is the list index of id when it points back at id
// (pos < size && ids[pos] == id), so stale scratch needs no initialisation.
inline float* ListSlot(const Candidates& c, const int32_t* pos, int32_t id) {
  const size_t i = static_cast<uint32_t>(pos[id]);
  return (i < c.size && c.ids[i] == id) ? &c.logits[i] : nullptr;
}

void ApplyToList(Candidates& c, const LogitBiasParams& p, Workspace& ws) {
  int32_t* pos = ws.stage_i32.data();
  for (size_t i = 0; i < c.size; ++i) pos[c.ids[i]] = static_cast<int32_t>(i);
  bool moved = false;    // a finite logit changed: the sorted prefix is stale
  bool removed = false;  // some logit became -inf: compact the list
  for (size_t i = 0; i < p.n; ++i) {
    if (!InVocab(p.ids[i], c.vocab) || !UsableBias(p.bias[i])) continue;
    float* l = ListSlot(c, pos, p.ids[i]);
    if (l == nullptr || *l == -INFINITY) continue;
    *l = AddBias(*l, TemperedAmount(c, p.bias[i]));
    moved = true;
    removed |= *l == -INFINITY;
  }
  for (size_t j = 0; j < p.n_banned; ++j) {
    if (!InVocab(p.banned[j], c.vocab)) continue;
    if (float* l = ListSlot(c, pos, p.banned[j])) {
      *l = -INFINITY;
      removed = true;
    }
  }
  if (p.restrict_to_allowed) {
    // Reuse the scratch as marks over the ids read below.
    int32_t* mark = pos;
    for (size_t i = 0; i < c.size; ++i) mark[c.ids[i]] = 0;
    for (size_t j = 0; j < p.n_allowed; ++j) {
      if (InVocab(p.allowed[j], c.vocab)) mark[p.allowed[j]] = 1;
    }
    for (size_t i = 0; i < c.size; ++i) {
      if (mark[c.ids[i]] == 0) {
        c.logits[i] = -INFINITY;
        removed = true;
      }
    }
  }
  if (p.mask_words > 0) {
    for (size_t i = 0; i < c.size; ++i) {
      if (!MaskAllows(p.mask, c.ids[i])) {
        c.logits[i] = -INFINITY;
        removed = true;
      }
    }
  }
  if (moved) c.sorted = 0;
  if (moved || removed) {
    c.probs_valid = false;
    ++c.list_version;
  }
  if (removed) KeepAtLeast(c, -FLT_MAX, ws);  // drops -inf, keeps the order
}

}  // namespace

void ApplyLogitBias(Candidates& c, const LogitBiasParams& p, Workspace& ws,
                    const StageContext& /*ctx*/) {
  if (p.n == 0 && p.n_banned == 0 && !p.restrict_to_allowed && p.mask_words == 0) return;
  if (c.truncated) {
    ApplyToList(c, p, ws);
    return;
  }
  for (size_t i = 0; i < p.n; ++i) {
    const int32_t id = p.ids[i];
    if (!InVocab(id, c.vocab) || !UsableBias(p.bias[i]) || c.row[id] == -INFINITY) continue;
    EditLogit(c, id, AddBias(c.row[id], TemperedAmount(c, p.bias[i])));
  }
  for (size_t j = 0; j < p.n_banned; ++j) EditLogit(c, p.banned[j], -INFINITY);
  if (p.restrict_to_allowed) {
    // The one O(vocab) pass: mark the allowed ids, remove the rest.
    int32_t* mark = ws.stage_i32.data();
    std::fill(mark, mark + c.vocab, 0);
    for (size_t j = 0; j < p.n_allowed; ++j) {
      if (InVocab(p.allowed[j], c.vocab)) mark[p.allowed[j]] = 1;
    }
    // EditLogit's row-state effect, batched: a call per removed token would
    // cost four times this whole pass at 128k tokens.
    float* row = MutableRow(c);
    for (size_t t = 0; t < c.vocab; ++t) {
      if (mark[t] == 0) row[t] = -INFINITY;
    }
    c.row_edited = true;  // FinishEdits refreshes row_max and row_finite
    c.size = 0;           // the sorted-prefix cache is stale
    c.sorted = 0;
  }
  // The mask's pass scans the row it leaves: it stands for FinishEdits'.
  if (p.mask_words > 0) MaskFullRow(c, p.mask);
  FinishEdits(c);
}

}  // namespace bd
