// Adaptive-p: the probabilities from one SIMD exp pass over the gathered
// candidates, then the target-distance transform into new logits.
#include "stages/adaptive_p.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/order_free_sum.h"
#include "kernels/softmax.h"
#include "stages/stages.h"

namespace bd {
namespace {

// llama.cpp's constants (DISTRIBUTION_WIDTH, PEAK_LOGIT_VALUE, SHARPNESS).
constexpr double kWidth = 0.3;
constexpr double kPeakLogit = 5.0;
constexpr double kSharpness = 10.0;

double Clamp01(double v) { return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v); }

}  // namespace

void AdaptivePReset(AdaptivePState& s, const AdaptivePParams& p) {
  const double one_minus = 1.0 - static_cast<double>(p.decay);
  s.weighted_sum = static_cast<double>(p.target) / one_minus;
  s.total_weight = 1.0 / one_minus;
}

double AdaptivePTarget(const AdaptivePState& s, const AdaptivePParams& p) {
  const double t = Clamp01(p.target);
  if (s.total_weight == 0.0) return t;
  return Clamp01(2.0 * t - s.weighted_sum / s.total_weight);
}

double AdaptivePLogit(double prob, double adapted) {
  const double d = std::fabs(prob - adapted) / kWidth;
  return kPeakLogit - kSharpness * d * d / (1.0 + d);
}

void ApplyAdaptiveP(Candidates& c, const AdaptivePParams& p, const AdaptivePState& s,
                    double* original, Workspace& ws, const StageContext&) {
  if (!(p.target >= 0.0f) || c.Count() == 0) return;
  // The whole row, gathered in ascending ids; a list sorted by logit is in
  // its canonical order too.
  const bool canonical = !c.truncated || c.sorted >= c.size;
  if (!c.truncated) KeepAtLeast(c, -FLT_MAX, ws);
  const size_t n = c.size;
  double* prob = ws.stage_f64.data();
  if (c.probs_valid) {
    for (size_t i = 0; i < n; ++i) prob[i] = c.probs[i];
  } else {
    const float max = CandidateMax(c);
    const float scale = static_cast<float>(1.0 / c.temperature);
    float* e = ws.stage_f32.data();
    double z = ExpWrite(c.logits, n, max, scale, e);
    if (!canonical) {
      // Z's bits are then the set's, not the list order's (as the decoder's
      // own probabilities): the same p whichever path left the candidates.
      OrderFreeSum sum;
      for (size_t i = 0; i < n; ++i) sum.Add(static_cast<double>(e[i]));
      z = sum.Sum();
    }
    const double inv_z = 1.0 / z;
    for (size_t i = 0; i < n; ++i) prob[i] = static_cast<double>(e[i]) * inv_z;
  }
  const double adapted = AdaptivePTarget(s, p);
  for (size_t i = 0; i < n; ++i) {
    original[c.ids[i]] = prob[i];
    c.logits[i] = static_cast<float>(AdaptivePLogit(prob[i], adapted));
  }
  c.sorted = 0;
  c.temperature = 1.0;
  c.probs_valid = false;
  ++c.list_version;
}

void AdaptivePUpdate(AdaptivePState& s, const AdaptivePParams& p, double p_original) {
  const double decay = static_cast<double>(p.decay);
  s.weighted_sum = p_original + decay * s.weighted_sum;
  s.total_weight = 1.0 + decay * s.total_weight;
}

}  // namespace bd
