// exp() for one double, from IEEE Mul/Add/Sub and bit operations only: the
// same bits from glibc or musl, x86 or wasm, with or without FMA hardware
// (libm's exp is free to differ in the last bit between them, and glibc picks
// an FMA variant at run time). Used where a probability decides a draw: the
// walk over a truncated list. Needs -ffp-contract=off (the core's flags).
//
// Method as in exp-inl.h: x = n ln2 + r, |r| <= ln2/2, Taylor to degree 13
// (truncation error < 5e-18 relative), 2^n from the exponent bits; within
// ~2 ulp of the exact value (det_math's ExpCodyWaiteT, which the float64
// lanes of kernels/scaled_exp.cc run too). x < kExpF64Floor gives exactly 0.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/det_math.h"

namespace bd {

constexpr double kExpF64Floor = -708.0;

inline double ExpF64(double x) {
  if (!(x >= kExpF64Floor)) return 0.0;  // also -inf (NaN never reaches here)
  if (x > 709.0) x = 709.0;
  double n;
  const double v = det_math::ExpCodyWaiteT<det_math::DoubleOps>(x, &n);
  const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(n) + 1023) << 52;
  double two_n;
  std::memcpy(&two_n, &bits, sizeof(two_n));
  return v * two_n;
}

}  // namespace bd
