// top-k, top-p and min-p: truncations defined on the sorted candidates. None
// sorts the vocabulary: each asks EnsureSorted for just the prefix it needs.
#include <algorithm>
#include <cmath>

#include "stages/stages.h"

namespace bd {

void ApplyTopK(Candidates& c, size_t k, Workspace& ws) {
  if (k == 0 || k >= c.Count()) return;
  EnsureSorted(c, k, ws);
  TruncateToSorted(c, k);
}

void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws) {
  const size_t n = c.Count();
  if (p >= 1.0 || n <= 1) return;
  const float max = CandidateMax(c);
  const double z = CandidateExpSum(c, max);
  const double target = p * (1.0 - 1e-6) * z;  // compare unnormalised mass
  double cum = 0.0;
  size_t i = 0;
  // Invariant: cum = mass of the first i sorted candidates; i < min_keep or
  // cum < target. Grow the sorted prefix 4x whenever the walk reaches its end.
  for (size_t want = 64;; want *= 4) {
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
