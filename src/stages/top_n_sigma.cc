// Top-n-sigma: a logit threshold from the mean and standard deviation of the
// candidate logits (two SIMD moment passes), then a count and a gather over
// the blocks that can reach the threshold.
#include "stages/top_n_sigma.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/moments.h"
#include "kernels/threshold.h"

namespace bd {

void ApplyTopNSigma(Candidates& c, const TopNSigmaParams& p, Workspace& ws,
                    const StageContext&) {
  const size_t n = c.Count();
  if (!(p.n > 0.0f) || n <= 1) return;
  const float* v = c.truncated ? c.logits : c.row;
  const size_t len = c.truncated ? c.size : c.vocab;
  const float max = CandidateMax(c);
  // Shifted two-pass variance: the first pass (centred on the max) gives the
  // mean, the second (centred on the mean) the variance without cancellation.
  // On the row the finite count is the scan's, so the passes sum only what
  // they must (the same bits as FiniteMoments' fields).
  size_t finite;
  float mean;
  FiniteMomentSums m2;
  if (!c.truncated) {
    finite = c.row_finite;
    mean = static_cast<float>(static_cast<double>(max) +
                              FiniteDeviationSum(v, len, max) / static_cast<double>(finite));
    m2 = FiniteSpread(v, len, mean);
  } else {
    const FiniteMomentSums m1 = FiniteMoments(v, len, max);
    finite = m1.count;
    if (finite == 0) return;
    mean = static_cast<float>(static_cast<double>(max) + m1.sum_d / static_cast<double>(finite));
    m2 = FiniteMoments(v, len, mean);
  }
  const double count = static_cast<double>(finite);
  const double d1 = m2.sum_d / count;
  const double sigma = std::sqrt(std::max(0.0, m2.sum_d2 / count - d1 * d1));
  // Keep l >= max - n sigma: the smallest float at or above it.
  const double cut = static_cast<double>(max) - static_cast<double>(p.n) * sigma;
  float t = static_cast<float>(cut);
  if (static_cast<double>(t) < cut) t = std::nextafter(t, INFINITY);
  t = std::max(t, -FLT_MAX);
  const size_t kept = CountCandidatesAtLeast(c, t);  // the row: its blocks that reach t
  if (kept >= n) return;  // nothing to remove: the row stays lazy
  KeepAtLeast(c, t, ws);
}

}  // namespace bd
