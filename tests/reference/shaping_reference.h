// Float64 reference of the distribution-shaping stages (typical, epsilon,
// eta, top-n-sigma, XTC, dynamic temperature, mirostat 2.0 and 1.0), written plainly
// from the documented rules (docs/samplers_shaping.md) with full sorts: the
// oracle the SIMD, sort-free production stages are checked against. Shares no
// code with src/.
//
// Each stage also reports a margin: how far the reference's decisions were
// from flipping (a probability from its cutoff, relative; a cumulative mass
// from its target; two distances whose order decides the result). A test
// treats a case whose margin is below the production arithmetic's resolution
// as ambiguous instead of as a failure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace shaping_ref {

using Logits = std::vector<float>;
constexpr double kNoMargin = std::numeric_limits<double>::infinity();

// The candidates: token ids (any order) and the temperature factor of the
// law p_i proportional to exp((l_i - max) / temperature).
struct Cands {
  std::vector<int32_t> ids;
  double temperature = 1.0;
};

struct Result {
  Cands c;
  double margin = kNoMargin;
};

struct Dist {
  std::vector<int32_t> ids;   // logit descending, ties lower id first
  std::vector<double> probs;  // sum 1
};

// Logit descending, ties lower id first.
inline std::vector<int32_t> Canonical(const Logits& l, std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    if (l[a] != l[b]) return l[a] > l[b];
    return a < b;
  });
  return ids;
}

// Every finite token of the row.
inline Cands All(const Logits& l) {
  Cands c;
  for (size_t i = 0; i < l.size(); ++i)
    if (std::isfinite(l[i])) c.ids.push_back(static_cast<int32_t>(i));
  return c;
}

inline Cands TopK(const Logits& l, Cands c, size_t k) {
  c.ids = Canonical(l, c.ids);
  if (k < c.ids.size()) c.ids.resize(k);
  return c;
}

// log p_i for the ids (aligned), at temperature t.
inline std::vector<double> LogProbs(const Logits& l, const std::vector<int32_t>& ids, double t) {
  double max = -INFINITY;
  for (int32_t i : ids) max = std::max(max, static_cast<double>(l[i]));
  double z = 0.0;
  for (int32_t i : ids) z += std::exp((l[i] - max) / t);
  std::vector<double> lp;
  for (int32_t i : ids) lp.push_back((l[i] - max) / t - std::log(z));
  return lp;
}

inline std::vector<double> Probs(const Logits& l, const std::vector<int32_t>& ids, double t) {
  std::vector<double> p = LogProbs(l, ids, t);
  for (double& x : p) x = std::exp(x);
  return p;
}

inline double Entropy(const std::vector<double>& logp) {
  double h = 0.0;
  for (double x : logp) h -= std::exp(x) * x;
  return h;
}

inline Dist Finish(const Logits& l, const Cands& c) {
  Dist d;
  d.ids = Canonical(l, c.ids);
  d.probs = Probs(l, d.ids, c.temperature);
  return d;
}

// Keep p_i >= cut; fewer than max(min_keep, 1) pass: the top max(min_keep, 1).
inline Result KeepProbAtLeast(const Logits& l, const Cands& in, double cut, size_t min_keep) {
  Result r{in, kNoMargin};
  if (in.ids.size() <= 1 || !(cut > 0.0)) return r;
  const std::vector<int32_t> order = Canonical(l, in.ids);
  const std::vector<double> p = Probs(l, order, in.temperature);
  std::vector<int32_t> kept;
  for (size_t i = 0; i < order.size(); ++i) {
    if (p[i] >= cut) kept.push_back(order[i]);
    r.margin = std::min(r.margin, std::fabs(p[i] - cut) / cut);
  }
  const size_t keep_min = std::max<size_t>(min_keep, 1);
  if (kept.size() < keep_min) kept.assign(order.begin(), order.begin() + std::min(keep_min, order.size()));
  r.c.ids = kept;
  return r;
}

// HF EpsilonLogitsWarper (exactly min_keep kept when too few pass).
inline Result Epsilon(const Logits& l, const Cands& in, double epsilon, size_t min_keep) {
  if (!(epsilon > 0.0)) return Result{in, kNoMargin};
  return KeepProbAtLeast(l, in, epsilon, min_keep);
}

