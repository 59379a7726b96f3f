// top-k, top-p and min-p: truncations defined on the sorted candidates. None
// sorts the vocabulary: top-k asks EnsureSorted for just the prefix it needs,
// top-p walks a small sorted prefix and otherwise bisects on a mass threshold,
// min-p is a threshold.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/histogram.h"
#include "kernels/moments.h"
#include "kernels/softmax.h"
#include "kernels/threshold.h"
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

// The nucleus is larger than a small sorted prefix: one histogram pass of
// mass per logit bucket (kMassBuckets buckets over [max - 104 T, max]) finds
// the bucket that holds the boundary; that bucket is the band [lo, hi). Only
// when it holds more than kTopPBand tokens (a dense plateau) does bisection
// on the logit value narrow it further, one SIMD mass pass per step; then
// only the band is sorted. The kept set is what
// the sorted walk would keep: every logit >= hi, then the band in order
// (logit descending, lower id first) until the mass reaches the target.
constexpr size_t kTopPBand = 256;

// e: exp((v - max) / T) of every candidate (ApplyTopP's pass), z their sum.
void TopPByThreshold(Candidates& c, double p, size_t min_keep, float max, const float* e,
                     double z, Workspace& ws) {
  const float* v = c.truncated ? c.logits : c.row;
  const size_t count = c.truncated ? c.size : c.vocab;
  const double target = p * (1.0 - 1e-6) * z;
  // Invariant: mass(v >= lo) >= target > mass(v >= hi) = above. Below
  // max - 104 T every e is exactly 0, so the boundary is never there.
  const float inv_width = static_cast<float>(kMassBuckets / (104.0 * c.temperature));
  double* mass = ws.hist_mass.data();
  uint32_t* in_bucket = ws.hist_count.data();
  MassHistogram(v, e, count, max, inv_width, mass, in_bucket);
  // The first bucket b with mass(buckets <= b) >= target; band = bucket b.
  double above = 0.0;
  size_t count_hi = 0, b = 0;
  while (b + 1 < kMassBuckets && !(above + mass[b] >= target)) {
    above += mass[b];
    count_hi += in_bucket[b];
    ++b;
  }
  const size_t count_lo = count_hi + in_bucket[b];
  float lo = b + 1 < kMassBuckets ? BucketThreshold(max, inv_width, static_cast<uint32_t>(b + 1))
                                  : -FLT_MAX;
  float hi = b > 0 ? BucketThreshold(max, inv_width, static_cast<uint32_t>(b))
                   : std::nextafter(max, INFINITY);
  size_t count_lo_mut = count_lo;
  while (count_lo_mut - count_hi > kTopPBand) {
    const float mid = lo + (hi - lo) * 0.5f;
    if (!(mid > lo && mid < hi)) break;  // adjacent floats: a plateau of ties
    const BandTotals m = BandSum(v, e, count, mid, FLT_MAX);
    if (m.sum_w >= target) {
      lo = mid;
      count_lo_mut = m.count;
    } else {
      hi = mid;
      count_hi = m.count;
      above = m.sum_w;
    }
  }
  if (count_lo_mut < min_keep) {  // the nucleus is smaller still: top min_keep
    ApplyTopK(c, min_keep, ws);
    return;
  }
  KeepAtLeast(c, lo, ws);
  // The band [lo, hi), sorted; walk it on from the mass above it.
  int32_t* band = ws.tmp_ids.data();  // indices into the list
  size_t n_band = 0;
  for (size_t i = 0; i < c.size; ++i) {
    if (c.logits[i] < hi) band[n_band++] = static_cast<int32_t>(i);
  }
  std::sort(band, band + n_band, [&c](int32_t a, int32_t b) {
    return c.logits[a] > c.logits[b] || (c.logits[a] == c.logits[b] && c.ids[a] < c.ids[b]);
  });
  size_t last = n_band;  // band entries [0, last) are kept
  double cum = above;
  for (size_t j = 0; j < n_band; ++j) {
    cum += ExpF64((static_cast<double>(c.logits[band[j]]) - max) / c.temperature);
    if (cum >= target && count_hi + j + 1 >= min_keep) {
      last = j + 1;
      break;
    }
  }
  if (last == n_band) return;
  const float cut_logit = c.logits[band[last - 1]];
  const int32_t cut_id = c.ids[band[last - 1]];
  CompactList(c, [&c, cut_logit, cut_id](size_t i) {
    return c.logits[i] > cut_logit || (c.logits[i] == cut_logit && c.ids[i] <= cut_id);
  });
}

}  // namespace

void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws) {
  const size_t n = c.Count();
  if (p >= 1.0 || n <= 1) return;
  const float max = CandidateMax(c);
  // One exp pass gives Z and, kept in stage_f32, the exps a large nucleus's
  // histogram needs (no second pass).
  const float* v = c.truncated ? c.logits : c.row;
  const size_t len = c.truncated ? c.size : c.vocab;
  float* e = ws.stage_f32.data();
  const bool large = n > kTopPSortedPrefix;
  const double z = large ? ExpWrite(v, len, max, static_cast<float>(1.0 / c.temperature), e)
                         : CandidateExpSum(c, max);
  const double target = p * (1.0 - 1e-6) * z;  // compare unnormalised mass
  double cum = 0.0;
  size_t i = 0;
  // Invariant: cum = mass of the first i sorted candidates; i < min_keep or
  // cum < target. The common, peaked case ends within a small sorted prefix.
  for (size_t want = 64; want <= kTopPSortedPrefix; want *= 4) {
    EnsureSorted(c, want, ws);
    const size_t avail = std::min(want, n);
    for (; i < avail; ++i) {
      cum += ExpF64((static_cast<double>(c.logits[i]) - max) / c.temperature);
      if (cum >= target && i + 1 >= min_keep) {
        TruncateToSorted(c, i + 1);
        return;
      }
    }
    if (avail == n) return;  // the whole set is needed: nothing to cut
  }
  TopPByThreshold(c, p, min_keep, max, e, z, ws);
}

void KeepLogitAtLeast(Candidates& c, float t, size_t min_keep, Workspace& ws) {
  const size_t n = c.Count();
  const size_t count = CountCandidatesAtLeast(c, t);
  if (count >= n) return;  // nothing to remove: a full row stays lazy
  if (count >= std::max<size_t>(min_keep, 1)) {
    KeepAtLeast(c, t, ws);
    return;
  }
  ApplyTopK(c, std::max<size_t>(min_keep, 1), ws);
}

void ApplyMinP(Candidates& c, float min_p, size_t min_keep, Workspace& ws) {
  if (min_p <= 0.0f || c.Count() <= 1) return;
  // p_i / p_max = exp((l_i - max) / T) >= min_p; log(min_p) in float, as
  // llama.cpp's logf.
  const float log_min_p = static_cast<float>(LogF64(min_p));
  KeepLogitAtLeast(c, static_cast<float>(CandidateMax(c) + c.temperature * log_min_p), min_keep,
                   ws);
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
