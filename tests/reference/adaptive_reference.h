// Float64 reference of the decoders that came after the Bregman paper:
// p-less and p-less-norm (Tan, Wu, Howard 2025), Top-H (Baghaei Potraghloo et
// al. 2025) and llama.cpp's adaptive-p, written plainly from their papers'
// and llama.cpp's rules (docs/samplers_adaptive.md) with full sorts and float64
// throughout: the oracle the production stages are checked against. Shares
// no code with src/ (the types and helpers are shaping_reference.h's).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/shaping_reference.h"

namespace adaptive_ref {

using shaping_ref::Cands;
using shaping_ref::Logits;
using shaping_ref::Result;
using shaping_ref::kNoMargin;

// p-less (norm = false): keep p_i >= sum_j p_j^2; p-less-norm (norm = true):
// keep p_i >= (V sum_j p_j^2 - 1) / (V - 1), V the vocabulary size; at
// least max(min_keep, 1), the most probable. Margin: the closest p to the
// threshold, relative.
inline Result PLess(const Logits& l, const Cands& in, bool norm, size_t min_keep) {
  if (in.ids.size() <= 1) return Result{in, kNoMargin};
  const std::vector<double> p = shaping_ref::Probs(l, in.ids, in.temperature);
  double s = 0.0;
  for (double x : p) s += x * x;
  const double v = static_cast<double>(l.size());
  const double threshold = norm ? (v * s - 1.0) / (v - 1.0) : s;
  return shaping_ref::KeepProbAtLeast(l, in, threshold, min_keep);
}

// Top-H: the longest most-probable prefix whose renormalised entropy is at
// most coefficient * H(p) (entropies in nats; the first token always kept),
// and at least max(min_keep, 1). Margin: the distance of the deciding
// entropies from the bound, relative to the bound.
inline Result TopH(const Logits& l, const Cands& in, double coefficient, size_t min_keep) {
  Result r{in, kNoMargin};
  if (!(coefficient > 0.0) || in.ids.size() <= 1) return r;
  const std::vector<int32_t> order = shaping_ref::Canonical(l, in.ids);
  const std::vector<double> p = shaping_ref::Probs(l, order, in.temperature);
  double h = 0.0;
  for (double x : p) h -= x > 0.0 ? x * std::log(x) : 0.0;
  const double bound = coefficient * h;
  size_t k = 1;
  for (; k < order.size(); ++k) {
    // Entropy of p_0..p_k renormalised.
    double mass = 0.0;
    for (size_t i = 0; i <= k; ++i) mass += p[i];
    double hk = 0.0;
    for (size_t i = 0; i <= k; ++i) {
      const double q = p[i] / mass;
      hk -= q > 0.0 ? q * std::log(q) : 0.0;
    }
    if (bound > 0.0) r.margin = std::min(r.margin, std::fabs(hk - bound) / bound);
    if (hk > bound) break;
  }
  k = std::min(order.size(), std::max(k, std::max<size_t>(min_keep, 1)));
  r.c.ids.assign(order.begin(), order.begin() + k);
  return r;
}

// llama.cpp adaptive-p's EMA and transform (llama.cpp PR 17927).
struct AdaptiveState {
  double weighted_sum;
  double total_weight;
};

inline AdaptiveState AdaptiveReset(double target, double decay) {
  return AdaptiveState{target / (1.0 - decay), 1.0 / (1.0 - decay)};
}

inline double AdaptiveTarget(const AdaptiveState& s, double target) {
  const double t = std::clamp(target, 0.0, 1.0);
  if (s.total_weight == 0.0) return t;
  return std::clamp(2.0 * t - s.weighted_sum / s.total_weight, 0.0, 1.0);
}

// The distribution adaptive-p draws from, aligned with `ids` (any order),
// given the candidates' probabilities p.
inline std::vector<double> AdaptiveDraw(const std::vector<double>& p, double adapted) {
  std::vector<double> logit(p.size());
  double max = -INFINITY;
  for (size_t i = 0; i < p.size(); ++i) {
    const double d = std::fabs(p[i] - adapted) / 0.3;
    logit[i] = 5.0 - 10.0 * d * d / (1.0 + d);
    max = std::max(max, logit[i]);
  }
  double z = 0.0;
  std::vector<double> q(p.size());
  for (size_t i = 0; i < p.size(); ++i) z += (q[i] = std::exp(logit[i] - max));
  for (double& x : q) x /= z;
  return q;
}

inline void AdaptiveUpdate(AdaptiveState& s, double decay, double p_original) {
  s.weighted_sum = p_original + decay * s.weighted_sum;
  s.total_weight = 1.0 + decay * s.total_weight;
}

}  // namespace adaptive_ref
