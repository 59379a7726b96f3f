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
#include "kernels/det_math.h"
#include "kernels/support_map.h"

namespace bd {
namespace {

using namespace bregman_detail;

// Whether a support of the k largest keeps every candidate of a whole
// distribution (SortedProbs::Whole), so drops nothing: its kept mass is 1 by
// the normaliser's definition. Summed, it carries float64's rounding
// (~1e-16), which the solvers would spread as dropped mass: an objective of
// 2.6e-107 for 0 at lambda 0, and at a large alpha a remainder per token
// below the double range, which would send the solve to its slow log-scale
// path (seconds a call for a dual alpha 20 on a flat row). The search's
// kept masses (PerK::KeptMass) and the final solve both ask it.
bool DropsNothing(const SortedProbs& probs, size_t k) { return k >= probs.Size() && probs.Whole(); }

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
        n_(probs.Size()),
        refused_at_start_(ws.probes.log_scale_refused) {
    // The sketch is this distribution's: rebuilt per decode.
    if (kind_ == TauKind::kGeneral) {
      ws_.sketch.Reset(divergence_ == BregmanDivergence::kPrimal, alpha_);
      std::fill(ws_.powered_to.begin(), ws_.powered_to.end(), 0);
    }
  }

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
        return KLPrimalTau(KeptMass(k), p_next);
      case TauKind::kEuclid:
        return EuclidTau(RemainingMass(KeptMass(k)), p_next, k);
      case TauKind::kSqrtPrimal:
        BuildRootSums(k + 1);
        return SqrtCost(k) - SqrtCost(k + 1) + ZeroCost(divergence_, alpha_, p_next);
      case TauKind::kGeneral:
        break;
    }
    // Telescoped: the zeroing costs of p_(k+2..) cancel, so no tail sums.
    // (Solve returns a cache slot that the next solve may reuse: copy.)
    const double r_k = Solve(k, true, nullptr).cost;
    const double r_next = Solve(k + 1, true, nullptr).cost;
    return r_k - r_next + ZeroCost(divergence_, alpha_, p_next);
  }

  // tau_k, or a value on the same side of lambda: the general solvers
  // price tau_k from the multipliers of supports k and k + 1 where that
  // decides (LagrangianTau), from the two supports' costs otherwise.
  double TauVersus(size_t k, double lambda) {
    double tau, error;
    if (kind_ != TauKind::kGeneral || !ws_.tuning.lagrangian_tau ||
        !LagrangianTau(k, &tau, &error)) {
      return Tau(k);
    }
    if (ws_.tuning.lagrangian_check) {
      // The costs' difference is the less accurate one where tau is tiny
      // next to nu: each cost moves by nu times the rounding of sum q - 1.
      const double priced = Tau(k);
      const double nu_sum = Solve(k, false, nullptr).nu + Solve(k + 1, false, nullptr).nu;
      double& worst = ws_.probes.lagrangian_worst;
      worst = std::max(worst, std::fabs(tau - priced) / (error + 1e-15 * nu_sum));
    }
    if (!(std::fabs(tau - lambda) > error)) return Tau(k);  // too close to call
    ++ws_.probes.lagrangian_decided;
    return tau;
  }

  bool General() const { return kind_ == TauKind::kGeneral; }

  // sigma_k: the conjugate value of the k-th kept coordinate at the support-k
  // multiplier (see Sigma below). It sandwiches the gains,
  // tau_{k-1} >= sigma_k >= tau_k, so one fixed-support solve per probe
  // decides the search up to one step. For 1 <= k <= n with p_(k) > 0.
  double Sigma(size_t k) { return Solve(k, false, nullptr).sigma; }

  // sigma_k, or a bound on it on the same side of lambda: a probe far from
  // lambda stops Newton at the first evaluation that bounds nu_k on the side
  // that settles sigma_k <= lambda (sigma is increasing in nu: primal,
  // d(0, q_k) grows with q_k; dual, d sigma / d nu = q_k). Only a margin of
  // kSettleSlack lets a bound decide.
  double SigmaVersus(size_t k, double lambda, bool likely_done = false) {
    struct Test {
      const PerK* self;
      double p_last, lambda;
      bool single;
    };
    const Test test{this, Probs(k)[k - 1], lambda, k == 1};
    const SigmaTest settle{
        [](const void* ctx, double nu, double q_last, bool nu_is_upper, bool tight) {
          const Test& t = *static_cast<const Test*>(ctx);
          double nu_copy = nu;
          const double sigma = t.self->ConjugateGain(t.p_last, q_last, t.single, &nu_copy);
          const double slack = tight ? kEstimateSlack : kSettleSlack;
          return nu_is_upper ? sigma <= t.lambda * (1.0 - slack)
                             : sigma > t.lambda * (1.0 + slack);
        },
        &test};
    const Solved& probe = Solve(k, false, ws_.tuning.settling ? &settle : nullptr, likely_done);
    const double value = probe.sigma;
    if (!probe.exact) {
      ++ws_.probes.settled_probes;
      if (ws_.tuning.settle_check) {
        // The exact solve replaces the settled entry (as a later exact
        // request would): sigma_k must lie on the side the bound decided
        // (an upper bound on nu decides sigma_k <= lambda), and so must the
        // value handed to the search.
        const bool decided_done = probe.nu_lo == 0.0;
        const bool exact_done = Sigma(k) <= lambda;
        ws_.probes.settle_disagreements +=
            (decided_done != exact_done) + ((value <= lambda) != exact_done);
      }
    }
    return value;
  }

  // The final solve of support k: a hint of the cached powers, mass and
  // sketch (the same values the solver would compute), and the search's
  // multiplier only where the search solved k cold (as a fixed-k decode
  // does): the adaptive q must be bit-identical to the fixed-k q of the same
  // support, whatever path the search took. Returns true, with the cost,
  // when ws.q holds that solve's q still (nothing left to do).
  bool FinalFor(size_t k, Multiplier* nu, double* cost) {
    if (kind_ == TauKind::kSqrtPrimal && k <= built_) {
      nu->root_sum = ws_.scratch[k];  // RootSum(p, k)'s bits
    }
    if (kind_ != TauKind::kGeneral) return false;
    SupportHint(k, nu);
    for (const Solved& c : cache_) {
      if (c.k != k || !c.exact || !c.cold) continue;
      if (full_q_ == k && !std::isnan(c.cost)) {
        *cost = c.cost;
        return true;
      }
      nu->upper = nu->lower = nu->start = c.nu;
      nu->known = true;  // applied at its nu, without a Newton step
    }
    return false;
  }

  // Whether a log-scale solve of this decode found its budget spent
  // (BregmanProbes::log_scale_refused): the decode is refused.
  bool Refused() const { return ws_.probes.log_scale_refused != refused_at_start_; }

 private:
  // tau_k without pricing either support (each cost is a pass of several
  // transcendentals per kept token). With G_k(nu) = nu + sum_{i<=k}
  // phi_i(nu), phi_i(nu) = min_q d_i(q) - nu q, the dual function of support
  // k (R_k = G_k(nu_k), G_k' = 1 - S_k, S_k = sum_{i<=k} q_i(nu)) and
  // G_{k+1} = G_k + phi_{k+1}:
  //   tau_k = R_k - R_{k+1} + zero_cost(p_(k+1))
  //         = sigma_{k+1} + I_k,  I_k = int_{nu_{k+1}}^{nu_k} (1 - S_k(s)) ds >= 0,
  // sigma_{k+1} as in Sigma (the sandwich's lower side). The integrand falls
  // from q_{k+1}(nu_{k+1}) at nu_{k+1} (where S_{k+1} = 1) to 0 at nu_k;
  // cubic Hermite on the ends' values and slopes (S_k' = S_{k+1}' -
  // dq_{k+1}/dnu at nu_{k+1}) integrates it. Its error grows like r^4 I, r =
  // (nu_k - nu_{k+1}) / nu_{k+1}, the singularities of the maps lying at a
  // distance of order nu, or the slope's relative change over the interval
  // where that is larger (measured: at most r^4 I over primal 0.25-6 and dual
  // 1.1-6, k 9 to V/2; the costs' difference is less accurate where tau is
  // tiny next to nu, each cost moving by nu times the rounding of sum q - 1,
  // about 1e-10 of tau at k ~ V/2). Writes tau and a bound on its error;
  // returns false, leaving tau to the costs, where r > 1/8 (small supports,
  // where costs are cheap) or a solve measured no slope.
  bool LagrangianTau(size_t k, double* tau, double* error) {
    const Solved a = Solve(k, false, nullptr);  // (a copy: the next solve may reuse the slot)
    const Solved& b = Solve(k + 1, false, nullptr);
    if (!a.exact || !b.exact || !(a.slope > 0.0) || !(b.slope > 0.0) || !(b.nu > 0.0)) {
      return false;
    }
    const double delta = a.nu - b.nu;
    double r = delta / b.nu;
    const double q = b.q_last, p = Next(k);
    if (!(r >= 0.0 && r <= 0.125) || !(q > 0.0)) return false;
    // dq/dnu of the new coordinate: primal q^b - p^b = b nu gives q^{2-alpha};
    // dual q^{alpha-2} (q - p) = nu gives q^{3-alpha} / ((alpha-1) q - (alpha-2) p).
    const double dq = divergence_ == BregmanDivergence::kPrimal
                          ? PowAlpha(q, 2.0 - alpha_)
                          : PowAlpha(q, 3.0 - alpha_) /
                                ((alpha_ - 1.0) * q - (alpha_ - 2.0) * p);
    // int_0^delta f, f(0) = q, f(delta) = 0, f' = -S_k': Hermite's
    // delta (f0 + f1) / 2 + delta^2 (f0' - f1') / 12.
    const double slope_x = a.slope, slope_y = b.slope - dq;  // S_k' at nu_k, nu_{k+1}
    const double gap = 0.5 * delta * q + delta * delta / 12.0 * (slope_x - slope_y);
    // The slope's relative change over the interval: ~ delta / (the distance
    // to the nearest singularity), where that is nearer than nu (primal alpha
    // < 1 with q >> p: q^b = p^b + b nu reaches 0 a distance q^b / |b| on).
    const double bend = std::fabs(slope_x - slope_y) / std::min(slope_x, slope_y);
    if (!(bend <= 0.125) || !(slope_y > 0.0)) return false;
    r = std::max(r, bend);
    *tau = b.sigma + gap;
    // The roots are the sketch's (SolveMultiplier), each within kError / S'
    // of the exact one, and tau moves by q / 2 per unit of either.
    const double roots = q * SupportSketch::kError * (1.0 / slope_x + 1.0 / slope_y);
    *error = 16.0 * r * r * r * r * gap + roots + kLagrangianSlack * std::fabs(*tau);
    return std::isfinite(*tau) && *error > 0.0;
  }
  // Above the rounding of sigma, of the multipliers' difference and of the
  // costs' difference this replaces (about 1e-10 of tau at k ~ V/2).
  static constexpr double kLagrangianSlack = 1e-9;

  // Prefix sums of the roots in ws.scratch, [i] = sum_{j<i} sqrt(p_j) (alpha
  // = 1.5), added in order (RootSum's bits at every k), built up to i = m on
  // demand. (The kept mass comes from KeptMass's lanes, the bits of the
  // solvers' SupportMass: a serial prefix sum of p would be one dependent
  // chain of adds.)
  void BuildRootSums(size_t m) {
    if (m <= built_) return;
    EnsureSize(ws_.scratch, m + 1);
    double* ps = ws_.scratch.data();
    if (built_ == 0) ps[0] = 0.0;
    RootSum(Probs(m) + built_, m - built_, ps[built_], ps + built_ + 1);
    built_ = m;
  }

  double SqrtCost(size_t k) {
    const double root_sum = ws_.scratch[k];
    const double c = SqrtShift(RemainingMass(KeptMass(k)), root_sum, k);
    return SqrtPrimalCost(c, root_sum, k);
  }

  struct Solved {
    size_t k = 0;        // 0: empty slot
    double cost = 0.0;   // R_k
    double nu = 0.0;     // multiplier of support k (exact: the root; else a bound on it)
    double sigma = 0.0;  // see Sigma() (exact: sigma_k; else a bound, see SigmaVersus)
    double q_last = 0.0;  // q_k at nu
    double curvature = 0.0;  // Newton's quadratic constant measured by the solve (0: none)
    double slope = 0.0;      // d(sum q)/d nu at nu (0: none), for a neighbour's anchor
    bool exact = true;       // false: a settled probe, nu only bounds the root
    bool cold = false;       // solved from no hint but the support's own (as a fixed-k decode)
    double nu_hi = 0.0;      // an upper bound on the root (0: none)
    double nu_lo = 0.0;      // a lower bound on the root (0: none; settled: 0 iff it decided
                             // sigma_k <= lambda)
    double guess = 0.0;      // exact: nu; settled: the estimate its start came from
    double anchor_curvature = 0.0;  // see Multiplier::anchor_curvature (0: none)
    double anchor_correction = 0.0;  // see Multiplier::anchor_correction (0: none)
  };

  // Far above the rounding of sigma and of the equation's sign near its root
  // (~1e-14), and wide enough that a probe within 0.01 % of lambda (the
  // search's last ones, which it prices exactly anyway) is solved to its
  // root (a narrower margin lets such probes settle and then be solved
  // again exactly).
  static constexpr double kSettleSlack = 1e-4;
  // The margin for an anchored estimate widened by its predicted error (see
  // SolveMultiplier): above sigma's rounding (~1e-14), as AdaptiveK's tie
  // slack; supports next to each other differ by ~1e-5 or more near k ~ V/2.
  static constexpr double kEstimateSlack = 1e-9;
  // A galloping probe's start, as a fraction of the extrapolated nu (see
  // Solve): low enough that the first evaluation usually bounds nu from
  // below, close enough that its Newton step estimates the root well.
  // Measured over primal 0.25-4 and dual 1.5-3 at k ~ 1000 and ~ V/2: 10-28 %
  // fewer coordinates evaluated per decode at 0.7-0.8, against 0.9 and 1.
  static constexpr double kLowStart = 0.8;
  // Neighbours this far apart (as a ratio of k) interpolate a start as a
  // power of k, and let its first evaluations be rough.
  static constexpr double kFarNeighbours = 1.1;
  // The margin on the neighbours' Newton constant and anchored-start error
  // ratio handed to a solve (they change little from one support to the
  // next).
  static constexpr double kCurvatureMargin = 100.0;

  // The fixed-support solve of support k, remembered in a small cache (the
  // search revisits its neighbours). Bounds and a start for the multiplier
  // come from the cached supports nearest below and above (nu is
  // nonincreasing in k; a settled probe contributes the bound it has).
  // Without need_cost only nu and the last q are computed (a probe's sigma);
  // pricing a cached probe later reuses its nu, so Newton stops after one
  // pass. With settle (a probe's SigmaVersus) Newton may stop early; such a
  // result is cached as a bound and solved again when asked exactly.
  const Solved& Solve(size_t k, bool need_cost, const SigmaTest* settle,
                      bool likely_done = false) {
    const Neighbours n = FindNeighbours(k);
    if (n.same != nullptr && (!need_cost || !std::isnan(n.same->cost))) return *n.same;
    // Every solve starts from what the neighbours know (bounds, a start, an
    // anchor), exact requests too: the final solve of the answer's support is
    // then solved once more cold, as a fixed-k decode solves it (FinalFor),
    // and the search's exact solves around the answer (tau at k - 1 and k)
    // cost two or three evaluations each instead of five.
    EnsureSize(ws_.q, k);
    EnsureSize(ws_.scratch, k);
    Multiplier nu;
    nu.last_only = !need_cost;
    nu.settle = n.same == nullptr && !need_cost ? settle : nullptr;
    if (n.same != nullptr) {
      nu.upper = nu.lower = nu.start = n.same->nu;
      nu.known = true;  // priced at the probe's own nu, without a Newton step
    } else {
      BoundsFromNeighbours(n, &nu);
      StartFromNeighbours(n, k, likely_done, &nu);
    }
    // The neighbours' Newton constant (nu's equation changes little from
    // one support to the next), with a wide margin: a start interpolated
    // between close neighbours is within ~1e-9 of the root, and one Newton
    // step from there is then known to be exact (one pass, not two).
    for (const Solved* c : {n.below, n.above}) {
      if (c != nullptr) nu.curvature = std::max(nu.curvature, kCurvatureMargin * c->curvature);
    }
    const double curvature_in = nu.curvature;
    if (n.same == nullptr) AnchorOn(ChooseAnchor(k, n), k, &nu);
    // Cold: nothing from the neighbours (the first solves of a search), as a
    // fixed-k decode starts; FinalFor reuses such a solve of the answer.
    const bool cold = nu.upper == 0.0 && nu.lower == 0.0 && nu.start == 0.0 && nu.anchor_k == 0 &&
                      nu.curvature == 0.0 && nu.settle == nullptr;
    SupportHint(k, &nu);
    const Solved out = SolveWith(k, need_cost, curvature_in, cold, &nu);
    if (n.same != nullptr) {
      // Keep the probe's own nu and sigma: the decisions already taken on
      // them stay consistent.
      n.same->cost = out.cost;
      return *n.same;
    }
    return Remember(out, n.same_bound);
  }

  // The cached supports a solve of k starts from.
  struct Neighbours {
    // Bounds: the nearest smaller support with an upper bound on its nu,
    // the nearest larger one with a lower bound.
    const Solved* upper_from = nullptr;
    const Solved* lower_from = nullptr;
    // Starts: the nearest two smaller and the nearest larger support, bound
    // or not (their guesses).
    const Solved* below = nullptr;
    const Solved* below2 = nullptr;
    const Solved* above = nullptr;
    Solved* same = nullptr;        // this support, solved exactly
    Solved* same_bound = nullptr;  // this support, settled earlier
  };

  Neighbours FindNeighbours(size_t k) {
    Neighbours n;
    for (Solved& c : cache_) {
      if (c.k == 0) continue;
      if (c.k == k) (c.exact ? n.same : n.same_bound) = &c;
      if (c.k < k) {
        if (c.nu_hi > 0.0 && (n.upper_from == nullptr || c.k > n.upper_from->k)) n.upper_from = &c;
        if (n.below == nullptr || c.k > n.below->k) {
          n.below2 = n.below;
          n.below = &c;
        } else if (n.below2 == nullptr || c.k > n.below2->k) {
          n.below2 = &c;
        }
      }
      if (c.k > k) {
        if (c.nu_lo > 0.0 && (n.lower_from == nullptr || c.k < n.lower_from->k)) n.lower_from = &c;
        if (n.above == nullptr || c.k < n.above->k) n.above = &c;
      }
    }
    return n;
  }

  // The bracket on nu_k: nu is nonincreasing in k, so a smaller support's
  // upper bound and a larger one's lower bound hold for k; this support's
  // own settled bound where it is tighter.
  static void BoundsFromNeighbours(const Neighbours& n, Multiplier* nu) {
    if (n.upper_from != nullptr && n.upper_from->k > 1) nu->upper = n.upper_from->nu_hi;
    if (n.lower_from != nullptr) nu->lower = n.lower_from->nu_lo;
    if (n.same_bound != nullptr) {
      if (n.same_bound->nu_hi > 0.0 && (nu->upper == 0.0 || n.same_bound->nu_hi < nu->upper)) {
        nu->upper = n.same_bound->nu_hi;
      }
      if (n.same_bound->nu_lo > nu->lower) nu->lower = n.same_bound->nu_lo;
    }
  }

  // The start for nu_k from the neighbours' guesses (none where they give
  // none): interpolated between a smaller and a larger support, or
  // extrapolated from the two smaller ones while galloping up.
  static void StartFromNeighbours(const Neighbours& n, size_t k, bool likely_done,
                                  Multiplier* nu) {
    const Solved* below = n.below;
    const Solved* below2 = n.below2;
    const Solved* above = n.above;
    if (below != nullptr && below->k > 1 && below->guess > 0.0 && above != nullptr &&
        above->guess > 0.0) {
      // nu_k is smooth in k: interpolate between the neighbours, linearly
      // where they are close, as a power of k (log nu linear in log k, as
      // the gallop extrapolates) where they span more than kFarNeighbours,
      // whose first evaluations may then be rough (a straight line between
      // supports k and 2k starts a probe a few percent off its root).
      if (above->k > kFarNeighbours * below->k) {
        nu->start = below->guess * ExpFullF64(LogF64(above->guess / below->guess) *
                                              (LogF64(static_cast<double>(k) /
                                                      static_cast<double>(below->k)) /
                                               LogF64(static_cast<double>(above->k) /
                                                      static_cast<double>(below->k))));
        nu->far_start = true;
      } else {
        const double t = static_cast<double>(k - below->k) /
                         static_cast<double>(above->k - below->k);
        nu->start = below->guess + (above->guess - below->guess) * t;
      }
    } else if (above == nullptr && below != nullptr && below->k > 1 && below->guess > 0.0 &&
               below2 != nullptr && below2->k > 1 && below2->guess > 0.0) {
      // Galloping up: nu_k decays roughly like a power of k, so extrapolate
      // log nu linearly in log k from the two supports below. Newton
      // from there needs two or three evaluations instead of five from
      // the upper bound (StartFrom ignores a start outside the bracket).
      nu->start = below->guess * ExpFullF64(LogF64(below->guess / below2->guess) *
                                            (LogF64(static_cast<double>(k) /
                                                    static_cast<double>(below->k)) /
                                             LogF64(static_cast<double>(below->k) /
                                                    static_cast<double>(below2->k))));
      // A probe that may stop on a bound starts low: a gallop's probes
      // short of the answer (sigma above lambda) then settle on the first
      // evaluation's lower bound on nu. Not the gallop's shortcut, aimed
      // just past the answer: from the extrapolation itself its first
      // evaluations bound nu on either side, and an upper bound settles
      // sigma <= lambda (7-15 % fewer map evaluations than a low start or a
      // start 1.1x or 1.25x high, where sigma at the bound is too far above
      // sigma_k to settle). The start is an extrapolation: its first
      // evaluations may be rough.
      if (nu->settle != nullptr && !likely_done) nu->start *= kLowStart;
      nu->far_start = true;
    }
  }

  // The nearest exactly solved support, when it is close (its coordinates
  // beyond the shared ones, mapped one by one, cost at most a quarter of an
  // evaluation: the sketch's nodes and its boundary block's tokens), for a
  // start one Newton step from it; null: none. One beyond a settled
  // neighbour (near the answer the neighbours are often settled probes) only
  // from a few supports away: from farther, the step can overshoot far
  // (concave maps) and cost the solve more than it saves.
  const Solved* ChooseAnchor(size_t k, const Neighbours& n) {
    const SupportSketch::View view = SketchView(k);
    const size_t evaluation = view.nodes + (k - view.exact_from);
    const Solved* anchor = nullptr;
    for (const Solved& c : cache_) {
      if (c.k == 0 || !c.exact || !(c.slope > 0.0) || !(c.nu > 0.0) || c.k < 2) continue;
      const size_t gap = c.k > k ? c.k - k : k - c.k;
      if (4 * gap > evaluation) continue;
      if (&c != n.below && &c != n.above && gap > kFarAnchorGap + k / 1024) continue;
      const size_t best = anchor == nullptr ? 0 : (anchor->k > k ? anchor->k - k : k - anchor->k);
      if (anchor == nullptr || gap < best) anchor = &c;
    }
    return anchor;
  }

  // Hands the solve of k its anchor (null: none) and what the cached solves
  // measured of anchored starts.
  void AnchorOn(const Solved* anchor, size_t k, Multiplier* nu) const {
    if (anchor == nullptr) return;
    nu->anchor_k = anchor->k;
    nu->anchor_nu = anchor->nu;
    nu->anchor_slope = anchor->slope;
    // The anchored starts' measured error ratio, from any cached solve,
    // with the curvature's margin (the ratio changes little between
    // neighbouring supports).
    for (const Solved& c : cache_) {
      nu->anchor_curvature = std::max(nu->anchor_curvature, kCurvatureMargin * c.anchor_curvature);
    }
    // That error is Newton's quadratic one (from anchor_nu) plus the
    // anchor slope's: a bound on Newton's constant too.
    nu->curvature = std::max(nu->curvature, nu->anchor_curvature);
    // Its signed ratio, from the nearest support that measured one.
    size_t nearest = 0;
    for (const Solved& c : cache_) {
      if (c.k == 0 || c.anchor_correction == 0.0) continue;
      const size_t gap = c.k > k ? c.k - k : k - c.k;
      if (nu->anchor_correction == 0.0 || gap < nearest) {
        nu->anchor_correction = c.anchor_correction;
        nearest = gap;
      }
    }
  }

  // Solves support k from the hint nu (SupportHint applied) and records the
  // result. curvature_in: the neighbours' Newton constant handed to it.
  Solved SolveWith(size_t k, bool need_cost, double curvature_in, bool cold, Multiplier* nu) {
    const double* p = Probs(k);
    Solved out;
    out.k = k;
    out.cost = Renormalise(divergence_, alpha_, p, k, ws_.q.data(), ws_.scratch.data(), nu);
    full_q_ = need_cost ? k : 0;  // (a probe writes q[k-1] only)
    out.nu = nu->value;
    // None measured (it stopped on the first step): pass the neighbours' on.
    out.curvature = nu->curvature > 0.0 ? nu->curvature : curvature_in / kCurvatureMargin;
    out.slope = nu->slope;
    out.anchor_curvature = nu->measured_anchor_curvature;
    out.anchor_correction = nu->measured_anchor_correction;
    out.sigma = ConjugateGain(p[k - 1], ws_.q[k - 1], k == 1, &out.nu);
    out.q_last = ws_.q[k - 1];
    out.exact = !nu->settled;
    out.cold = cold;
    ws_.probes.estimate_settles += nu->settled_by_estimate;
    out.nu_hi = !nu->settled || nu->settled_upper ? out.nu : 0.0;
    out.nu_lo = !nu->settled || !nu->settled_upper ? out.nu : 0.0;
    out.guess = out.nu;
    if (nu->settled) {
      // The probe's value: sigma at the Newton estimate of the root (the
      // search interpolates on it), kept on the side the bound settled.
      out.guess = nu->estimate_nu;
      double estimate_nu = nu->estimate_nu;
      const double estimate =
          ConjugateGain(p[k - 1], nu->estimate_q_last, k == 1, &estimate_nu);
      // (Compared so that a NaN estimate cannot cross to the other side.)
      if (nu->settled_upper ? estimate < out.sigma : estimate > out.sigma) out.sigma = estimate;
    }
    return out;
  }

  // Stores a new solve in the cache: over this support's settled entry, else
  // in the next slot round the cache.
  const Solved& Remember(const Solved& out, Solved* same_bound) {
    Solved& slot = same_bound != nullptr ? *same_bound : cache_[next_slot_];
    if (same_bound == nullptr) next_slot_ = (next_slot_ + 1) % kCacheSize;
    slot = out;
    return slot;
  }

  // SupportMass(p, k), resumed from the lanes saved every kMassCheckpoint
  // entries (every solve needs its support's mass: a pass over k doubles
  // each, settled probes included, a few percent of a decode at k ~ V/2).
  double KeptMass(size_t k) {
    if (DropsNothing(probs_, k)) return 1.0;
    const double* p = Probs(k);
    const size_t need = k / kMassCheckpoint;
    if (mass_saved_ <= need) {
      EnsureSize(ws_.mass_lanes, (need + 1) * kSupportMassLanes);
      for (size_t c = mass_saved_; c <= need; ++c) {
        double* lanes = ws_.mass_lanes.data() + c * kSupportMassLanes;
        if (c == 0) {
          std::fill(lanes, lanes + kSupportMassLanes, 0.0);
        } else {
          std::copy(lanes - kSupportMassLanes, lanes, lanes);
          AccumulateMassLanes(p + (c - 1) * kMassCheckpoint, kMassCheckpoint, lanes);
        }
      }
      mass_saved_ = need + 1;
    }
    return MassFromLanes(ws_.mass_lanes.data() + need * kSupportMassLanes, p,
                         need * kMassCheckpoint, k);
  }

  // What every solve of support k is handed from the search's caches: the
  // powers, the kept mass and the sketch (the values the solver would
  // compute itself, so the results' bits do not depend on them).
  // The solver reads the powers only where it maps tokens one by one: the
  // block holding k - 1 (the rest of the support is the sketch's nodes, with
  // powers of their own), an anchor's range, and every token when the solve
  // prices its support (nu's last_only and price, set before).
  void SupportHint(size_t k, Multiplier* nu) {
    const size_t exact_from = SketchView(k).exact_from;
    const bool priced = !nu->last_only && nu->price;
    EnsurePowers(priced ? 0 : exact_from, k);
    if (nu->anchor_k != 0) {
      EnsurePowers(std::min(k, nu->anchor_k), std::max(k, nu->anchor_k));
    }
    nu->powers = ws_.powers.data();
    // (powers holds k entries now: ensuring a range below k reallocates nothing.)
    nu->ensure_powers = [](void* self, size_t from, size_t to) {
      static_cast<PerK*>(self)->EnsurePowers(from, to);
    };
    nu->powers_owner = this;
    nu->kept = KeptMass(k);
    nu->sketch = &ws_.sketch;
    nu->probes = &ws_.probes;
  }

  // The sketch of support k (its blocks built over the sorted prefix to k).
  SupportSketch::View SketchView(size_t k) {
    ws_.sketch.Extend(Probs(k), k);
    return ws_.sketch.For(k);
  }

  // The general solvers' per-token powers of p (one pow each) over
  // [from, to): p^{alpha-1} primal, p^{2-alpha} dual, computed once per
  // chunk of kPowerChunk tokens (from its start; each token's own bits).
  void EnsurePowers(size_t from, size_t to) {
    if (from >= to) return;
    EnsureSize(ws_.powers, to);
    const size_t chunks = (to + kPowerChunk - 1) / kPowerChunk;
    if (ws_.powered_to.size() < chunks) ws_.powered_to.resize(chunks, 0);
    const double* p = Probs(to);
    for (size_t c = from / kPowerChunk; c < chunks; ++c) {
      const size_t start = c * kPowerChunk, end = std::min(to, start + kPowerChunk);
      size_t& done = ws_.powered_to[c];
      if (done >= end) continue;
      if (done < start) done = start;
      double* out = ws_.powers.data() + done;
      if (divergence_ == BregmanDivergence::kPrimal) {
        PrimalPowers(p + done, end - done, alpha_ - 1.0, out);
      } else {
        DualPowers(p + done, end - done, alpha_, out);
      }
      done = end;
    }
  }

  // sigma_k = psi_k(mu_k) of the Lagrangian proof of convexity (spec 5.2):
  // with H_k(mu) = mu + sum_{l<=k} psi_l(mu) and mu_k its minimiser,
  // G(k) - G(k-1) >= psi_k(mu_k) >= psi_{k+1}(mu_k) >= G(k+1) - G(k), i.e.
  // tau_{k-1} >= sigma_k >= tau_k. At the KKT point it is
  //   primal: d(0, q_k) (the cost of zeroing the renormalised mass);
  //   dual:   d(p_k, 0) - d(p_k, q_k) + nu_k q_k.
  // p, q: the k-th kept probability and its renormalised value. A support of
  // one solves no multiplier: its dual nu is h(1) = 1 - p.
  double ConjugateGain(double p, double q, bool single, double* nu) const {
    if (divergence_ == BregmanDivergence::kPrimal) return DivergenceToZero(alpha_, q);
    if (single) *nu = RemainingMass(p);
    const double delta = q - p;
    const double in_support =
        delta > 0.0 ? DivergenceByLogRatio(alpha_, q, -Log1pF64(delta / p)) : 0.0;
    return DivergenceFromZero(alpha_, p) - in_support + *nu * q;
  }

  static constexpr int kCacheSize = 6;
  static constexpr size_t kMassCheckpoint = 512;  // a multiple of kSupportMassLanes
  static constexpr size_t kFarAnchorGap = 16;
  static constexpr size_t kPowerChunk = 64;

  const BregmanDivergence divergence_;
  const double alpha_;
  const TauKind kind_;
  SortedProbs& probs_;
  BregmanWorkspace& ws_;
  const size_t n_;
  const size_t refused_at_start_;  // ws_.probes.log_scale_refused when built
  size_t built_ = 0;  // the root sums are valid for i <= built_ (none while 0)
  size_t mass_saved_ = 0;  // ws.mass_lanes holds the lanes at c kMassCheckpoint, c < mass_saved_
  size_t full_q_ = 0;  // ws.q holds the whole q of this support's last solve (0: none)
  Solved cache_[kCacheSize];
  int next_slot_ = 0;
};

