// Zeroing costs and the tail sums that price the dropped tokens.

#include <cstddef>

#include "bregman/alpha_family.h"
#include "bregman/bregman.h"
#include "kernels/det_math.h"

namespace bd {

double BregmanZeroCost(BregmanDivergence divergence, double alpha, double p) {
  return bregman_detail::ZeroCost(divergence, alpha, p);
}

double SortedProbsArray::TailPow(size_t k, double alpha) {
  // Smallest first: each term is added before the larger ones it would be
  // rounded away against.
  double sum = 0.0;
  if (alpha == 2.0) {
    for (size_t i = n_; i-- > k;) sum += p_[i] * p_[i];
  } else if (alpha == 1.0) {
    for (size_t i = n_; i-- > k;) sum += p_[i];
  } else {
    for (size_t i = n_; i-- > k;) {
      if (p_[i] > 0.0) sum += PowF64(p_[i], alpha);
    }
  }
  return sum;
}

}  // namespace bd
