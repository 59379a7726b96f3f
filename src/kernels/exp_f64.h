// exp() for one double, from IEEE Mul/Add/Sub and bit operations only: the
// same bits from glibc or musl, x86 or wasm, with or without FMA hardware
// (libm's exp is free to differ in the last bit between them, and glibc picks
// an FMA variant at run time). Used where a probability decides a draw: the
// walk over a truncated list. Needs -ffp-contract=off (the core's flags).
//
// Method as in exp-inl.h: x = n ln2 + r, |r| <= ln2/2, Taylor to degree 13
// (truncation error < 5e-18 relative), 2^n from the exponent bits; within
// ~2 ulp of the exact value. x < kExpF64Floor gives exactly 0.
#pragma once

#include <cstdint>
#include <cstring>

namespace bd {

constexpr double kExpF64Floor = -708.0;

inline double ExpF64(double x) {
  if (!(x >= kExpF64Floor)) return 0.0;  // also -inf (NaN never reaches here)
  if (x > 709.0) x = 709.0;
  const double shifter = 6755399441055744.0;  // 1.5 * 2^52
  const double n = (x * 1.4426950408889634 + shifter) - shifter;
  // ln2 split so that n * kLn2Hi is exact for |n| < 2^11.
  const double kLn2Hi = 0x1.62e42fee00000p-1;
  const double kLn2Lo = 0x1.a39ef35793c76p-33;
  const double r = (x - n * kLn2Hi) - n * kLn2Lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  const double inv_fact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                             1.0 / 362880.0,    1.0 / 40320.0,    1.0 / 5040.0,
                             1.0 / 720.0,       1.0 / 120.0,      1.0 / 24.0,
                             1.0 / 6.0,         0.5,              1.0,
                             1.0};
  for (double c : inv_fact) p = p * r + c;
  const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(n) + 1023) << 52;
  double two_n;
  std::memcpy(&two_n, &bits, sizeof(two_n));
  return p * two_n;
}

}  // namespace bd