// Where log value, linear in log(k + 1) through (k0, v0) and (k1, v1),
// crosses lambda; 0 when it does not (flat or increasing, or no values).
double LogLogCrossing(size_t k0, double v0, size_t k1, double v1, double lambda) {
  if (!(v0 > 0.0 && v1 > 0.0 && lambda > 0.0 && v0 != v1)) return 0.0;
  const double x0 = LogF64(static_cast<double>(k0 + 1));
  const double x1 = LogF64(static_cast<double>(k1 + 1));
  const double y0 = LogF64(v0), y1 = LogF64(v1);
  const double t = (y0 - LogF64(lambda)) / (y0 - y1);
  return ExpFullF64(x0 + t * (x1 - x0)) - 1.0;
}

// The search's interval: done(bad) is false, done(good) true, with the
// measure's values there (value_good is 0 where good was not measured: the
// clamp). beyond_clamp: the gallop's last shortcut estimate lay past its
// probe.
struct SearchBracket {
  size_t bad = 0;
  double value_bad = 0.0;
  size_t good = 0;
  double value_good = 0.0;
  bool beyond_clamp = false;
};

// The gallop from k_lo (done there false, its value value_lo): probes k_lo
// + 1, k_lo + 3, k_lo + 7, ... up to k_hi, and once per doubling, from its
// second probe on, a shortcut: the crossing extrapolated from its last two
// probes, a few percent beyond it. A gallop's next probe can reach twice k*,
// so its solve, and the sorted prefix it needs, would cost up to twice the
// answer's; the shortcut usually lands just past k*. If it falls short, the
// gallop goes on. done(k, &value, likely_done) as in FirstBelow.
template <class Done>
SearchBracket Gallop(const Done& done, double lambda, size_t k_lo, size_t k_hi, double value_lo) {
  SearchBracket b;
  b.bad = k_lo;
  b.value_bad = value_lo;
  b.good = k_hi;
  size_t before_bad = 0;  // the probe before bad (0: none yet)
  double value_before_bad = 0.0;
  bool shortcut_tried = false;  // in this doubling
  double value = 0.0;
  for (size_t step = 1;;) {
    const size_t gallop = k_hi - k_lo > 2 * step - 1 ? k_lo + 2 * step - 1 : k_hi;
    size_t probe = gallop;
    if (!shortcut_tried && before_bad != 0) {
      shortcut_tried = true;
      constexpr double kOvershoot = 1.04;  // past the estimate: likely on the good side
      const double guess =
          LogLogCrossing(before_bad, value_before_bad, b.bad, b.value_bad, lambda) * kOvershoot;
      if (guess > static_cast<double>(b.bad) + 1.0 && guess < static_cast<double>(gallop)) {
        probe = static_cast<size_t>(guess);
      }
      b.beyond_clamp = !(guess < static_cast<double>(gallop));
    }
    if (done(probe, &value, probe != gallop)) {
      b.good = probe;
      b.value_good = value;
      return b;
    }
    before_bad = b.bad;
    value_before_bad = b.value_bad;
    b.bad = probe;
    b.value_bad = value;
    if (probe == gallop) {
      step *= 2;
      shortcut_tried = false;
    }
  }
}

