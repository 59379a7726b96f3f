// OrderFreeSum: a sum of terms in [0, 1] whose bits do not depend on the
// order the terms come in. A list's softmax normaliser is summed over the
// list as it stands, and the same set arrives in id order (decode(), sorted:
// false) or sorted (sorted: true): with a plain running sum the two Z could
// differ in the last bit and give one token a probability a float ulp apart
// (the fuzzer's invariant "the same probability per id", a 70 000-token row).
//
// Each term is cut at fixed binary resolutions into three parts, multiples
// of 2^-31, 2^-62 and 2^-93 (floor and exact differences), dropping what
// lies below 2^-93. Up to kMaxVocab = 2^22 terms each part's running sum is a
// multiple of its resolution below 2^53 of them, so exact: the three sums are
// the same numbers in any order, and so is Z from them. Dropped: under 2^-71
// of Z, which is at least 1 (the list's maximum contributes exp(0) = 1).
#pragma once

#include <cmath>

namespace bd {

class OrderFreeSum {
 public:
  // 0 <= x <= 1.
  void Add(double x) {
    const double hi = std::floor(x * 0x1p31) * 0x1p-31;
    const double rest = x - hi;  // exact: hi is x with its low bits cleared
    const double mid = std::floor(rest * 0x1p62) * 0x1p-62;
    const double low = std::floor((rest - mid) * 0x1p93) * 0x1p-93;
    hi_ += hi;
    mid_ += mid;
    low_ += low;
  }
  double Sum() const { return hi_ + (mid_ + low_); }

 private:
  double hi_ = 0.0, mid_ = 0.0, low_ = 0.0;
};

}  // namespace bd
