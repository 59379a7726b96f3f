// Internal: the renormalisation entry point with a multiplier hint, and the
// general-alpha fixed-support solvers behind it. The solvers take the kept
// p[0..k) (k >= 2, rem = 1 - sum > 0) and write q[0..k), returning the
// in-support divergence; scratch holds k doubles.
#pragma once

#include <cstddef>

#include "bregman/bregman.h"

namespace bd {
namespace bregman_detail {

// The multiplier nu of a solve, and an optional upper bound on it. The
// decoder passes nu_k as the bound when it solves support k+1 right after k:
// nu is nonincreasing in k (spec section 4.2), so it brackets the new root
// and is an excellent starting point.
struct Multiplier {
  double upper = 0.0;  // in: an upper bound on nu, or 0 for none
  double value = 0.0;  // out: nu (0 for the closed forms and for rem = 0)
};

// BregmanRenormalise with an optional hint (may be null).
double Renormalise(BregmanDivergence divergence, double alpha, const double* p,
                   size_t k, double* q, double* scratch, Multiplier* nu);

// Starting point and upper end for a multiplier solve: the hint when there
// is one, else the solver's own guess inside (0, hi).
inline void StartFrom(const Multiplier* nu, double guess, double* x0, double* hi) {
  if (nu != nullptr && nu->upper > 0.0 && nu->upper < *hi) {
    *hi = nu->upper * (1.0 + 1e-12);  // rounding slack: nu_{k+1} may equal nu_k
    *x0 = nu->upper;
    return;
  }
  *x0 = guess > 0.0 && guess < *hi ? guess : 0.5 * *hi;
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

}  // namespace bregman_detail
}  // namespace bd