// Closes the bracket to good = bad + 1 and returns good. The interpolated
// crossing is accurate to a few supports, but probing it lands on one side
// only and the far end would stay put: the probe goes a little to the near
// side of it instead, alternating (just below after a good probe, just above
// after a bad one), so both ends close in; a bisection step follows two
// interpolation steps in a row that failed to halve the interval, so the
// probe count stays within a few times the bisection's.
template <class Done>
size_t CloseBracket(const Done& done, double lambda, SearchBracket b) {
  bool last_good = true;
  int slow_steps = 0;  // consecutive interpolation steps that did not halve the interval
  double value = 0.0;
  while (b.good - b.bad > 1) {
    const size_t width = b.good - b.bad;
    size_t mid = b.bad + width / 2;
    bool interpolated = false;
    if (slow_steps < 2 && b.value_bad > lambda) {
      const double guess = LogLogCrossing(b.bad, b.value_bad, b.good, b.value_good, lambda);
      if (guess > static_cast<double>(b.bad) && guess < static_cast<double>(b.good)) {
        const double margin = std::max(1.0, static_cast<double>(width) / 1024.0);
        const double target = last_good ? guess - margin : guess + margin;
        const size_t at = target > static_cast<double>(b.bad) ? static_cast<size_t>(target) : b.bad;
        mid = std::min(b.good - 1, std::max(b.bad + 1, at));
        interpolated = true;
      }
    }
    last_good = done(mid, &value);
    if (last_good) {
      b.good = mid;
      b.value_good = value;
    } else {
      b.bad = mid;
      b.value_bad = value;
    }
    slow_steps = interpolated && 2 * (b.good - b.bad) > width ? slow_steps + 1 : 0;
  }
  return b.good;
}