// HF EtaLogitsWarper: cutoff min(eta, sqrt(eta) exp(-H)).
inline Result Eta(const Logits& l, const Cands& in, double eta, size_t min_keep) {
  if (!(eta > 0.0) || in.ids.size() <= 1) return Result{in, kNoMargin};
  const double h = Entropy(LogProbs(l, in.ids, in.temperature));
  return KeepProbAtLeast(l, in, std::min(eta, std::sqrt(eta) * std::exp(-h)), min_keep);
}

// llama.cpp top-n-sigma: keep l >= max - n * (population std of the logits).
inline Result TopNSigma(const Logits& l, const Cands& in, double n) {
  Result r{in, kNoMargin};
  if (!(n > 0.0) || in.ids.size() <= 1) return r;
  double max = -INFINITY, mean = 0.0;
  for (int32_t i : in.ids) {
    max = std::max(max, static_cast<double>(l[i]));
    mean += l[i];
  }
  mean /= static_cast<double>(in.ids.size());
  double var = 0.0;
  for (int32_t i : in.ids) var += (l[i] - mean) * (l[i] - mean);
  const double sigma = std::sqrt(var / static_cast<double>(in.ids.size()));
  const double cut = max - n * sigma;
  r.c.ids.clear();
  for (int32_t i : in.ids) {
    if (l[i] >= cut) r.c.ids.push_back(i);
    if (n * sigma > 0.0) r.margin = std::min(r.margin, std::fabs(l[i] - cut) / (n * sigma));
  }
  return r;
}

// llama.cpp XTC, given whether the step's draw said to act.
inline Result Xtc(const Logits& l, const Cands& in, bool act, double probability,
                  double threshold, size_t min_keep) {
  Result r{in, kNoMargin};
  if (!(probability > 0.0) || threshold > 0.5 || in.ids.size() < 2 || !act) return r;
  const std::vector<int32_t> order = Canonical(l, in.ids);
  const std::vector<double> p = Probs(l, order, in.temperature);
  size_t pos_last = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (threshold > 0.0) r.margin = std::min(r.margin, std::fabs(p[i] - threshold) / threshold);
    if (p[i] >= threshold) {
      pos_last = i;
    } else {
      break;
    }
  }
  if (order.size() - pos_last >= min_keep && pos_last > 0)
    r.c.ids.assign(order.begin() + static_cast<std::ptrdiff_t>(pos_last), order.end());
  return r;
}

// Greedy: the first maximum only.
inline Cands Greedy(const Logits& l, Cands c) {
  c.ids = {Canonical(l, c.ids)[0]};
  return c;
}

// llama.cpp temp-ext, composed as a factor on the current temperature.
inline Result DynamicTemperature(const Logits& l, const Cands& in, double temperature,
                                 double range, double exponent) {
  Result r{in, kNoMargin};
  double t = temperature;
  if (range > 0.0) {
    const size_t n = in.ids.size();
    if (n <= 1) return r;
    const double min_t = std::max(0.0, temperature - range);
    const double max_t = temperature + range;
    const double h = Entropy(LogProbs(l, in.ids, in.temperature));
    const double norm = std::min(1.0, std::max(0.0, h / std::log(static_cast<double>(n))));
    t = min_t + (max_t - min_t) * std::pow(norm, exponent);
  }
  if (t == 1.0) return r;
  if (!(t > 0.0)) {
    r.c = Greedy(l, in);
    return r;
  }
  r.c.temperature *= t;
  return r;
}

// llama.cpp mirostat v2 truncation: the sorted prefix with -log2 p <= mu, at
// least one token.
inline Result Mirostat(const Logits& l, const Cands& in, double mu) {
  Result r{in, kNoMargin};
  if (in.ids.size() <= 1) return r;
  const std::vector<int32_t> order = Canonical(l, in.ids);
  const std::vector<double> lp = LogProbs(l, order, in.temperature);
  size_t k = 0;
  while (k < order.size() && -lp[k] / std::log(2.0) <= mu) ++k;
  for (double x : lp) r.margin = std::min(r.margin, std::fabs(-x / std::log(2.0) - mu) / std::max(1.0, std::fabs(mu)));
  r.c.ids.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::max<size_t>(k, 1)));
  return r;
}

