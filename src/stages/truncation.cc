// top-k, top-p and min-p: truncations defined on the sorted candidates. None
// sorts the vocabulary: top-k asks EnsureSorted for just the prefix it needs,
// top-p walks a small sorted prefix and otherwise bisects on a mass threshold,
// min-p is a threshold.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/moments.h"
#include "kernels/softmax.h"
#include "stages/stages.h"

namespace bd {

// Largest sorted prefix top-p walks before it switches to a threshold search.
constexpr size_t kTopPSortedPrefix = 256;

void ApplyTopK(Candidates& c, size_t k, Workspace& ws) {
  if (k == 0 || k >= c.Count()) return;
  EnsureSorted(c, k, ws);
  TruncateToSorted(c, k);
}

namespace {

// Monotone map between floats and uint32 (order-preserving), for bisection on
// the float line.
uint32_t OrderedBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
float FromOrderedBits(uint32_t k) {
  const uint32_t b = (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

// The nucleus is larger than a small sorted prefix: find its cut logit t* by
// bisection on the float order, one SIMD mass pass per step (at most 32),
// instead of sorting tens of thousands of survivors. The kept set is what the
// sorted walk would keep: every logit > t*, then the tokens tied at t*, lower
// ids first, until the mass reaches the target.
void TopPByThreshold(Candidates& c, double p, size_t min_keep, float max, Workspace& ws) {
  const float* v = c.truncated ? c.logits : c.row;
  const size_t count = c.truncated ? c.size : c.vocab;
  float* e = ws.stage_f32.data();
  const double z = ExpWrite(v, count, max, static_cast<float>(1.0 / c.temperature), e);
  const double target = p * (1.0 - 1e-6) * z;
  // Invariant: mass(v >= F(lo)) >= target > mass(v >= F(hi)).
  uint32_t lo = OrderedBits(-FLT_MAX), hi = OrderedBits(max) + 1;
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (BandSum(v, e, count, FromOrderedBits(mid), FLT_MAX).sum_w >= target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const float cut = FromOrderedBits(lo);
  const BandTotals above = BandSum(v, e, count, FromOrderedBits(lo + 1), FLT_MAX);
  const BandTotals at = BandSum(v, e, count, cut, cut);
  size_t ties = at.count;
  if (at.count > 1 && at.sum_w > 0.0) {
    const double each = at.sum_w / static_cast<double>(at.count);
    const double need = std::ceil((target - above.sum_w) / each);
    ties = static_cast<size_t>(std::min(std::max(need, 1.0), static_cast<double>(at.count)));
  }
  if (above.count + ties < min_keep) {
    ApplyTopK(c, min_keep, ws);
    return;
  }
  KeepAtLeast(c, cut, ws);
  if (ties == at.count) return;
  // Keep only the `ties` lowest ids among the tokens tied at the cut.
  int32_t* tie_ids = ws.stage_i32.data();
  size_t n_ties = 0;
  for (size_t i = 0; i < c.size; ++i) {
    if (c.logits[i] == cut) tie_ids[n_ties++] = c.ids[i];
  }
  std::nth_element(tie_ids, tie_ids + (ties - 1), tie_ids + n_ties);
  const int32_t last_id = tie_ids[ties - 1];
  CompactList(c, [&c, cut, last_id](size_t i) { return !(c.logits[i] == cut && c.ids[i] > last_id); });
}

}  // namespace

void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws) {
  const size_t n = c.Count();
  if (p >= 1.0 || n <= 1) return;
  const float max = CandidateMax(c);
  const double z = CandidateExpSum(c, max);
  const double target = p * (1.0 - 1e-6) * z;  // compare unnormalised mass
  double cum = 0.0;
  size_t i = 0;
  // Invariant: cum = mass of the first i sorted candidates; i < min_keep or
  // cum < target. The common, peaked case ends within a small sorted prefix.
  for (size_t want = 64; want <= kTopPSortedPrefix; want *= 4) {
    EnsureSorted(c, want, ws);
    const size_t avail = std::min(want, n);
    for (; i < avail; ++i) {
      cum += std::exp((static_cast<double>(c.logits[i]) - max) / c.temperature);
      if (cum >= target && i + 1 >= min_keep) {
        TruncateToSorted(c, i + 1);
        return;
      }
    }
    if (avail == n) return;  // the whole set is needed: nothing to cut
  }
  TopPByThreshold(c, p, min_keep, max, ws);
}

void ApplyMinP(Candidates& c, float min_p, size_t min_keep, Workspace& ws) {
  if (min_p <= 0.0f || c.Count() <= 1) return;
  // p_i / p_max = exp((l_i - max) / T) >= min_p.
  const float t = static_cast<float>(CandidateMax(c) + c.temperature * std::log(min_p));
  // Count first so that min_keep is honoured without a second gather.
  size_t kept = 0;
  if (!c.truncated) {
    KeepAtLeast(c, t, ws);
    kept = c.size;
    if (kept >= min_keep) return;
    // Fewer than min_keep survive: fall through to the top min_keep instead,
    // re-read from the row.
    c.truncated = false;
    c.size = 0;
    c.sorted = 0;
  } else {
    for (size_t i = 0; i < c.size; ++i) kept += c.logits[i] >= t ? 1 : 0;
    if (kept >= min_keep) {
      KeepAtLeast(c, t, ws);
      return;
    }
  }
  ApplyTopK(c, min_keep, ws);
}

void ApplyTemperature(Candidates& c, float t) {
  if (t == 1.0f) return;
  if (c.probs_valid) {
    // Explicit probabilities (after Bregman): their logits are log q.
    c.probs_valid = false;
  }
  c.temperature *= t;
}

}  // namespace bd
