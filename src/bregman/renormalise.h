// Internal: the general-alpha fixed-support solvers behind BregmanRenormalise.
// Both take the kept p[0..k) (k >= 2, rem = 1 - sum > 0) and write q[0..k),
// returning the in-support divergence; scratch holds k doubles.
#pragma once

#include <cstddef>

namespace bd {
namespace bregman_detail {

// Primal, alpha != 1: q_i = (p_i^{a-1} + (a-1) nu)^{1/(a-1)} with one nu >= 0
// fixed by sum q = 1 (spec section 3.1).
double RenormalisePrimalGeneral(double alpha, const double* p, size_t k,
                                double rem, double* q, double* scratch);

// Dual, alpha > 1: q_i^{a-2} (q_i - p_i) = nu for each i, one nu >= 0 fixed by
// sum q = 1 (spec section 3.2).
double RenormaliseDualGeneral(double alpha, const double* p, size_t k,
                              double rem, double* q, double* scratch);

}  // namespace bregman_detail
}  // namespace bd
