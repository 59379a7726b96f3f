// Epsilon / eta sampling: an absolute probability cutoff turned into a logit
// threshold, counted and gathered by SIMD passes; no sort of the vocabulary.
#include "stages/epsilon_eta.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/moments.h"
#include "stages/stages.h"

namespace bd {
namespace {

// Smallest float >= x (x finite or +-inf): for a float l, l >= x exactly iff
// l >= FloatCeil(x).
float FloatCeil(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x) f = std::nextafter(f, INFINITY);
  return f;
}

}  // namespace

void KeepProbabilityAtLeast(Candidates& c, double threshold, size_t min_keep, Workspace& ws) {
  const size_t n = c.Count();
  if (n <= 1 || !(threshold > 0.0)) return;
  const float max = CandidateMax(c);
  const double z = CandidateExpSum(c, max);
  // p_i >= threshold  <=>  (l_i - max) / T - log Z >= log threshold.
  const double cut = static_cast<double>(max) + c.temperature * (LogF64(threshold) + LogF64(z));
  KeepLogitAtLeast(c, std::max(FloatCeil(cut), -FLT_MAX), min_keep, ws);
}

void ApplyEpsilon(Candidates& c, const EpsilonParams& p, Workspace& ws, const StageContext&) {
  if (!(p.epsilon > 0.0f)) return;
  KeepProbabilityAtLeast(c, p.epsilon, p.min_keep, ws);
}

void ApplyEta(Candidates& c, const EtaParams& p, Workspace& ws, const StageContext&) {
  if (!(p.eta > 0.0f) || c.Count() <= 1) return;
  const float max = CandidateMax(c);
  const float scale = static_cast<float>(1.0 / c.temperature);
  const ExpMomentSums s = c.truncated ? ExpMoments(c.logits, c.size, max, scale, nullptr)
                                      : ExpMoments(c.row, c.vocab, max, scale, nullptr);
  // H = -sum p log p = log Z - E_p[x], x = (l - max) / T.
  const double entropy = LogF64(s.sum_e) - s.sum_ex / s.sum_e;
  const double eta = p.eta;
  const double cutoff = std::min(eta, std::sqrt(eta) * ExpF64(-entropy));
  KeepProbabilityAtLeast(c, cutoff, p.min_keep, ws);
}

}  // namespace bd
