// Dynamic temperature: the entropy of the candidates in one SIMD pass, then a
// new temperature factor.
#include "stages/dynamic_temperature.h"

#include <algorithm>
#include <cmath>

#include "kernels/det_math.h"
#include "kernels/moments.h"
#include "stages/stages.h"

namespace bd {
namespace {

// Multiplies the temperature by t > 0, or goes greedy (first maximum only)
// when t <= 0 or the product is too small for 1/T to be a float.
void ScaleTemperature(Candidates& c, double t, Workspace& ws) {
  if (t == 1.0) return;
  const double product = c.temperature * t;
  if (!(t > 0.0) || !std::isfinite(static_cast<float>(1.0 / product))) {
    ApplyTopK(c, 1, ws);
    return;
  }
  c.temperature = product;
  c.probs_valid = false;
}

}  // namespace

void ApplyDynamicTemperature(Candidates& c, const DynamicTemperatureParams& p, Workspace& ws,
                             const StageContext&) {
  if (!(p.range > 0.0f)) {
    ScaleTemperature(c, p.temperature, ws);
    return;
  }
  const size_t n = c.Count();
  if (n <= 1) return;
  const double min_t = std::max(0.0, static_cast<double>(p.temperature) - p.range);
  const double max_t = static_cast<double>(p.temperature) + p.range;
  const float max = CandidateMax(c);
  const float scale = static_cast<float>(1.0 / c.temperature);
  const ExpMomentSums s = c.truncated ? ExpMoments(c.logits, c.size, max, scale, nullptr)
                                      : ExpMoments(c.row, c.vocab, max, scale, nullptr);
  const double entropy = LogF64(s.sum_e) - s.sum_ex / s.sum_e;
  const double normalized =
      std::min(1.0, std::max(0.0, entropy / LogF64(static_cast<double>(n))));
  const double t = min_t + (max_t - min_t) * PowF64(normalized, static_cast<double>(p.exponent));
  ScaleTemperature(c, t, ws);
}

}  // namespace bd
