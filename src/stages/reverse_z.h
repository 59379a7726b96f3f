// Suffix match lengths of a token sequence by the Z-algorithm, shared by the
// stages that look for repeats of the history's end (DRY, no_repeat_ngram).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace bd {

// Match lengths by the Z-algorithm on the reversed window s[i] = W[w-1-i]:
// calls emit(k, min(LCP(s, s[k..]), bound)) for k = 1..w-1, i.e. the length
// of the common suffix of W[0..w-1-k] and W. Invariant: the Z-box [l, r) has
// s[l..r) == s[0..r-l) and r - l <= bound, so a lookup z[k - l] (k < r) has
// k - l < bound: only z[1..bound) is ever stored (z holds at least
// min(bound, w) values). Linear: every successful comparison moves r right.
template <typename Emit>
void ReverseZ(const int32_t* W, size_t w, size_t bound, int32_t* z, Emit emit) {
  auto s = [W, w](size_t i) { return W[w - 1 - i]; };
  size_t l = 0, r = 0;
  for (size_t k = 1; k < w; ++k) {
    size_t n = k < r ? std::min(static_cast<size_t>(z[k - l]), r - k) : 0;
    while (n < bound && k + n < w && s(n) == s(k + n)) ++n;
    if (k < bound) z[k] = static_cast<int32_t>(n);
    if (k + n > r) {
      l = k;
      r = k + n;
    }
    emit(k, n);
  }
}

}  // namespace bd
