// Zeroing costs and the tail sums that price the dropped tokens.

#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/bregman.h"
#include "kernels/det_math.h"

namespace bd {

double BregmanZeroCost(BregmanDivergence divergence, double alpha, double p) {
  return bregman_detail::ZeroCost(divergence, alpha, p);
}

double SortedProbsArray::SumPow(double alpha) {
  // Smallest first: the tail terms are tiny next to the head, and adding them
  // before the head keeps their contribution.
  double sum = 0.0;
  if (alpha == 2.0) {
    for (size_t i = n_; i-- > 0;) sum += p_[i] * p_[i];
  } else if (alpha == 1.0) {
    for (size_t i = n_; i-- > 0;) sum += p_[i];
  } else {
    for (size_t i = n_; i-- > 0;) {
      if (p_[i] > 0.0) sum += PowF64(p_[i], alpha);
    }
  }
  return sum;
}

}  // namespace bd
