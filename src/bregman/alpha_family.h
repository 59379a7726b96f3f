// Internal: the alpha-entropy generator and every per-coordinate formula
// derived from it, so that each formula has one source of truth.
//
//   phi_a(x) = (x^a - x) / (a (a - 1)),   phi_1(x) = x log x
//   d(x, y)  = phi(x) - phi(y) - phi'(y) (x - y)
//
// The linear part of phi cancels in d, so d(x, y) = y^a g_a(log(x / y)) with
//   g_a(L) = [e^{aL} - 1 - a (e^L - 1)] / (a (a - 1)),  g_1(L) = L e^L - e^L + 1.
// Solvers hand over L computed from their own parametrisation (log1p forms)
// rather than log(x / y) of rounded values: near x = y the divergence is
// second order in x - y, and forming x / y first would lose it.
#pragma once

#include <cmath>

#include "bregman/bregman.h"
#include "kernels/det_math.h"

namespace bd {
namespace bregman_detail {

// x^e for x >= 0. The exponents of the common alphas (e = alpha, alpha - 1,
// 2 - alpha, 1 / (alpha - 1) at alpha = 0.5, 1.5, 2, 3) get algebraic forms:
// sqrt and products are several times cheaper than pow (per candidate, per
// decode, at k up to V) and are IEEE operations, so they round the same in
// every libm (glibc natively, musl in wasm). Other exponents use PowF64,
// libm-free for the same reason.
inline bool PowAlphaIsAlgebraic(double e) {
  return e == 0.5 || e == -0.5 || e == 1.5 || e == 2.0 || e == -1.0 || e == 1.0;
}
inline double PowAlpha(double x, double e) {
  if (e == 0.5) return std::sqrt(x);
  if (e == -0.5) return 1.0 / std::sqrt(x);
  if (e == 1.5) return x * std::sqrt(x);
  if (e == 2.0) return x * x;
  if (e == -1.0) return 1.0 / x;
  if (e == 1.0) return x;
  return PowF64(x, e);
}

// g_a(L) above, accurate to a few ulp for every a > 0 and every finite L
// (series for small |L|, expm1 form otherwise).
double ScaledDivergence(double alpha, double log_ratio);

// d(x, y) for y > 0, given L = log(x / y) accurately.
inline double DivergenceByLogRatio(double alpha, double y, double log_ratio) {
  const double y_pow = PowAlpha(y, alpha);
  return y_pow * ScaledDivergence(alpha, log_ratio);
}

// d(0, y) = phi(0) - phi(y) + y phi'(y) = y^a / a (a = 1: y). This is the
// primal cost of zeroing a token with probability y, and the dual in-support
// cost of a zero-probability token that received mass y.
inline double DivergenceToZero(double alpha, double y) {
  if (alpha == 1.0) return y;
  return PowAlpha(y, alpha) / alpha;
}

// d(x, 0) = phi(x) - phi(0) - x phi'(0) = x^a / (a (a - 1)) for a > 1; +inf
// for a <= 1 and x > 0 because phi'(0) = -inf there. This is the dual cost
// of zeroing a token with probability x, and the primal in-support cost of
// a zero-probability token that received mass x.
inline double DivergenceFromZero(double alpha, double x) {
  if (x == 0.0) return 0.0;
  if (alpha <= 1.0) return HUGE_VAL;
  return PowAlpha(x, alpha) / (alpha * (alpha - 1.0));
}

// Cost of dropping a token with probability p (spec section 4.1).
inline double ZeroCost(BregmanDivergence divergence, double alpha, double p) {
  return divergence == BregmanDivergence::kPrimal ? DivergenceToZero(alpha, p)
                                                  : DivergenceFromZero(alpha, p);
}

// The constant c with ZeroCost(p) = c p^alpha (alpha != 1, or dual), so that
// a tail's cost is c * (sum of p^alpha over the tail).
inline double ZeroCostScale(BregmanDivergence divergence, double alpha) {
  return ZeroCost(divergence, alpha, 1.0);
}

// Whether the dual zeroing cost is infinite (phi'(0) = -inf): such a dual
// never truncates a positive probability.
inline bool DualNeverTruncates(BregmanDivergence divergence, double alpha) {
  return divergence == BregmanDivergence::kDual && alpha <= 1.0;
}

}  // namespace bregman_detail
}  // namespace bd
