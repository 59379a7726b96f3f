// Dual renormalisation for alpha > 1, alpha != 2 (spec section 3.2).
//
// KKT: h_p(q) = q^{alpha-2} (q - p) = nu for every kept token. Each h_p is
// increasing on q >= p, so q_i(nu) is a well-defined increasing map; the outer
// equation F(nu) = sum q_i(nu) - 1 = 0 is solved by safeguarded Newton on
// nu in (0, 1) (nu >= 1 would force every q_i >= 1).
//
// Each coordinate's q_i(nu) is a float64 SIMD map (kernels/support_map.h):
// algebraic at alpha = 3/2 and 3, Halley steps on float64 lanes otherwise.
// Both carry the increment q - p with full relative precision even when it
// is tiny next to p, and give the same bits on every target.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/renormalise.h"
#include "kernels/det_math.h"
#include "kernels/support_map.h"

namespace bd {
namespace bregman_detail {

double RenormaliseDualGeneral(double alpha, const double* p, size_t k,
                              double rem, double* q, double* scratch,
                              Multiplier* hint) {
  const double b = alpha - 1.0;
  // p^{2-alpha} (0 for p = 0): the caller's when it has them.
  const double* pre = hint != nullptr ? hint->powers : nullptr;
  if (pre == nullptr) DualPowers(p, k, alpha, scratch);
  const double* p_pow = pre != nullptr ? pre : scratch;

  // alpha = 3/2 and 3 have algebraic forms, every other alpha the Halley
  // map; both run as float64 SIMD passes (kernels/support_map.h).
  SupportMap vector_map;
  const bool algebraic = FindSupportMap(false, alpha, &vector_map);
  // Over p[from..to): *sum = init + sum of the increments q - p, *slope =
  // sum of dq/dnu.
  // rough: the general map may stop at its start (~3e-8; kernels/support_map.h).
  auto sums_over = [&](size_t from, size_t to, double nu, double init, double* sum_out,
                       double* slope_out, bool rough) {
    const SupportMapSums sums =
        algebraic ? SumSupportMap(vector_map, p + from, p_pow + from, to - from, nu)
                  : SumDualPowerMap(p + from, p_pow + from, to - from, alpha, nu,
                                    PowAlpha(nu, 1.0 / b), rough);
    *sum_out = init + sums.increment;
    *slope_out = sums.slope;
    return algebraic || !rough;
  };
  // Without a hint, start from the first-order guess rem / F'(0).
  const double nu = SolveMultiplier(
      p, k, rem, sums_over,
      [&] {
        // F'(0) = sum p^{2-alpha}: only for a start without hint bounds.
        const double slope_at_zero = SupportMass(p_pow, k);
        return slope_at_zero > 0.0 ? rem / slope_at_zero : 0.0;
      },
      0.0, 1.0, hint);

  const bool last_only = hint != nullptr && hint->last_only;
  const size_t first = last_only ? k - 1 : 0;
  const double cost =
      algebraic ? ApplySupportMap(vector_map, p + first, p_pow + first, k - first, nu, q + first)
                : ApplyDualPowerMap(p + first, p_pow + first, k - first, alpha, nu,
                                    PowAlpha(nu, 1.0 / b), q + first);
  return last_only ? NAN : cost;
}

}  // namespace bregman_detail
}  // namespace bd
