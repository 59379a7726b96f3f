// DecodeBregman: choose k (fixed, or adaptive by galloping + bisection on the
// nonincreasing marginal value tau_k), then renormalise the top-k and price
// the result (spec sections 4 and 5).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "bregman/alpha_family.h"
#include "bregman/bregman.h"
#include "bregman/closed_forms.h"
#include "bregman/renormalise.h"

namespace bd {
namespace {

using namespace bregman_detail;

// Grows v to at least n elements. Never shrinks, so a warm workspace never
// reallocates for a k it has already seen.
void EnsureSize(std::vector<double>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// How tau_k is computed: O(1) from prefix sums for the closed forms,
// otherwise from two fixed-support solves.
enum class TauKind {
  kKLPrimal,     // log1p(p_(k+1) / s_k)
  kNever,        // dual, alpha <= 1: zeroing a positive p costs +inf
  kEuclid,       // alpha = 2, primal or dual
  kSqrtPrimal,   // primal alpha = 1.5
  kGeneral,      // R_k - R_{k+1} + zero_cost(p_(k+1)) by BregmanRenormalise
};

TauKind ChooseTauKind(BregmanDivergence divergence, double alpha) {
  if (DualNeverTruncates(divergence, alpha)) return TauKind::kNever;
  if (alpha == 1.0) return TauKind::kKLPrimal;
  if (alpha == 2.0) return TauKind::kEuclid;
  if (alpha == 1.5 && divergence == BregmanDivergence::kPrimal) {
    return TauKind::kSqrtPrimal;
  }
  return TauKind::kGeneral;
}

// Lazily evaluates the per-k quantities of one distribution, requesting from
// SortedProbs only the prefix that has been asked for.
class PerK {
 public:
  PerK(const BregmanParams& params, SortedProbs& probs, BregmanWorkspace& ws)
      : divergence_(params.divergence),
        alpha_(params.alpha),
        kind_(ChooseTauKind(params.divergence, params.alpha)),
        probs_(probs),
        ws_(ws),
        n_(probs.Size()) {}

  // The leading min(need, n) sorted probabilities.
  const double* Probs(size_t need) { return probs_.Prefix(std::min(need, n_)); }

  // p_(k+1) (0-based p[k]), for k < n.
  double Next(size_t k) { return Probs(k + 1)[k]; }

  // tau_k for 1 <= k < n with p_(k+1) > 0.
  double Tau(size_t k) {
    const double p_next = Next(k);
    switch (kind_) {
      case TauKind::kNever:
        return HUGE_VAL;
      case TauKind::kKLPrimal:
        BuildPrefixSums(k);
        return KLPrimalTau(Kept(k), p_next);
      case TauKind::kEuclid:
        BuildPrefixSums(k);
        return EuclidTau(RemainingMass(Kept(k)), p_next, k);
      case TauKind::kSqrtPrimal:
        BuildPrefixSums(k + 1);
        return SqrtCost(k) - SqrtCost(k + 1) + ZeroCost(divergence_, alpha_, p_next);
      case TauKind::kGeneral:
        break;
    }
    // Telescoped: the zeroing costs of p_(k+2..) cancel, so no tail sums.
    // R_{k+1} starts from nu_k, an upper bound on its multiplier.
    double nu_k = 0.0;
    const double r_k = InSupport(k, 0.0, &nu_k);
    const double r_next = InSupport(k + 1, nu_k, nullptr);
    return r_k - r_next + ZeroCost(divergence_, alpha_, p_next);
  }

 private:
  // Prefix sums interleaved in ws.scratch: [2i] = sum_{j<i} p_j and
  // [2i+1] = sum_{j<i} sqrt(p_j) (the latter only for alpha = 1.5), built
  // up to i = m on demand.
  void BuildPrefixSums(size_t m) {
    if (have_sums_ && m <= built_) return;
    EnsureSize(ws_.scratch, 2 * (m + 1));
    double* ps = ws_.scratch.data();
    if (!have_sums_) {
      ps[0] = 0.0;
      ps[1] = 0.0;
      have_sums_ = true;
    }
    const double* p = Probs(m);
    const bool roots = kind_ == TauKind::kSqrtPrimal;
    for (size_t i = built_; i < m; ++i) {
      ps[2 * i + 2] = ps[2 * i] + p[i];
      ps[2 * i + 3] = roots ? ps[2 * i + 1] + std::sqrt(p[i]) : 0.0;
    }
    built_ = std::max(built_, m);
  }
  double Kept(size_t k) const { return ws_.scratch[2 * k]; }

  double SqrtCost(size_t k) const {
    const double root_sum = ws_.scratch[2 * k + 1];
    const double c = SqrtShift(RemainingMass(Kept(k)), root_sum, k);
    return SqrtPrimalCost(c, root_sum, k);
  }

  // R_k by a fixed-support solve, remembering the last two (the search
  // revisits R_{k+1} as the next probe's R_k). nu_upper: an upper bound on
  // the multiplier (0: none); nu_out: the multiplier found.
  double InSupport(size_t k, double nu_upper, double* nu_out) {
    for (const Cached& c : cache_) {
      if (c.k == k) {
        if (nu_out) *nu_out = c.nu;
        return c.cost;
      }
    }
    EnsureSize(ws_.q, k);
    EnsureSize(ws_.scratch, k);
    Multiplier nu;
    nu.upper = nu_upper;
    const double cost = Renormalise(divergence_, alpha_, Probs(k), k, ws_.q.data(),
                                    ws_.scratch.data(), &nu);
    cache_[next_slot_] = {k, cost, nu.value};
    next_slot_ ^= 1;
    if (nu_out) *nu_out = nu.value;
    return cost;
  }

  struct Cached {
    size_t k = 0;
    double cost = 0.0;
    double nu = 0.0;
  };

  const BregmanDivergence divergence_;
  const double alpha_;
  const TauKind kind_;
  SortedProbs& probs_;
  BregmanWorkspace& ws_;
  const size_t n_;
  bool have_sums_ = false;
  size_t built_ = 0;  // prefix sums are valid for i <= built_
  Cached cache_[2];
  int next_slot_ = 0;
};

// Smallest k in [k_lo, k_hi] with tau_k <= lambda, where k >= npos (all the
// positive mass kept) counts as satisfied and k_hi is returned if none is.
// tau is nonincreasing in k (discrete convexity, spec 5.2), so the predicate
// is monotone: gallop k_lo, k_lo+1, k_lo+3, k_lo+7, ... (k = 1, 2, 4, 8, ...
// from k_lo = 1), then bisect inside the last interval. The furthest probe is
// below 2k*, so at most 2k* sorted probabilities are ever requested.
size_t AdaptiveK(PerK& per_k, double lambda, size_t k_lo, size_t k_hi) {
  auto done = [&](size_t k) {
    if (k >= k_hi) return true;
    if (!(per_k.Next(k) > 0.0)) return true;  // k >= npos
    return per_k.Tau(k) <= lambda;
  };
  if (done(k_lo)) return k_lo;
  size_t bad = k_lo;  // done(bad) is false
  size_t good = k_hi;
  for (size_t step = 1;; step *= 2) {
    const size_t probe = k_hi - k_lo > 2 * step - 1 ? k_lo + 2 * step - 1 : k_hi;
    if (done(probe)) {
      good = probe;
      break;
    }
    bad = probe;
  }
  while (good - bad > 1) {
    const size_t mid = bad + (good - bad) / 2;
    if (done(mid)) {
      good = mid;
    } else {
      bad = mid;
    }
  }
  return good;
}

// Cost of the dropped tokens p_(k+1..n).
double TailCost(const BregmanParams& params, SortedProbs& probs, size_t k,
                double kept) {
  const size_t n = probs.Size();
  if (k >= n) return 0.0;
  const double alpha = params.alpha;
  if (DualNeverTruncates(params.divergence, alpha)) {
    return probs.Prefix(k + 1)[k] > 0.0 ? HUGE_VAL : 0.0;
  }
  if (alpha == 1.0) return RemainingMass(kept);  // primal KL: the tail's mass
  const double* p = probs.Prefix(k);
  double head = 0.0;
  for (size_t i = k; i-- > 0;) head += alpha == 2.0 ? p[i] * p[i] : std::pow(p[i], alpha);
  const double tail = probs.SumPow(alpha) - head;
  return ZeroCostScale(params.divergence, alpha) * std::max(tail, 0.0);
}

}  // namespace

BregmanResult DecodeBregman(const BregmanParams& params, SortedProbs& probs,
                            BregmanWorkspace& ws) {
  BregmanResult result;
  const size_t n = probs.Size();
  if (n == 0) {
    ws.q.clear();
    return result;
  }
  const bool adaptive = params.fixed_k == 0;
  size_t k;
  if (adaptive) {
    const size_t k_lo = std::min(std::max<size_t>(1, params.k_min), n);
    const size_t k_hi = std::max(k_lo, std::min(params.k_max, n));
    PerK per_k(params, probs, ws);
    k = AdaptiveK(per_k, params.lambda, k_lo, k_hi);
  } else {
    k = std::min(params.fixed_k, n);
  }

  EnsureSize(ws.q, k);
  EnsureSize(ws.scratch, k);
  const double* p = probs.Prefix(k);
  double kept = 0.0;
  for (size_t i = 0; i < k; ++i) kept += p[i];
  const double in_support = BregmanRenormalise(params.divergence, params.alpha, p,
                                               k, ws.q.data(), ws.scratch.data());
  ws.q.resize(k);  // shrinking keeps the capacity
  result.k = k;
  result.objective = in_support + TailCost(params, probs, k, kept);
  if (adaptive) result.objective += params.lambda * static_cast<double>(k);
  return result;
}

}  // namespace bd
