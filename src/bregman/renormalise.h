// Internal: the renormalisation entry point with a multiplier hint, and the
// general-alpha fixed-support solvers behind it. The solvers take the kept
// p[0..k) (k >= 2, rem = 1 - sum > 0) and write q[0..k), returning the
// in-support divergence; scratch holds k doubles.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/bregman.h"
#include "bregman/root_finding.h"
#include "bregman/support_sketch.h"
#include "kernels/det_math.h"
#include "kernels/support_map.h"

namespace bd {
namespace bregman_detail {

// d(q, p) = p^alpha g(L), L = log(q / p) > 0, for the primal alpha > 1, where
// p^alpha may underflow while g(L) is large (renormalise_primal.cc; also
// the cost of a support of one, d(1, p)).
double DivergenceAbove(double alpha, double p, double q, double log_ratio);

// A search probe's question about a support's multiplier: is sigma (a
// quantity increasing in nu, computed from nu and the last coordinate's q)
// on a given side of a threshold? decided(ctx, nu, q_last, nu_is_upper,
// tight) says whether nu, a bound on the root (an upper bound when
// nu_is_upper), already settles it: by a wide margin, or (tight) by a margin
// just above the rounding of sigma, for a bound that is the estimate of a
// nearly solved root widened by its predicted error.
struct SigmaTest {
  bool (*decided)(const void* ctx, double nu, double q_last, bool nu_is_upper, bool tight);
  const void* ctx;
};

// The multiplier nu of a solve, and optional bounds on it. The decoder's
// search passes the multipliers of the supports it has already solved: nu is
// nonincreasing in k (spec section 4.2), so a smaller support's nu bounds the
// new root from above and a larger one's from below, and a value interpolated
// between them is an excellent starting point.
struct Multiplier {
  double upper = 0.0;  // in: an upper bound on nu, or 0 for none
  double lower = 0.0;  // in: a lower bound on nu (0: none)
  double start = 0.0;  // in: a starting point inside the bounds, or 0 for none
  double value = 0.0;  // out: nu (0 for the closed forms and for rem = 0)
  // in: the general solvers write only q[k-1] and return NaN instead of the
  // cost (a search probe needs the multiplier and the last q, and pricing
  // every coordinate costs several transcendental calls each).
  bool last_only = false;
  // in: false: the general solvers write every q but return NaN instead of
  // the cost, skipping the divergences (a caller that needs q alone; the
  // algebraic maps price anyway).
  bool price = true;
  // in: SupportMass(p, k) when the caller has it (its bits exactly; 0:
  // the solver sums it).
  double kept = 0.0;
  // in, primal alpha = 3/2: sum_{i<k} sqrt(p_i) added in order (RootSum's
  // bits: the adaptive search's prefix sums) when the caller has it; 0: the
  // solver sums it.
  double root_sum = 0.0;
  // in: the per-coordinate powers of p[0..k) the solver needs (PrimalPower /
  // DualPower below), computed once by the caller for all the supports it
  // solves; null: the solver computes them (one pow per coordinate).
  const double* powers = nullptr;
  // in (with powers): makes powers[from, to) valid, for a caller whose
  // powers skip the tokens its sketch stands for (a primal solve for
  // alpha < 1 maps the blocks near its pole one by one: SupportSketch::For's
  // head). null: powers holds all of p[0..k).
  void (*ensure_powers)(void* owner, size_t from, size_t to) = nullptr;
  void* powers_owner = nullptr;
  // in: the sketch of the sorted prefix for this map, extended to at least
  // k (the decoder's, kept across the supports it solves); null: the solver
  // builds one (SketchFor). Its sums are the solver's evaluations.
  SupportSketch* sketch = nullptr;
  // in: a bound on Newton's quadratic constant for this equation (from a
  // neighbouring support's solve; 0: none); out: the constant this solve
  // measured (0: none). See SafeguardedNewton.
  double curvature = 0.0;
  // in: a solved neighbouring support (its size, its nu, and d(sum q)/d nu
  // there; anchor_k = 0: none), for a start one Newton step from it (see
  // AnchoredStart). Used only with `powers`, and both p and powers must then
  // hold max(k, anchor_k) entries.
  size_t anchor_k = 0;
  double anchor_nu = 0.0;
  double anchor_slope = 0.0;
  // out: d(sum q)/d nu at the solve's last evaluation (0: none), a later
  // solve's anchor_slope.
  double slope = 0.0;
  // in: a bound on the anchored start's error over its step squared, |start
  // - root| / (anchor_nu - start)^2 (from neighbouring solves, with a
  // margin; 0: none).
  double anchor_curvature = 0.0;
  // out: that ratio as this solve measured it (its first exact Newton step
  // from a short anchored start; 0: none).
  double measured_anchor_curvature = 0.0;
  // in: the signed ratio (root - start) / (start - anchor_nu)^2 of a
  // neighbouring support's anchored start (0: none): the start moves by it
  // (the quadratic term of the step from the anchor, which the one Newton
  // step leaves out), landing within its cube instead of its square; out:
  // that ratio as this solve measured it (of the start before the move).
  double anchor_correction = 0.0;
  double measured_anchor_correction = 0.0;
  // in: start is this support's nu already (a probe priced again): the
  // solver applies it without a Newton step.
  bool known = false;
  // in: start may be far from the root (a gallop's extrapolation): the
  // solver's first evaluations may be rough (SolveMultiplier).
  bool far_start = false;
  // out: the Newton evaluations the solve made, and how many of them were
  // exact passes over the support (the others: its sketch's nodes).
  int evaluations = 0;
  int exact_evaluations = 0;
  // in (with last_only): stop as soon as an evaluation settles this test;
  // null: solve to the root.
  const SigmaTest* settle = nullptr;
  // out: the solve stopped on `settle`: value is then a bound on the root
  // (an upper bound when settled_upper) and q[k-1] its q, not the solution;
  // estimate_nu (one Newton step from the bound) and estimate_q_last (the
  // last q there) estimate the solution.
  bool settled = false;
  bool settled_upper = false;
  bool settled_by_estimate = false;  // by the anchored start's predicted error
  double estimate_nu = 0.0;
  double estimate_q_last = 0.0;
  // in: where the solve counts its map evaluations (SumsOverSupport) and an
  // iteration limit reached (SafeguardedNewton); null: not counted.
  BregmanProbes* probes = nullptr;
};

// The hint's counter of solves that ended on their iteration limit (null:
// none to count in).
inline size_t* ExhaustedSolves(const Multiplier* hint) {
  return hint != nullptr && hint->probes != nullptr ? &hint->probes->exhausted_solves : nullptr;
}

// A start for support k from a solved neighbouring support a (the hint's
// anchor): sum q over support k at nu_a differs from support a's, which is 1,
// only by the coordinates between the two, so one Newton step on log(sum q)
// from nu_a costs |k - a| coordinates instead of k. Near the search's answer
// the supports are close, and the step lands within its quadratic error of
// the root (far closer than interpolating nu between the neighbours), so the
// solve needs one evaluation fewer. range(from, to, nu, &mass, &slope) sums
// q and dq/dnu over p[from..to). Returns 0 without a usable anchor.
template <class RangeSums>
double AnchoredStart(const Multiplier* hint, size_t k, const RangeSums& range) {
  if (hint == nullptr || hint->anchor_k == 0 || hint->anchor_k == k ||
      !(hint->anchor_slope > 0.0) || !(hint->anchor_nu > 0.0)) {
    return 0.0;
  }
  const size_t a = hint->anchor_k;
  const double nu = hint->anchor_nu;
  double mass = 0.0, slope = 0.0;
  range(k > a ? a : k, k > a ? k : a, nu, &mass, &slope);
  const double sign = k > a ? 1.0 : -1.0;
  const double excess = sign * mass;  // sum q over support k at nu_a, minus 1
  const double total_slope = hint->anchor_slope + sign * slope;
  if (!(excess > -1.0) || !(total_slope > 0.0)) return 0.0;
  const double step = Log1pF64(excess) / (total_slope / (1.0 + excess));
  return nu - step;
}

// p^b, b = alpha - 1, as the primal solver stores it: 0^b is 0 for alpha > 1
// (the token gains (b nu)^{1/b}) and +inf for alpha < 1 (q stays 0). A
// subnormal p^b is 0 too: it has a few significant bits, and the general map
// divides by it (x = b nu / p^b), so q = p (1 + x)^{1/b} would take its
// rounding (3e-5 of q at alpha 400, where p^b of 0.156 holds 4 bits, enough
// to put a larger p's q below a smaller one's). Exact as 0: the root
// b nu is above 1e-290 on this path (smaller roots take the log scale), so
// p^b < DBL_MIN moves q by under 1e-17 of it.
inline double PrimalPowerStored(double power) { return power >= DBL_MIN ? power : 0.0; }
inline double PrimalPower(double p, double b) {
  if (p > 0.0) return PrimalPowerStored(PowAlpha(p, b));
  return b > 0.0 ? 0.0 : HUGE_VAL;
}
// p^{2-alpha} (0 for p = 0), the dual's small-increment scale.
inline double DualPower(double p, double alpha) {
  return p > 0.0 ? PowAlpha(p, 2.0 - alpha) : 0.0;
}

// PrimalPower(p[i], b) / DualPower(p[i], alpha) for i < k into out, the
// exponents without an algebraic form as one SIMD pass (PowF64Many: the same
// bits).
void PrimalPowers(const double* p, size_t k, double b, double* out);
void DualPowers(const double* p, size_t k, double alpha, double* out);

// The sketch a solve of p[0..k) uses: the hint's when it has one for this
// map (extended to k here), else a per-thread one built over p[0..k).
SupportSketch* SketchFor(bool primal, double alpha, const double* p, size_t k, Multiplier* hint);

// start + sum_{i<k} sqrt(p_i), added in order of i (the roots on SIMD
// lanes); with running not null, running[i] = the sum through term i. One
// definition for the primal 3/2 solve's root sum and the adaptive search's
// prefix sums of roots, so they have the same bits at every k.
double RootSum(const double* p, size_t k, double start = 0.0, double* running = nullptr);

// The primal map for alpha < 1 (b < 0) at shift s = b nu < 0, q = (p^b +
// s)^{1/b}, has a pole at p* = (-s)^{1/b}, above every kept p (q >= p there),
// and as the kept q outgrow their p (q_max^b = p_max^b + s falls toward 1)
// it closes in on the largest: within 0.4 % of p_max when q_max = 3500 p_max
// (alpha = 1/4). The sketch's nodes stand for a block only as far from its
// map's singularities as the branch point at p = 0 is (it is sized for
// that one): blocks with a p above 3 p* / 8 are mapped token by token (at
// p* / 2 the block just below, with both singularities a p away, gives
// tokens' q 6e-13 off; from 3/8 on, 2e-14, as far from any pole:
// test_support_sketch.cc). Returns that bound on p (HUGE_VAL: no pole,
// alpha >= 1 or nu = 0).
inline double PrimalPoleLimit(double b, double shift) {
  if (!(b < 0.0) || !(shift < 0.0)) return HUGE_VAL;
  return 0.375 * PowAlpha(-shift, 1.0 / b);
}

// The view of a support of k whose blocks above exact_above are mapped
// token by token, their powers made valid first (Multiplier::ensure_powers).
inline SupportSketch::View ViewForSolve(const SupportSketch& sketch, size_t k, double exact_above,
                                        const Multiplier* hint) {
  const SupportSketch::View v = sketch.For(k, exact_above);
  if (v.head_end > 0 && hint != nullptr && hint->ensure_powers != nullptr) {
    hint->ensure_powers(hint->powers_owner, 0, v.head_end);
  }
  return v;
}

// The general solvers' sums_over (SolveMultiplier) from one map pass,
// sum(p, powers, n, weight) -> SupportMapSums (weight null: unweighted):
// over p[from..to) with the caller's per-token powers, or, sketched, for the
// whole support of k, the sketch's: the nodes of the blocks before the one
// holding k - 1 plus that block's tokens one by one. Returns whether the sums
// are exact (no block of the support was summed on its nodes). Counts the
// map evaluations in the hint's probes (map_terms) when it has them.
// exact_above and hint: ViewForSolve's (blocks near a pole).
template <class Sum>
bool SumsOverSupport(const SupportSketch& sketch, const double* p, const double* powers, size_t k,
                     size_t from, size_t to, double init, bool sketched, const Sum& sum,
                     double* sum_out, double* slope_out, double exact_above = HUGE_VAL,
                     const Multiplier* hint = nullptr) {
  SupportMapSums sums;
  bool exact = true;
  size_t terms = 0;
  if (sketched && from == 0 && to == k) {
    const SupportSketch::View v = ViewForSolve(sketch, k, exact_above, hint);
    const size_t n_nodes = v.nodes - v.first_node;
    const SupportMapSums head = sum(p, powers, v.head_end, nullptr);
    const SupportMapSums nodes = sum(sketch.node_p() + v.first_node,
                                     sketch.node_pow() + v.first_node, n_nodes,
                                     sketch.weight() + v.first_node);
    const SupportMapSums tokens =
        sum(p + v.exact_from, powers + v.exact_from, k - v.exact_from, nullptr);
    sums = {head.increment + nodes.increment + tokens.increment,
            head.slope + nodes.slope + tokens.slope};
    exact = n_nodes == 0;
    terms = v.head_end + n_nodes + (k - v.exact_from);
  } else {
    sums = sum(p + from, powers + from, to - from, nullptr);
    terms = to - from;
  }
  if (hint != nullptr && hint->probes != nullptr) hint->probes->map_terms += terms;
  *sum_out = init + sums.increment;
  *slope_out = sums.slope;
  return exact;
}

// sum_i f(p_i) over the support of k on its sketch: node_term(l) weighted
// over its nodes, token_term(i) over the tokens of the block holding k - 1
// (a start's first-order guess, which needs no exact pass).
template <class NodeTerm, class TokenTerm>
double SketchedSum(const SupportSketch& sketch, size_t k, const NodeTerm& node_term,
                   const TokenTerm& token_term) {
  const SupportSketch::View v = sketch.For(k);
  double sum = 0.0;
  for (size_t l = 0; l < v.nodes; ++l) sum += sketch.weight()[l] * node_term(l);
  for (size_t i = v.exact_from; i < k; ++i) sum += token_term(i);
  return sum;
}

// The general solvers' final q over p[0..k) at their multiplier, and with
// price the in-support divergence: apply(p, powers, n, q, price, weight)
// maps n tokens (writing q; with price returning the sum of their
// divergences, each times weight[i] when weight is not null, else NaN). The
// map runs on the sketch's nodes and on the tokens of the block holding
// k - 1 (and of the head near a pole); every other block's q comes from its
// nodes (SupportSketch::InterpolateQ), a polynomial per token instead of the
// map's transcendentals, and its divergences' sum from the nodes' weights
// (the quadrature the solvers' sums use: the divergence is as smooth in p as
// q is). Pricing a support then costs its nodes, not its tokens (decode() at
// k ~ V/2 priced every token: 2.4-3.3x the time of sample()). Returns that
// sum (NaN without price); q's bits do not depend on price.
template <class Apply>
double ApplyOverSupport(SupportSketch& sketch, const double* p, const double* powers, size_t k,
                        double* q, const Apply& apply, double exact_above = HUGE_VAL,
                        const Multiplier* hint = nullptr, bool price = false) {
  const SupportSketch::View v = ViewForSolve(sketch, k, exact_above, hint);
  double* node_q = sketch.NodeQ(v.nodes);
  double cost = 0.0;
  if (v.nodes > v.first_node) {
    cost += apply(sketch.node_p() + v.first_node, sketch.node_pow() + v.first_node,
                  v.nodes - v.first_node, node_q + v.first_node, price,
                  sketch.weight() + v.first_node);
  }
  sketch.InterpolateQ(p, v, node_q, q);
  if (v.head_end > 0) cost += apply(p, powers, v.head_end, q, price, nullptr);
  cost += apply(p + v.exact_from, powers + v.exact_from, k - v.exact_from, q + v.exact_from, price,
                nullptr);
  return price ? cost : NAN;
}

// The general solvers' output at their multiplier (apply as above): a
// probe's q[k-1] alone (returns NaN); else every q and, unless the hint
// declines it, the in-support divergence (ApplyOverSupport).
template <class Apply>
double FinishSolve(SupportSketch& sketch, const double* p, const double* powers, size_t k,
                   double* q, const Multiplier* hint, const Apply& apply,
                   double exact_above = HUGE_VAL) {
  if (hint != nullptr && hint->last_only) {
    apply(p + k - 1, powers + k - 1, 1, q + k - 1, false, nullptr);
    return NAN;
  }
  const bool price = hint == nullptr || hint->price;
  return ApplyOverSupport(sketch, p, powers, k, q, apply, exact_above, hint, price);
}

// BregmanRenormalise with an optional hint (may be null).
double Renormalise(BregmanDivergence divergence, double alpha, const double* p,
                   size_t k, double* q, double* scratch, Multiplier* nu);

// Bracket and starting point for a multiplier solve: the hint's bounds and
// start when there are any, else the solver's own guess inside (lo, hi).
// The bounds get a little rounding slack: nu_{k+1} may equal nu_k. guess()
// is called only when its value is used (it costs a pass over the support).
template <class Guess>
inline void StartFrom(const Multiplier* nu, const Guess& guess_fn, double* x0, double* lo,
                      double* hi) {
  if (nu != nullptr && nu->lower > 0.0 && nu->lower > *lo) {
    *lo = nu->lower * (1.0 - 1e-12);
  }
  if (nu != nullptr && nu->upper > 0.0 && nu->upper < *hi) {
    *hi = nu->upper * (1.0 + 1e-12);
    *x0 = nu->upper;
  } else {
    const double guess = guess_fn();
    *x0 = guess > *lo && guess < *hi ? guess : (*lo > 0.0 ? std::sqrt(*lo * *hi) : 0.5 * *hi);
  }
  if (nu != nullptr && nu->start > *lo && nu->start < *hi) {
    *x0 = nu->start;
  } else if (nu != nullptr && nu->start > 0.0 && nu->lower > 0.0 && nu->start <= *lo) {
    // A start just below the lower bound (an anchored start's error, with
    // a neighbour's bound about at the root): the bound itself, not the
    // guess or the bracket's middle, decades away (a climb back from there
    // costs a solve tens of evaluations).
    *x0 = nu->lower;
  }
  if (!(*x0 > *lo && *x0 < *hi)) *x0 = *lo + 0.5 * (*hi - *lo);
}

// Primal, alpha != 1: q_i = (p_i^{a-1} + (a-1) nu)^{1/(a-1)} with one nu >= 0
// fixed by sum q = 1 (spec section 3.1).
double RenormalisePrimalGeneral(double alpha, const double* p, size_t k,
                                double rem, double* q, double* scratch,
                                Multiplier* nu);

// Dual, alpha > 1: q_i^{a-2} (q_i - p_i) = nu for each i, one nu >= 0 fixed by
// sum q = 1 (spec section 3.2).
double RenormaliseDualGeneral(double alpha, const double* p, size_t k,
                              double rem, double* q, double* scratch,
                              Multiplier* nu);

// Whether a general solve's multiplier may lie below the double range. The
// root has nu >= (rem / k)^{max(1, alpha-1)} (up to a factor 1 / (alpha-1)):
// the increments sum to rem, and each is below nu for alpha < 2 and below
// (the primal's b nu, the dual's nu)^{1/(alpha-1)} otherwise. A large alpha
// with a tiny remainder takes it past 1e-290 (alpha 40, rem 4e-13, k 32:
// nu ~ 1e-530); such supports are solved in log scale instead (rare,
// scalar), where the unknown is r = nu^{1/(alpha-1)} (primal: (b nu)^{1/b}),
// the gain of a zero-probability token, which is >= rem / k.
constexpr double kLowestMultiplier = 1e-290;
inline bool MultiplierBelowRange(double alpha, double rem, size_t k) {
  return std::max(1.0, alpha - 1.0) * LogF64(rem / static_cast<double>(k)) <
         LogF64(kLowestMultiplier);
}

// A lower bound on that multiplier, by the same argument: nu >= (rem / k)^m
// (dual) or (rem / k)^m / m (primal, where b nu = r^b), m = max(1, alpha-1),
// with a little rounding slack; 0 when it underflows. The solvers' bracket
// starts there rather than at 0, so that their bisection steps are geometric
// from the first: from 0 they would halve nu, 200 steps reaching only 1e-60
// of the start, short of roots such as a dual's at alpha 20 (1e-115).
inline double MultiplierFloor(bool primal, double alpha, double rem, size_t k) {
  const double m = std::max(1.0, alpha - 1.0);
  const double floor = PowF64(rem / static_cast<double>(k), m);
  return (primal ? floor / m : floor) * (1.0 - 1e-9);
}

// The log-scale solves' root: log r with sum q = 1, by safeguarded Newton on
// log(sum q) over (lo, hi) from start. token(i, log_r, r, &slope) gives
// q_i - p_i and dq_i / d log r at r = e^{log_r}; *evaluations counts the
// passes over the support; exhausted (null: none) counts a solve that ends on
// its iteration limit. probes (null: unbounded): each pass is charged to
// log_scale_left; a pass it cannot pay ends the solve where it is, counted
// in log_scale_refused (the decode is then refused).
template <class Token>
double SolveLogGain(size_t k, double rem, const Token& token, double lo, double hi, double start,
                    int* evaluations, size_t* exhausted, BregmanProbes* probes) {
  auto eval = [&](double log_r, double* f, double* df) {
    if (probes != nullptr) {
      if (probes->log_scale_left < k) {
        ++probes->log_scale_refused;
        *f = 0.0;  // ends Newton here
        *df = 1.0;
        return;
      }
      probes->log_scale_left -= k;
    }
    ++*evaluations;
    const double r = ExpFullF64(log_r);
    double sum = -rem, slope = 0.0;
    for (size_t i = 0; i < k; ++i) {
      double s;
      sum += token(i, log_r, r, &s);
      slope += s;
    }
    *f = Log1pF64(sum);  // log(sum q)
    *df = slope / (1.0 + sum);
  };
  return SafeguardedNewton(eval, lo, hi, start, nullptr, 1e-16, 200, NeverSettled(), false, false,
                           exhausted);
}

// The hint's outputs after a log-scale solve: value is the multiplier (0
// when below the range); nothing measured to hand on.
inline void SetLogScaleOutputs(Multiplier* hint, double value, int evaluations) {
  if (hint == nullptr) return;
  hint->value = value;
  hint->curvature = 0.0;
  hint->slope = 0.0;
  hint->measured_anchor_curvature = hint->measured_anchor_correction = 0.0;
  hint->evaluations = hint->exact_evaluations = evaluations;
  hint->settled = hint->settled_by_estimate = false;
}

// The log-scale solves' work bound (BregmanProbes::log_scale_left; a hint
// without probes is unbounded). A solve that finds it spent is skipped: q =
// p, the multiplier 0, and it is counted (BregmanProbes::log_scale_refused),
// so the rest of the search runs in no time and the decode is refused.
inline bool LogScaleRefused(Multiplier* hint, const double* p, size_t k, double* q) {
  if (hint == nullptr || hint->probes == nullptr || hint->probes->log_scale_left >= k) return false;
  ++hint->probes->log_scale_refused;
  for (size_t i = 0; i < k; ++i) q[i] = p[i];
  SetLogScaleOutputs(hint, 0.0, 0);
  return true;
}
// Charges a log-scale solve's last pass over its k tokens (q and the cost;
// SolveLogGain charges its own evaluations) to the bound.
inline void ChargeLogScale(Multiplier* hint, size_t k) {
  if (hint == nullptr || hint->probes == nullptr) return;
  size_t& left = hint->probes->log_scale_left;
  left = left > k ? left - k : 0;
}

// An anchored start's step (relative to nu) below which its error is
// measured and predicted as quadratic in the step (SolveMultiplier).
constexpr double kShortAnchorStep = 1e-3;

// q[k-1] at nu (one coordinate's map through sums_over, SolveMultiplier's).
template <class SumsOver>
double LastQAt(const SumsOver& sums_over, const double* p, size_t k, double nu) {
  double incr = 0.0, unused = 0.0;
  sums_over(k - 1, k, nu, 0.0, &incr, &unused, false, false);
  return p[k - 1] + incr;
}

// A solve's start one Newton step from the hint's anchor (AnchoredStart),
// moved by the neighbours' quadratic term (within half its step from the
// anchor: a ratio measured on another equation is only trusted that far).
struct AnchorPlan {
  double from_anchor = 0.0;  // the one-step start (0: none)
  double step = 0.0;         // from_anchor - anchor_nu (0: none)
  double offset = 0.0;       // the quadratic move of the start (0: none)
};
template <class SumsOver>
AnchorPlan PlanAnchoredStart(const double* p, size_t k, const SumsOver& sums_over,
                             const Multiplier* hint) {
  AnchorPlan plan;
  if (hint == nullptr || hint->powers == nullptr) return plan;
  plan.from_anchor = AnchoredStart(hint, k, [&](size_t from, size_t to, double nu, double* mass,
                                                double* slope) {
    sums_over(from, to, nu, SupportMass(p + from, to - from), mass, slope, false, false);
  });
  plan.step = plan.from_anchor > 0.0 ? plan.from_anchor - hint->anchor_nu : 0.0;
  if (plan.from_anchor > 0.0 && hint->anchor_correction != 0.0) {
    const double offset = hint->anchor_correction * plan.step * plan.step;
    if (std::fabs(offset) <= 0.5 * std::fabs(plan.step)) plan.offset = offset;
  }
  return plan;
}

// Settles a probe (hint->settle) before any evaluation, and returns the
// bound that settled it (the hint's outputs filled), or 0. A neighbour's
// bound may settle it: the root lies below an upper bound and above a lower
// one, so the test at the bound decides as an evaluation there would (one
// coordinate's map). So may the anchored start nu0 (one Newton step from a
// solved support a few coordinates away): its error is predicted from the
// ratio error / step^2 measured on earlier anchored starts (anchor_curvature,
// with the hint's margin) plus the anchor slope's own error (from its last
// evaluation, one small step from its root), and the start widened by that
// error on either side decides the test by the tight margin when the probe
// is not at the crossing itself (near the search's answer, supports one
// token apart differ in sigma by far more than that error). Such bounds are
// estimates, as trusted as the solver's predicted stops. anchored_start:
// nu0 is the anchored start; anchor_step: |its step| (0: not anchored);
// anchor_offset: its quadratic move; from_anchor: the one-step start.
template <class SumsOver>
double SettleBeforeEvaluating(const double* p, size_t k, const SumsOver& sums_over,
                              Multiplier* hint, double nu0, double lo, double hi,
                              bool anchored_start, double from_anchor, double anchor_step,
                              double anchor_offset) {
  bool estimated = anchored_start && hint->anchor_curvature > 0.0;
  const double error = hint->anchor_curvature * anchor_step * anchor_step +
                       std::fabs(anchor_offset) + 1e-6 * anchor_step + 1e-13 * from_anchor;
  // Only a short step is quadratic (and its ratio transfers).
  if (!(anchor_step <= kShortAnchorStep * from_anchor && error <= 1e-6 * from_anchor)) {
    estimated = false;
  }
  for (int pass = 0; pass < 4; ++pass) {
    const bool upper = pass % 2 == 0, tight = pass >= 2;
    if (tight && !estimated) break;
    const double bound = tight ? (upper ? nu0 + error : nu0 - error)
                               : (upper ? hint->upper : hint->lower);
    if (!(bound > 0.0) || (tight && !(bound > lo && bound < hi))) continue;
    if (!hint->settle->decided(hint->settle->ctx, bound, LastQAt(sums_over, p, k, bound), upper,
                               tight)) {
      continue;
    }
    hint->settled = true;
    hint->settled_upper = upper;
    hint->settled_by_estimate = tight;
    hint->estimate_nu = nu0;
    hint->estimate_q_last = LastQAt(sums_over, p, k, nu0);
    hint->value = bound;
    hint->curvature = 0.0;  // none measured
    hint->slope = 0.0;
    hint->evaluations = hint->exact_evaluations = 0;
    return bound;
  }
  return 0.0;
}

// What a multiplier solve's evaluations measured, for the hint's outputs.
struct SolveTrace {
  double last_slope = 0.0;  // d(sum q)/d nu at the last evaluation
  int evaluations = 0;
  int exact_evaluations = 0;
  // |Newton step| of the first evaluation (at the start; -1: none yet), and
  // the signed step.
  double first_step = -1.0;
  double first_correction = 0.0;
};

// The hint's outputs after a Newton solve ending at nu with Newton's
// constant curvature; anchor_step and anchor_offset as in
// SettleBeforeEvaluating.
inline void RecordSolve(Multiplier* hint, double nu, double curvature, const SolveTrace& trace,
                        double anchor_step, double anchor_offset) {
  hint->value = nu;
  hint->curvature = curvature;
  hint->slope = trace.last_slope;
  hint->evaluations = trace.evaluations;
  hint->exact_evaluations = trace.exact_evaluations;
  // Both ratios of the start before its quadratic move: its error is
  // the first step plus the move.
  const bool measured =
      anchor_step > 0.0 && anchor_step <= kShortAnchorStep * nu && trace.first_step >= 0.0;
  const double error = trace.first_correction + anchor_offset;
  hint->measured_anchor_curvature = measured ? std::fabs(error) / (anchor_step * anchor_step) : 0.0;
  hint->measured_anchor_correction = measured ? error / (anchor_step * anchor_step) : 0.0;
}

// The multiplier of a general solver: safeguarded Newton on log(sum q) =
// log1p(F) over the support (the same root as F = sum q - 1, exact in one
// step for KL, and far closer to linear than F when the map is steep: alpha
// near or below 1), on (floor, hi) (floor: MultiplierFloor, or 0), from the
// hint's anchor (caller's powers only: the anchor reads them past k), its
// bounds and start, else guess().
// A known hint is applied without an evaluation. Fills the hint's outputs.
// sums_over(from, to, nu, init, &sum, &slope, sketched, rough): sum = init +
// the increments q - p over p[from..to), slope = the sum of dq/dnu there;
// sketched allows the support's sketch (whole supports only); rough allows
// the map's short form, each increment within rough_error of its own
// (relative; rough_error 0: the map has none); it returns whether the sums
// are exact (no block summed on its nodes).
//
// A solve that may start far from its root (a cold one, or a gallop's probe
// from an extrapolated start, Multiplier::far_start) evaluates roughly
// while Newton's steps are large (SafeguardedNewton's rough evaluations,
// half the work each), and exactly from there on.
//
// Every evaluation of the whole support runs on its sketch (SupportSketch:
// the blocks before the one holding k - 1 as 8 quadrature nodes each, the
// rest token by token), a few thousand nodes where the support has 10^5
// tokens: the root is the sketch's, within SupportSketch::kError / F' of the
// exact one (sum q = 1 within the sketch's error, measured at most ~6e-15 by
// test_support_sketch.cc; a support without a block of more than 8 tokens
// is summed exactly). The only passes over every kept token are then the
// caller's writing q. Which nodes a support has depends on p alone, so a
// solve from the same start (a support's final solve, cold) gives the same
// bits whatever came before it.
template <class SumsOver, class Guess>
double SolveMultiplier(const double* p, size_t k, double rem, const SumsOver& sums_over,
                       const Guess& guess, double floor, double hi, double rough_error,
                       Multiplier* hint) {
  SolveTrace trace;
  auto eval = [&](double nu, double* f, double* df, bool rough, double* f_error) {
    double sum = 0.0, slope = 0.0;
    ++trace.evaluations;
    rough = rough && rough_error > 0.0;
    trace.exact_evaluations += sums_over(0, k, nu, -rem, &sum, &slope, true, rough);
    trace.last_slope = slope;
    *f = Log1pF64(sum);
    *df = slope / (1.0 + sum);
    // The increments (>= 0) sum to sum + rem: sum, and log1p's argument,
    // move by at most rough_error of that (twice, for the roundings).
    *f_error = rough ? 2.0 * rough_error * (std::fabs(sum) + rem) / (1.0 + sum) : 0.0;
    if (trace.first_step < 0.0) {
      trace.first_step = std::fabs(*f) / *df;
      trace.first_correction = -*f / *df;
    }
  };
  const AnchorPlan plan = PlanAnchoredStart(p, k, sums_over, hint);
  Multiplier anchored;
  const Multiplier* start = hint;
  if (plan.from_anchor > 0.0) {
    anchored = *hint;
    anchored.start = plan.from_anchor + plan.offset;
    start = &anchored;
  }
  double nu0 = 0.0, lo = 0.0;
  // Cold: no bound or start from a neighbouring support (the solver's own
  // first-order guess, as a fixed-k decode starts): Newton may take power
  // steps (SafeguardedNewton).
  const bool cold =
      start == nullptr || !(start->upper > 0.0 || start->lower > 0.0 || start->start > 0.0);
  StartFrom(start, guess, &nu0, &lo, &hi);
  // The floor only keeps the bracket off 0, so that bisection is geometric:
  // the start stays where StartFrom put it, also below the floor (a probe's
  // low start is what makes its settled bound useful to the gallop).
  if (floor > lo) lo = std::min(floor, 0.5 * nu0);
  // Whether the start is the anchored one, and its step from the anchor.
  // (The step is the one Newton step's, before the quadratic term.)
  const bool anchored_start = plan.from_anchor > 0.0 && nu0 == plan.from_anchor + plan.offset;
  const double anchor_step = anchored_start ? std::fabs(plan.step) : 0.0;
  double curvature = hint != nullptr ? hint->curvature : 0.0;
  const bool known = hint != nullptr && hint->known && nu0 == hint->start;
  // A probe that only asks a sigma question stops at the first evaluation
  // whose side of the root settles it (q of the last coordinate there: one
  // element's map).
  auto settled = [&](double x, double f, double df) {
    if (hint == nullptr || hint->settle == nullptr || !(f == f)) return false;
    const bool upper = f > 0.0;  // sum q > 1 at x: the root is below x
    if (!hint->settle->decided(hint->settle->ctx, x, LastQAt(sums_over, p, k, x), upper, false)) {
      return false;
    }
    hint->settled = true;
    hint->settled_upper = upper;
    const double next = x - f / df;
    hint->estimate_nu = next > lo && next < hi ? next : x;
    hint->estimate_q_last = LastQAt(sums_over, p, k, hint->estimate_nu);
    return true;
  };
  if (hint != nullptr) {
    hint->settled = hint->settled_by_estimate = false;
    hint->measured_anchor_curvature = 0.0;
    hint->measured_anchor_correction = 0.0;
  }
  if (hint != nullptr && hint->settle != nullptr && !known) {
    const double bound = SettleBeforeEvaluating(p, k, sums_over, hint, nu0, lo, hi, anchored_start,
                                                plan.from_anchor, anchor_step, plan.offset);
    if (bound > 0.0) return bound;
  }
  // Power steps for a cold start; rough first evaluations for a start that
  // may be far off (cold, or a far_start), unless anchored.
  const bool rough_start = (cold || (hint != nullptr && hint->far_start)) && !anchored_start;
  const double nu = known ? nu0
                          : SafeguardedNewton(eval, lo, hi, nu0, &curvature, 1e-12, 200, settled,
                                              cold, rough_start, ExhaustedSolves(hint));
  if (hint != nullptr) RecordSolve(hint, nu, curvature, trace, anchor_step, plan.offset);
  return nu;
}

}  // namespace bregman_detail
}  // namespace bd
