// Sparse Bregman ("top-k") decoding: Noarov et al., "Foundations of Top-k
// Decoding for Language Models", NeurIPS 2025 (arXiv 2505.19371).
//
// One decoding step recovers a sparse q on the simplex from the model's p:
//   primal:  min_q  D_phi(q, p) + lambda * |supp q|
//   dual:    min_q  D_phi(p, q) + lambda * |supp q|
// over the alpha-entropy generator phi_a(x) = (x^a - x) / (a (a - 1)),
// phi_1(x) = x log x (KL: plain top-k renormalisation). The optimal support is
// a top-k set and the per-k cost is convex in k, so the adaptive k is the
// smallest k with tau_k = D(k) - D(k+1) <= lambda, found by galloping +
// bisection over a sorted prefix that grows only as far as the search needs.
// Math, conventions and golden vectors: spec/bregman.md.
//
// This is the float64 core: plain C++, no SIMD, no allocation after the
// workspace has grown to the largest k seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bregman/support_sketch.h"

namespace bd {

enum class BregmanDivergence : uint8_t { kPrimal, kDual };

struct BregmanParams {
  BregmanDivergence divergence = BregmanDivergence::kPrimal;
  double alpha = 1.0;   // > 0; dual needs >= 1, adaptive dual needs > 1
  double lambda = 0.0;  // adaptive mode: cost per kept token, >= 0
  size_t fixed_k = 0;   // > 0: fixed support size (lambda unused)
  size_t k_min = 1;     // adaptive clamps, 1 <= k_min <= k_max
  size_t k_max = SIZE_MAX;
};

// Returns nullptr when the parameters are valid, else a message that names the
// offending field (for RangeError at the JS boundary). Encodes the spec's
// binding rules: alpha > 0 and finite; dual needs alpha >= 1; adaptive dual
// needs alpha > 1 (alpha <= 1 never truncates); lambda >= 0 and finite;
// 1 <= k_min <= k_max.
const char* ValidateBregmanParams(const BregmanParams& params);

// The probabilities p, sorted descending (ties: lower token id first), made
// available a prefix at a time so that a decoder which stops at a small k
// never sorts the whole vocabulary.
class SortedProbs {
 public:
  virtual ~SortedProbs() = default;
  // Number of candidates (including any with p == 0).
  virtual size_t Size() const = 0;
  // Pointer to at least min(need, Size()) leading sorted probabilities. May
  // invalidate earlier pointers.
  virtual const double* Prefix(size_t need) = 0;
  // sum p_i^alpha over the candidates after the k largest (k <= Size(); the
  // objective's tail term; for alpha = 1 only where the tail is tiny), summed from the
  // dropped tokens themselves so that it keeps its relative precision however
  // small it is next to the kept head's.
  virtual double TailPow(size_t k, double alpha) = 0;
  // Whether these are the whole distribution (summing to 1 but for their
  // rounding), so that a support of all Size() of them drops nothing: its
  // kept mass is taken as 1, not as their float64 sum. False for a prefix
  // standing for a longer distribution (its rest is 1 - the kept mass).
  virtual bool Whole() const { return false; }
};

// A SortedProbs over an array that is already sorted descending.
class SortedProbsArray final : public SortedProbs {
 public:
  SortedProbsArray(const double* p, size_t n, bool whole = false) : p_(p), n_(n), whole_(whole) {}
  size_t Size() const override { return n_; }
  bool Whole() const override { return whole_; }
  const double* Prefix(size_t) override { return p_; }
  double TailPow(size_t k, double alpha) override;