// Smallest k in [k_lo, k_hi] with done(k) = stop(k) || measure(k, likely_done) <= lambda
// (likely_done: the probe is the gallop's shortcut, aimed past the crossing),
// for a nonincreasing measure (tau_k, or sigma_{k+1}) and a monotone stop
// (done(k_hi) must hold). The measure decays smoothly, close to a power of k,
// so the search works in log measure against log(k + 1): a gallop with
// extrapolated shortcuts (Gallop), then the final interval closed by
// interpolated probes (CloseBracket).
template <class Measure, class Stop>
size_t FirstBelow(const Measure& measure, const Stop& stop, double lambda, size_t k_lo,
                  size_t k_hi, bool costly_measure) {
  // likely_done: the probe is aimed past the crossing (the gallop's
  // shortcut); a measure may prepare for that side.
  auto done = [&](size_t k, double* value, bool likely_done = false) {
    *value = 0.0;
    if (stop(k)) return true;
    *value = measure(k, likely_done);
    return *value <= lambda;
  };
  double value = 0.0;
  if (done(k_lo, &value)) return k_lo;
  SearchBracket b = Gallop(done, lambda, k_lo, k_hi, value);
  // A gallop that ran into the clamp (k_hi, or all the positive mass kept)
  // has no value there to interpolate on. When its last two probes
  // extrapolate the crossing past the clamp too, the answer is likely the
  // clamp itself (lambda below every gain: a flat row, a small lambda): one
  // probe just below it decides that, where bisection would solve ~log2 of
  // the interval's width supports near the clamp. (Its value stays unused:
  // interpolating from there over a flat measure lands far from the
  // crossing.) Only for a costly measure (a solve per probe): the closed
  // forms' probes cost O(1), and this one would convert the sorted prefix up
  // to the clamp.
  if (costly_measure && b.value_good == 0.0 && b.beyond_clamp && b.good - b.bad > 1 &&
      stop(b.good)) {
    if (!done(b.good - 1, &value)) return b.good;
    --b.good;
  }
  return CloseBracket(done, lambda, b);
}

