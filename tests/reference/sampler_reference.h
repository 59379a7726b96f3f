// Float64 reference of the default chain (top-k, top-p, min-p, temperature),
// written plainly from the documented rules with a full sort: the oracle the
// SIMD, sort-free production path is checked against. Shares no code with src/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace ref {

struct Dist {
  std::vector<int32_t> ids;   // most probable first, ties lower id first
  std::vector<double> probs;  // sum 1
};

struct ChainOptions {
  double temperature = 1.0;
  int top_k = 0;
  double top_p = 1.0;
  double min_p = 0.0;
  int min_keep = 1;
};

// Candidates sorted by (logit desc, id asc), -inf excluded.
inline std::vector<int32_t> SortedIds(const std::vector<float>& logits) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < logits.size(); ++i)
    if (logits[i] != -INFINITY) ids.push_back(static_cast<int32_t>(i));
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  return ids;
}

inline std::vector<double> SoftmaxOf(const std::vector<float>& logits,
                                     const std::vector<int32_t>& ids, double t) {
  double max = -INFINITY;
  for (int32_t i : ids) max = std::max(max, static_cast<double>(logits[i]) / t);
  std::vector<double> p;
  double z = 0.0;
  for (int32_t i : ids) {
    p.push_back(std::exp(static_cast<double>(logits[i]) / t - max));
    z += p.back();
  }
  for (double& x : p) x /= z;
  return p;
}

inline Dist Chain(const std::vector<float>& logits, const ChainOptions& o) {
  std::vector<int32_t> ids = SortedIds(logits);
  const size_t keep_min = static_cast<size_t>(std::max(o.min_keep, 1));
  if (o.top_k > 0) {
    const size_t k = std::max(static_cast<size_t>(o.top_k), keep_min);
    if (k < ids.size()) ids.resize(k);
  }
  if (o.top_p < 1.0) {
    const std::vector<double> p = SoftmaxOf(logits, ids, 1.0);
    double cum = 0.0;
    for (size_t i = 0; i < ids.size(); ++i) {
      cum += p[i];
      // The documented rule: p counts as reached within 1e-6 relative.
      if (cum >= o.top_p * (1 - 1e-6) && i + 1 >= keep_min) {
        ids.resize(i + 1);
        break;
      }
    }
  }
  if (o.min_p > 0.0) {
    const std::vector<double> p = SoftmaxOf(logits, ids, 1.0);
    std::vector<int32_t> kept;
    for (size_t i = 0; i < ids.size(); ++i)
      if (p[i] >= o.min_p * p[0] * (1 - 1e-9)) kept.push_back(ids[i]);
    if (kept.size() < keep_min) kept.assign(ids.begin(), ids.begin() + std::min(keep_min, ids.size()));
    ids = kept;
  }
  Dist d;
  d.ids = ids;
  d.probs = SoftmaxOf(logits, ids, o.temperature);
  return d;
}

}  // namespace ref
