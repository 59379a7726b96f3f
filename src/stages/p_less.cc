// p-less: the collision probability sum p^2 as a probability cutoff, turned
// into a logit threshold (KeepLogitAtLeast): one SIMD pass for Z and sum e^2,
// no sort.
#include "stages/p_less.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/det_math.h"
#include "kernels/moments.h"
#include "stages/stages.h"

namespace bd {

double PLessThreshold(PLessMode mode, double sum_p2, size_t v) {
  if (mode != PLessMode::kNorm) return sum_p2;
  if (v <= 1) return sum_p2;
  const double vd = static_cast<double>(v);
  return (vd * sum_p2 - 1.0) / (vd - 1.0);
}

void ApplyPLess(Candidates& c, const PLessParams& p, Workspace& ws, const StageContext&) {
  const size_t n = c.Count();
  if (p.mode == PLessMode::kOff || n <= 1) return;
  const float max = CandidateMax(c);
  const float scale = static_cast<float>(1.0 / c.temperature);
  const float* v = c.truncated ? c.logits : c.row;
  const size_t len = c.truncated ? c.size : c.vocab;
  // sum p^2 = sum e^2 / Z^2, e_i = exp((l_i - max) / T).
  const ExpSquareSums s = ExpSquares(v, len, max, scale);
  const double z = s.sum_e;
  const double sum_p2 = s.sum_e2 / (z * z);
  const double threshold = PLessThreshold(p.mode, sum_p2, c.vocab);
  if (!(threshold > 0.0)) return;
  // p_i >= threshold  <=>  (l_i - max) / T >= log threshold + log Z.
  const double cut = static_cast<double>(max) + c.temperature * (LogF64(threshold) + LogF64(z));
  float t = static_cast<float>(cut);
  if (static_cast<double>(t) < cut) t = std::nextafter(t, INFINITY);
  KeepLogitAtLeast(c, std::max(t, -FLT_MAX), p.min_keep, ws);
}

}  // namespace bd
