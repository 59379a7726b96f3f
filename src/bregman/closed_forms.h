// Internal: the closed-form per-k costs (spec sections 3.1 and 4.2), shared by
// the fixed-support maps and the decoder's prefix-sum search so that each has
// one source of truth. Notation: s = kept mass, rem = 1 - s (clamped at 0),
// k = support size, p_next = p_(k+1).
#pragma once

#include <cmath>
#include <cstddef>

#include "bregman/alpha_family.h"
#include "kernels/det_math.h"

namespace bd {
namespace bregman_detail {

// Mass the renormalisation has to add. Clamped at 0: float inputs can make the
// kept mass exceed 1 by rounding (spec section 7).
inline double RemainingMass(double kept) { return kept < 1.0 ? 1.0 - kept : 0.0; }

// KL (alpha = 1), q = p / s. Primal in-support cost
// sum q log(q/p) - q + p = s * g_1(-log s) (= -log s - (1 - s)).
inline double KLPrimalCost(double kept) {
  return kept * ScaledDivergence(1.0, -LogF64(kept));
}
// Dual in-support cost sum p log(p/q) - p + q = g_1(log s) (= s log s + 1 - s).
inline double KLDualCost(double kept) {
  return ScaledDivergence(1.0, LogF64(kept));
}
// tau_k = R_k - R_{k+1} + p_next telescopes to log(1 + p_next / s_k).
inline double KLPrimalTau(double kept, double p_next) {
  return Log1pF64(p_next / kept);
}

// alpha = 2 (primal = dual), q = p + rem / k: cost rem^2 / (2k).
inline double EuclidCost(double rem, size_t k) {
  return rem * rem / (2.0 * static_cast<double>(k));
}
// tau_k = rem^2/(2k) - (rem - p)^2/(2(k+1)) + p^2/2 = (rem + k p)^2 / (2k(k+1)):
// the form without cancellation.
inline double EuclidTau(double rem, double p_next, size_t k) {
  const double kd = static_cast<double>(k);
  const double t = rem + kd * p_next;
  return t * t / (2.0 * kd * (kd + 1.0));
}

// Primal alpha = 1.5, q_i = (sqrt(p_i) + c)^2. With R = sum sqrt(p_i), c is the
// positive root of k c^2 + 2 R c - rem = 0, written without cancellation. Each
// d(q_i, p_i) = 2 sqrt(p_i) c^2 + (4/3) c^3, so the cost sums to
// 2 c^2 R + (4/3) k c^3 (all terms positive).
inline double SqrtShift(double rem, double root_sum, size_t k) {
  const double kd = static_cast<double>(k);
  const double den = root_sum + std::sqrt(root_sum * root_sum + kd * rem);
  return den > 0.0 ? rem / den : 0.0;
}
inline double SqrtPrimalCost(double c, double root_sum, size_t k) {
  const double kd = static_cast<double>(k);
  return c * c * (2.0 * root_sum + (4.0 / 3.0) * kd * c);
}

}  // namespace bregman_detail
}  // namespace bd