// llama.cpp mirostat 1.0 (Basu et al. 2021, Algorithm 1) truncation: Zipf's
// exponent s fitted by least squares to log(p_i / p_{i+1}) against
// log((i + 2) / (i + 1)) over the 100 most probable tokens, then
// k = ((s - 1) 2^mu / (1 - V^(1 - s)))^(1 / s) and the top max(floor(k), 1)
// (all of them when k is not below their count). Margin: k's distance to the
// nearest integer, relative to k.
inline Result MirostatV1(const Logits& l, const Cands& in, double mu) {
  Result r{in, kNoMargin};
  if (in.ids.size() <= 1) return r;
  const std::vector<int32_t> order = Canonical(l, in.ids);
  const std::vector<double> p = Probs(l, order, in.temperature);
  const size_t head = std::min<size_t>(100, order.size());
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i + 1 < head; ++i) {
    const double x = std::log((i + 2.0) / (i + 1.0));
    num += x * std::log(p[i] / p[i + 1]);
    den += x * x;
  }
  const double s = num / den, v = static_cast<double>(l.size());
  const double ratio = s == 1.0 ? 1.0 / std::log(v) : (s - 1.0) / (1.0 - std::pow(v, 1.0 - s));
  const double k = std::pow(ratio * std::pow(2.0, mu), 1.0 / s);
  if (!(k < static_cast<double>(order.size()))) return r;
  r.margin = std::fabs(k - std::round(k)) / std::max(1.0, k);
  r.c.ids.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::max(1.0, std::floor(k))));
  return r;
}

// llama.cpp locally typical: order by |-log p - H| (ties lower id), keep the
// shortest prefix whose mass exceeds p (1 + 1e-6) with >= min_keep tokens.
inline std::vector<int32_t> TypicalWalk(const std::vector<int32_t>& ids, const std::vector<double>& p,
                                        const std::vector<size_t>& order, double thr,
                                        size_t keep_min, std::vector<double>* cums) {
  double cum = 0.0;
  std::vector<int32_t> kept;
  for (size_t i = 0; i < order.size(); ++i) {
    cum += p[order[i]];
    kept.push_back(ids[order[i]]);
    if (cums) cums->push_back(cum);
    if (cum > thr && i + 1 >= keep_min) break;
  }
  return kept;
}

inline Result Typical(const Logits& l, const Cands& in, double p_mass, size_t min_keep) {
  Result r{in, kNoMargin};
  const size_t n = in.ids.size();
  if (!(p_mass < 1.0) || n <= 1) return r;
  const std::vector<double> lp = LogProbs(l, in.ids, in.temperature);
  const double h = Entropy(lp);
  std::vector<double> p(n), d(n), side(n);
  for (size_t i = 0; i < n; ++i) {
    p[i] = std::exp(lp[i]);
    d[i] = std::fabs(-lp[i] - h);
    side[i] = (-lp[i] - h) >= 0.0 ? 1.0 : -1.0;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (d[a] != d[b]) return d[a] < d[b];
    return in.ids[a] < in.ids[b];
  });
  const double thr = p_mass * (1.0 + 1e-6);
  const size_t keep_min = std::max<size_t>(min_keep, 1);
  std::vector<double> cums;
  r.c.ids = TypicalWalk(in.ids, p, order, thr, keep_min, &cums);
  const size_t k = r.c.ids.size();
  // Mass margin: every prefix sum that could have stopped the walk.
  for (size_t i = 0; i < cums.size(); ++i)
    if (i + 1 >= keep_min) r.margin = std::min(r.margin, std::fabs(cums[i] - thr));
  // Order margin: two neighbours on opposite sides of H whose swap (a shift
  // of H reorders exactly those) changes the kept set.
  for (size_t j = 0; j + 1 < n && j < k; ++j) {
    const size_t a = order[j], b = order[j + 1];
    const double gap = d[b] - d[a];
    if (side[a] == side[b] || gap >= 1e-5) continue;
    std::vector<size_t> swapped = order;
    std::swap(swapped[j], swapped[j + 1]);
    std::vector<int32_t> alt = TypicalWalk(in.ids, p, swapped, thr, keep_min, nullptr);
    std::vector<int32_t> x = r.c.ids, y = alt;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    if (x != y) r.margin = std::min(r.margin, gap);
  }
  return r;
}

}  // namespace shaping_ref