// Smallest k in [k_lo, k_hi] with tau_k <= lambda, where k >= npos (all the
// positive mass kept) counts as satisfied and k_hi is returned if none is.
// tau is nonincreasing in k (discrete convexity, spec 5.2), so the predicate
// is monotone.
//
// Closed forms price tau_k in O(1) and search on it directly. The general
// solvers cost O(k) per support, so they search on sigma instead (one solve
// per probe rather than two): with J the first k where sigma_{J+1} <= lambda
// or the clamps stop, sigma_J > lambda gives tau_{J-1} > lambda (k* >= J) and
// sigma_{J+1} <= lambda gives tau_{J+1} <= lambda (k* <= J + 1), so tau_J
// (two supports the search has just solved) decides. The probes read the
// same prefix as a search on tau would. Where a sigma lies within rounding
// of lambda the sandwich is not trusted and the neighbours are priced
// exactly.
size_t AdaptiveK(PerK& per_k, double lambda, size_t k_lo, size_t k_hi) {
  // The clamp, all the positive mass kept, or a log-scale solve refused (the
  // decode is then refused: the search ends at once).
  auto stop = [&](size_t k) {
    return k >= k_hi || per_k.Refused() || !(per_k.Next(k) > 0.0);
  };
  auto done = [&](size_t k) { return stop(k) || per_k.TauVersus(k, lambda) <= lambda; };
  // lambda = 0 keeps every positive token (spec 7): each gain is positive in
  // exact arithmetic, also where it underflows (a large alpha's tail).
  if (!(lambda > 0.0)) {
    return FirstBelow([](size_t, bool) { return HUGE_VAL; }, stop, lambda, k_lo, k_hi, false);
  }
  if (!per_k.General()) {
    return FirstBelow([&](size_t k, bool) { return per_k.Tau(k); }, stop, lambda, k_lo, k_hi,
                      false);
  }

  constexpr double kSlack = 1e-9;  // relative: far above the rounding of sigma
  const size_t j =
      FirstBelow([&](size_t k, bool likely_done) {
                   return per_k.SigmaVersus(k + 1, lambda, likely_done);
                 },
                 stop, lambda, k_lo, k_hi, true);
  size_t k;
  if (done(j)) {
    k = j;
    // sigma_k > lambda (k > k_lo) proves tau_{k-1} > lambda unless near a tie.
    while (k > k_lo && !per_k.Refused() && per_k.Sigma(k) <= lambda * (1.0 + kSlack) &&
           done(k - 1)) {
      --k;
    }
  } else {
    k = j + 1;
    // sigma_k <= lambda proves tau_k <= lambda unless near a tie.
    if (per_k.Sigma(k) >= lambda * (1.0 - kSlack)) {
      while (!done(k)) ++k;
    }
  }
  return k;
}