 private:
  const double* p_;
  size_t n_;
  bool whole_;
};

struct BregmanResult {
  size_t k = 0;            // support size: the k largest probabilities
  double objective = 0.0;  // D(k) + lambda * k (fixed k: D(k))
  // Non-null: the decode needed more log-scale work than a call is allowed
  // (kLogScaleTokens in decode.cc); k and q are then meaningless and this
  // says what to do.
  const char* refused = nullptr;
};


// The adaptive search's switches. The defaults are the product's behaviour;
// the other settings exist to compare a path against its reference (the
// tests' checks) and never change k or q.
struct BregmanTuning {
  // Search probes may stop their solve at the first bound on the multiplier
  // that settles sigma_k against lambda (PerK::SigmaVersus in decode.cc).
  // false: every probe is solved to its root.
  bool settling = true;
  // Every settled probe is solved again to its root and compared with the
  // side its bound decided (BregmanProbes::settle_disagreements).
  bool settle_check = false;
  // The general solvers' tau_k from the two supports' multipliers where that
  // decides (PerK::LagrangianTau in decode.cc). false: every tau_k from the
  // two supports' costs.
  bool lagrangian_tau = true;
  // Every tau_k taken from the multipliers is also priced from the costs,
  // and the worst disagreement kept (BregmanProbes::lagrangian_worst).
  bool lagrangian_check = false;
};

// What the solver and the chain stage count as they work: read by the tests
// and the bench, never by the solver itself. Counters accumulate over every
// decode made with the workspace; the sorted-prefix fields describe the last
// ApplyBregman (stages.h) that used it.
struct BregmanProbes {
  // Search probes whose solve stopped on a bound (settling).
  size_t settled_probes = 0;
  // With settle_check: settled probes whose exact solve lay on the other
  // side of lambda (each side counted; expected 0).
  size_t settle_disagreements = 0;
  // Probes settled by an anchored start widened by its predicted error.
  size_t estimate_settles = 0;
  // Map evaluations of the solvers' Newton steps: a SupportSketch's nodes
  // and the tokens summed one by one (the measure of a search's work).
  size_t map_terms = 0;
  // Multiplier solves that ended on their iteration limit instead of a root
  // (expected 0).
  size_t exhausted_solves = 0;
  // Search decisions taken on tau_k from the multipliers (lagrangian_tau).
  size_t lagrangian_decided = 0;
  // With lagrangian_check: the worst |tau from the multipliers - tau from
  // the costs| / the error bound the decision trusted (a test resets it).
  double lagrangian_worst = 0.0;
  // The last ApplyBregman: how many entries of the candidates' order were
  // sorted when its search ended (before the truncation to k), and the sizes
  // it asked EnsureSorted for as the search went (the first
  // kRecordedPrefixRequests of them).
  static constexpr size_t kRecordedPrefixRequests = 16;
  size_t sorted_prefix = 0;
  size_t prefix_requests[kRecordedPrefixRequests] = {};
  size_t prefix_request_count = 0;
  // The log-scale solves' work bound for the current decode, in tokens
  // evaluated (DecodeBregman sets it to kLogScaleTokens, decode.cc; SIZE_MAX: none),
  // and the solves that found it spent and were skipped (the decode is then
  // refused: BregmanResult::refused).
  size_t log_scale_left = SIZE_MAX;
  size_t log_scale_refused = 0;
};

// Reusable scratch for the decoder; grows to the largest prefix seen. Also
// holds the search's switches and counters, so that decoders on separate
// threads never share them.
struct BregmanWorkspace {
  std::vector<double> q;        // renormalised support, sorted order
  std::vector<double> scratch;  // solver temporaries
  std::vector<double> powers;   // per-coordinate powers of p for the search
  std::vector<size_t> powered_to;  // per chunk of powers: computed up to here
  std::vector<double> mass_lanes;  // SupportMass's lanes saved along the prefix
  bregman_detail::SupportSketch sketch;  // the general solvers' sums
  BregmanTuning tuning;
  BregmanProbes probes;
};

// Decodes one distribution. q (k = result.k values, aligned with the sorted
// prefix, summing to 1) is left in ws.q's first k entries (ws.q may be
// longer: it never shrinks). Parameters must be valid. Without
// want_objective, result.objective is NaN and the tail's pass is skipped
// (k and q do not depend on it).
BregmanResult DecodeBregman(const BregmanParams& params, SortedProbs& probs,
                            BregmanWorkspace& ws, bool want_objective = true);

// Building blocks, exposed for tests and for the documentation scripts.
// Renormalises the kept p[0..k) (descending, sum <= 1; a sum that rounds
// above 1 is treated as 1) into q[0..k) and returns the in-support divergence
// R (the per-k cost without the zeroing terms of the dropped tokens).
// scratch: at least k doubles, clobbered. Same alpha rules as the decoder
// (dual: alpha >= 1); q_i >= p_i, order is preserved, sum q = 1.
double BregmanRenormalise(BregmanDivergence divergence, double alpha,
                          const double* p, size_t k, double* q,
                          double* scratch);
// Cost of setting a coordinate with probability p to zero: d(0, p) primal
// (p^alpha / alpha; KL: p), d(p, 0) dual (p^alpha / (alpha (alpha - 1));
// +inf for p > 0 when alpha <= 1).
double BregmanZeroCost(BregmanDivergence divergence, double alpha, double p);

}  // namespace bd
