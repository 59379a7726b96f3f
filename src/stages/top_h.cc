// Top-H: the entropy of the whole distribution from one SIMD moment pass,
// then a float64 walk over a sorted prefix grown on demand.
#include "stages/top_h.h"

#include <algorithm>
#include <cmath>

#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/moments.h"
#include "stages/stages.h"

namespace bd {
namespace {

// The length of the longest prefix within the bound, walking the sorted
// candidates; grows the sorted prefix as the walk needs it.
size_t PrefixWithinBound(Candidates& c, float max, double bound, Workspace& ws) {
  const size_t n = c.Count();
  const double inv_t = 1.0 / c.temperature;
  // H(q_k) <= log k: the first k that breaks the bound exceeds e^bound.
  const double start = 2.0 * ExpF64(std::min(bound, 40.0));
  size_t want = std::min(n, std::max<size_t>(64, static_cast<size_t>(start)));
  double mass = 0.0, moment = 0.0;  // P_k and Q_k
  size_t k = 0;
  for (;;) {
    EnsureSorted(c, want, ws);
    const size_t have = std::min(c.SortedCount(), n);
    for (; k < have; ++k) {
      const double x = (static_cast<double>(c.logits[k]) - max) * inv_t;
      const double e = ExpF64(x);
      // Sorted: every later e is 0 too, and a zero adds no entropy.
      if (e == 0.0) return n;
      const double p_next = mass + e;
      const double q_next = moment + e * x;
      if (k > 0 && LogF64(p_next) - q_next / p_next > bound) return k;
      mass = p_next;
      moment = q_next;
    }
    if (have >= n) return n;
    want = std::min(n, 4 * have);
  }
}

}  // namespace

void ApplyTopH(Candidates& c, const TopHParams& p, Workspace& ws, const StageContext&) {
  const size_t n = c.Count();
  // At 1 the whole set is within the bound (its entropy is H(p)) and, the
  // prefix entropies growing to it, every shorter prefix too.
  if (!(p.coefficient > 0.0f) || p.coefficient >= 1.0f || n <= 1) return;
  const float max = CandidateMax(c);
  const float scale = static_cast<float>(1.0 / c.temperature);
  const ExpMomentSums s = c.truncated ? ExpMoments(c.logits, c.size, max, scale, nullptr)
                                      : ExpMoments(c.row, c.vocab, max, scale, nullptr);
  // H(p) = log Z - E_p[x], x = (l - max) / T.
  const double entropy = LogF64(s.sum_e) - s.sum_ex / s.sum_e;
  const double bound = static_cast<double>(p.coefficient) * std::max(entropy, 0.0);
  const size_t keep = std::max(PrefixWithinBound(c, max, bound, ws),
                               std::min(n, std::max<size_t>(p.min_keep, 1)));
  if (keep >= n) return;
  EnsureSorted(c, keep, ws);
  TruncateToSorted(c, keep);
}

}  // namespace bd