// Cost of the dropped tokens p_(k+1..n).
double TailCost(const BregmanParams& params, SortedProbs& probs, size_t k) {
  const size_t n = probs.Size();
  if (k >= n) return 0.0;
  const double alpha = params.alpha;
  if (DualNeverTruncates(params.divergence, alpha)) {
    return probs.Prefix(k + 1)[k] > 0.0 ? HUGE_VAL : 0.0;
  }
  // Primal KL: the tail's mass (the kept mass summed as Renormalise sums it).
  // 1 - s carries s's rounding (~1e-16) as an absolute error: where the tail
  // is below kOwnTailMass, its own sum (relative to its largest term, as for
  // alpha != 1) is the more exact (KL's objective of [0, -30, -30] at k = 1
  // is 1e-3 relative off from 1 - s).
  if (alpha == 1.0) {
    constexpr double kOwnTailMass = 1e-9;
    const double rem = RemainingMass(SupportMass(probs.Prefix(k), k));
    return rem >= kOwnTailMass ? rem : probs.TailPow(k, 1.0);
  }
  // The dropped tokens' sum of p^alpha itself: the row's sum less the kept
  // head's would carry an error of ~1e-7 of the row's sum (a float exp pass)
  // however small the tail.
  return ZeroCostScale(params.divergence, alpha) * probs.TailPow(k, alpha);
}

}  // namespace

