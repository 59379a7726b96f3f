// BregmanRenormalise: dispatch to the closed forms of spec section 3 where
// they exist, else to the general solvers.

#include "bregman/renormalise.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/bregman.h"
#include "bregman/closed_forms.h"
#include "kernels/det_math.h"
#include "kernels/pow_f64.h"
#include "kernels/support_map.h"

namespace bd {

double BregmanRenormalise(BregmanDivergence divergence, double alpha,
                          const double* p, size_t k, double* q,
                          double* scratch) {
  return bregman_detail::Renormalise(divergence, alpha, p, k, q, scratch, nullptr);
}

namespace bregman_detail {

namespace {

// one(p[i]) for i < k into out, where one(x) is x^e for x > 0: PowF64Many's
// SIMD pass (PowF64's bits) when PowAlpha has no algebraic form for e, then
// one() again for the p <= 0 entries, whose value is the caller's.
template <class One>
void PowersOf(const double* p, size_t k, double e, double* out, const One& one) {
  if (PowAlphaIsAlgebraic(e)) {
    for (size_t i = 0; i < k; ++i) out[i] = one(p[i]);
    return;
  }
  PowF64Many(p, k, e, out);
  for (size_t i = 0; i < k; ++i) {
    if (!(p[i] > 0.0)) out[i] = one(p[i]);
  }
}

}  // namespace

void PrimalPowers(const double* p, size_t k, double b, double* out) {
  PowersOf(p, k, b, out, [b](double x) { return PrimalPower(x, b); });
  for (size_t i = 0; i < k; ++i) out[i] = PrimalPowerStored(out[i]);
}

void DualPowers(const double* p, size_t k, double alpha, double* out) {
  PowersOf(p, k, 2.0 - alpha, out, [alpha](double x) { return DualPower(x, alpha); });
}

double RootSum(const double* p, size_t k, double start, double* running) {
  constexpr size_t kChunk = 256;
  double roots[kChunk];
  double sum = start;
  for (size_t from = 0; from < k; from += kChunk) {
    const size_t n = std::min(kChunk, k - from);
    SqrtMany(p + from, n, roots);
    for (size_t i = 0; i < n; ++i) {
      sum += roots[i];
      if (running != nullptr) running[from + i] = sum;
    }
  }
  return sum;
}

SupportSketch* SketchFor(bool primal, double alpha, const double* p, size_t k, Multiplier* hint) {
  SupportSketch* sketch = hint != nullptr ? hint->sketch : nullptr;
  if (sketch == nullptr || !sketch->Matches(primal, alpha)) {
    // A solve on its own (BregmanRenormalise, a test): the thread's sketch,
    // rebuilt (its blocks are p's, so the result is the decoder's).
    thread_local SupportSketch own;
    own.Reset(primal, alpha);
    sketch = &own;
  }
  sketch->Extend(p, k);
  return sketch;
}

// The dispatch itself. Closed forms leave nu->value at 0: only the general
// solvers' multipliers are worth handing on.
double Renormalise(BregmanDivergence divergence, double alpha, const double* p,
                   size_t k, double* q, double* scratch, Multiplier* nu) {
  if (nu != nullptr) nu->value = 0.0;
  if (k == 0) return 0.0;
  const bool primal = divergence == BregmanDivergence::kPrimal;
  // Order-fixed SIMD lanes (the caller's, resumed from saved lanes: the
  // same bits).
  const double kept = nu != nullptr && nu->kept > 0.0 ? nu->kept : SupportMass(p, k);

  // KL: proportional in both directions. The dual with alpha < 1 is outside
  // the contract (ValidateBregmanParams rejects it); it is routed here only so
  // that it stays well defined.
  if (alpha == 1.0 || DualNeverTruncates(divergence, alpha)) {
    // Divide rather than multiply by 1/s: correctly rounded, and k = 1 gives
    // exactly q = (1).
    for (size_t i = 0; i < k; ++i) q[i] = p[i] / kept;
    return primal ? KLPrimalCost(kept) : KLDualCost(kept);
  }

  const double rem = RemainingMass(kept);
  if (rem == 0.0) {  // nu = 0: nothing to add
    for (size_t i = 0; i < k; ++i) q[i] = p[i];
    return 0.0;
  }

  if (alpha == 2.0) {  // Euclidean: primal = dual, equal additive shift
    const double shift = rem / static_cast<double>(k);
    for (size_t i = 0; i < k; ++i) q[i] = p[i] + shift;
    return EuclidCost(rem, k);
  }

  if (k == 1) {  // q = (1): only the cost needs computing
    q[0] = 1.0;
    const double p0 = p[0];
    if (p0 == 0.0) {
      return primal ? DivergenceFromZero(alpha, 1.0) : DivergenceToZero(alpha, 1.0);
    }
    // d(1, p) = p^a g(log(1/p)); d(p, 1) = g(log p). The primal's p^a
    // underflows and g overflows where alpha log(1/p) passes ~709 (alpha 514
    // at p = 1/4: R(1) would be inf, and k = 1 never chosen): DivergenceAbove.
    return primal ? (alpha > 1.0 ? DivergenceAbove(alpha, p0, 1.0, -LogF64(p0))
                                 : DivergenceByLogRatio(alpha, p0, -LogF64(p0)))
                  : ScaledDivergence(alpha, LogF64(p0));
  }

  if (primal && alpha == 1.5) {
    const double root_sum = nu != nullptr && nu->root_sum > 0.0 ? nu->root_sum : RootSum(p, k);
    const double c = SqrtShift(rem, root_sum, k);
    ApplySqrtShift(p, k, c, q);  // (sqrt(p) + c)^2 without cancellation
    return SqrtPrimalCost(c, root_sum, k);
  }

  return primal ? RenormalisePrimalGeneral(alpha, p, k, rem, q, scratch, nu)
                : RenormaliseDualGeneral(alpha, p, k, rem, q, scratch, nu);
}

}  // namespace bregman_detail

}  // namespace bd
