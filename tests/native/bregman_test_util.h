// Shared helpers for the Bregman tests: platform-independent random rows
// (std::mt19937_64 is bit-exact everywhere; the std:: distributions are not,
// so the draws below are hand-written), sorting and scattering.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "bregman/bregman.h"

namespace bregman_test {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Uniform integer in [lo, hi].
  size_t Int(size_t lo, size_t hi) {
    return lo + static_cast<size_t>(gen_() % (static_cast<uint64_t>(hi - lo) + 1));
  }
  double LogUniform(double lo, double hi) {
    return std::exp(Uniform(std::log(lo), std::log(hi)));
  }
  double Normal() {  // Box-Muller
    const double u = 1.0 - Uniform();
    const double v = Uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  // Gamma(shape, 1), Marsaglia-Tsang (with the shape < 1 boost).
  double Gamma(double shape) {
    if (shape < 1.0) return Gamma(shape + 1.0) * std::pow(1.0 - Uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = Normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = 1.0 - Uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }
  template <class T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Int(0, i - 1)]);
  }

 private:
  std::mt19937_64 gen_;
};

inline void Normalise(std::vector<double>& p) {
  double s = 0.0;
  for (double x : p) s += x;
  for (double& x : p) x /= s;
}

// Row families of the oracle and property tests.
enum class Family { kDirichlet, kZipf, kFlat, kTies, kZeros, kPeaked };
constexpr int kNumFamilies = 6;

inline std::vector<double> MakeRow(Rng& rng, Family family, size_t v) {
  std::vector<double> p(v);
  switch (family) {
    case Family::kDirichlet: {
      const double conc = rng.LogUniform(0.05, 5.0);
      for (double& x : p) x = rng.Gamma(conc);
      break;
    }
    case Family::kZipf: {  // LLM-like: p_i ~ i^-s, randomly permuted
      const double s = rng.Uniform(0.8, 1.6);
      for (size_t i = 0; i < v; ++i) p[i] = std::pow(static_cast<double>(i + 1), -s);
      rng.Shuffle(p);
      break;
    }
    case Family::kFlat:
      for (double& x : p) x = 1.0 + 0.05 * rng.Uniform();
      break;
    case Family::kTies: {  // a few distinct levels, many exact ties
      const size_t levels = rng.Int(1, 3);
      std::vector<double> level(levels);
      for (double& l : level) l = rng.Uniform(0.1, 1.0);
      for (double& x : p) x = level[rng.Int(0, levels - 1)];
      break;
    }
    case Family::kZeros: {  // Dirichlet with exact zeros (at least one positive)
      for (double& x : p) x = rng.Uniform() < 0.4 ? 0.0 : rng.Gamma(0.7);
      p[rng.Int(0, v - 1)] = rng.Gamma(0.7) + 1e-3;
      break;
    }
    case Family::kPeaked: {
      for (double& x : p) x = rng.Gamma(0.5) * 1e-2;
      p[rng.Int(0, v - 1)] = 1.0;
      break;
    }
  }
  Normalise(p);
  return p;
}

// A distribution sorted descending with lower token id first on ties.
struct Sorted {
  std::vector<size_t> order;  // order[j] = token id of the j-th largest
  std::vector<double> p;
};

inline Sorted SortRow(const std::vector<double>& p) {
  Sorted s;
  s.order.resize(p.size());
  std::iota(s.order.begin(), s.order.end(), size_t{0});
  std::stable_sort(s.order.begin(), s.order.end(),
                   [&](size_t a, size_t b) { return p[a] > p[b]; });
  s.p.resize(p.size());
  for (size_t j = 0; j < p.size(); ++j) s.p[j] = p[s.order[j]];
  return s;
}

// ws.q (sorted order, k values) scattered back to token ids.
inline std::vector<double> Scatter(const Sorted& s, const std::vector<double>& q_sorted,
                                   size_t k) {
  std::vector<double> q(s.p.size(), 0.0);
  for (size_t j = 0; j < k; ++j) q[s.order[j]] = q_sorted[j];
  return q;
}

inline double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

struct Decoded {
  bd::BregmanResult result;
  std::vector<double> q;  // original token order
};

inline Decoded Decode(const bd::BregmanParams& params, const Sorted& s,
                      bd::BregmanWorkspace& ws) {
  bd::SortedProbsArray probs(s.p.data(), s.p.size());
  Decoded d;
  d.result = bd::DecodeBregman(params, probs, ws);
  d.q = Scatter(s, ws.q, d.result.k);
  return d;
}

inline bd::BregmanParams Params(bool dual, double alpha, double lambda, size_t fixed_k = 0) {
  bd::BregmanParams params;
  params.divergence = dual ? bd::BregmanDivergence::kDual : bd::BregmanDivergence::kPrimal;
  params.alpha = alpha;
  params.lambda = lambda;
  params.fixed_k = fixed_k;
  return params;
}

}  // namespace bregman_test