// The log-scale solves' budget per decode, in tokens evaluated (each of
// their passes over a support of k tokens costs k): 8 passes over a support
// of 262144 tokens, about 0.4 s natively and 1-2 s in wasm (a token costs
// four deterministic transcendentals). Supports whose multiplier lies below
// the double range (a large alpha on a near-certain row) are solved in log
// scale by scalar code; the small supports where that happens in practice
// take a fraction of it, while an adaptive search that would solve large
// ones (primal alpha 40, lambda 1e-300 on Gaussian logits at V = 262144:
// 21 s in wasm) is refused instead.
constexpr size_t kLogScaleTokens = size_t{1} << 21;

BregmanResult DecodeBregman(const BregmanParams& params, SortedProbs& probs,
                            BregmanWorkspace& ws, bool want_objective) {
  BregmanResult result;
  const size_t n = probs.Size();
  if (n == 0) return result;
  const bool adaptive = params.fixed_k == 0;
  Multiplier hint;  // from the search, for the final solve
  hint.price = want_objective;  // (sample() needs q alone)
  hint.probes = &ws.probes;
  ws.probes.log_scale_left = kLogScaleTokens;
  const size_t refused_before = ws.probes.log_scale_refused;
  double in_support = 0.0;
  size_t k;
  // The final solve of support k (unless the search left its q and cost);
  // in the adaptive branch while the search lives: the hint may call back
  // into it (Multiplier::ensure_powers).
  auto solve_final = [&](size_t k_final) {
    if (DropsNothing(probs, k_final)) hint.kept = 1.0;
    EnsureSize(ws.q, k_final);
    EnsureSize(ws.scratch, k_final);
    in_support = Renormalise(params.divergence, params.alpha, probs.Prefix(k_final), k_final,
                             ws.q.data(), ws.scratch.data(), &hint);
  };
  if (adaptive) {
    const size_t k_lo = std::min(std::max<size_t>(1, params.k_min), n);
    const size_t k_hi = std::max(k_lo, std::min(params.k_max, n));
    PerK per_k(params, probs, ws);
    k = AdaptiveK(per_k, params.lambda, k_lo, k_hi);
    if (!per_k.FinalFor(k, &hint, &in_support)) solve_final(k);
  } else {
    k = std::min(params.fixed_k, n);
    ws.sketch.Reset(params.divergence == BregmanDivergence::kPrimal, params.alpha);
    hint.sketch = &ws.sketch;
    solve_final(k);
  }
  // ws.q keeps its size: shrinking it to k would make the next decode's
  // growth zero-fill it again.
  result.k = k;
  if (ws.probes.log_scale_refused != refused_before) {
    result.refused =
        "bregman: this alpha on this row needs the log-scale solver (its multiplier below the "
        "double range) on more and larger supports than one call does in reasonable time: cap "
        "the support with bregman.k_max (or use a fixed k, a larger lambda or a smaller alpha)";
    return result;
  }
  if (!want_objective) {
    result.objective = NAN;
    return result;
  }
  result.objective = in_support + TailCost(params, probs, k);
  if (adaptive) result.objective += params.lambda * static_cast<double>(k);
  return result;
}

}  // namespace bd
