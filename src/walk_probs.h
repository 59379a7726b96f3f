// The draw over explicit probabilities (Bregman's q), in float64.
#pragma once

#include <algorithm>
#include <cstddef>

namespace bd {

// The first index whose running sum of q exceeds u (in order; at the end,
// u within rounding of sum q, the last index), a block of kProbsBlock at a
// time: each block's sum in four interleaved running sums (independent
// chains, a quarter of one chain's latency per entry at k ~ V/2), the block
// holding u then entry by entry from the sum before it. Scalar IEEE
// arithmetic in a fixed order: the same index on every target. n >= 1.
inline constexpr size_t kProbsBlock = 256;
inline size_t WalkProbs(const double* q, size_t n, double u) {
  double cum = 0.0;
  for (size_t b = 0; b < n; b += kProbsBlock) {
    const size_t end = std::min(n, b + kProbsBlock);
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    size_t i = b;
    for (; i + 4 <= end; i += 4) {
      s0 += q[i];
      s1 += q[i + 1];
      s2 += q[i + 2];
      s3 += q[i + 3];
    }
    for (; i < end; ++i) s0 += q[i];
    const double block = (s0 + s1) + (s2 + s3);
    if (cum + block > u || end == n) {
      for (i = b; i < end; ++i) {
        cum += q[i];
        if (cum > u) return i;
      }
      // The last block, or one whose own sum crossed u where its running sum
      // did not (they round apart): its last entry.
      return end - 1;
    }
    cum += block;
  }
  return n - 1;  // (n == 0: never asked)
}

}  // namespace bd
