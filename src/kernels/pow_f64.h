// x^y for many x and one y, as det_math's PowF64 computes it (the same bits),
// with its main path on float64 lanes: the Bregman solvers' per-coordinate
// powers p^b (up to V of them per decode) for the alphas without an
// algebraic power.
#pragma once

#include <cstddef>

namespace bd {

// out[i] = PowF64(x[i], y) for i < n (out may alias x).
void PowF64Many(const double* x, size_t n, double y, double* out);

}  // namespace bd
