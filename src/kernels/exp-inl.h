// exp() for float vectors built from Mul, Add, Sub and bit operations only
// (no MulAdd, no table, no target-specific instruction), so every Highway
// target -- scalar, SSE4, AVX2, AVX-512, WASM -- returns the same bits for the
// same input: the softmax sums and the draw that depend on them are identical
// on every platform (with the core compiled -ffp-contract=off).
//
// Method: x = n ln2 + r with n = nearest(x / ln2), r by a two-constant
// (Cody-Waite) reduction, |r| <= ln2/2; exp(r) by its Taylor series to degree
// 7 (truncation error < 3e-9 relative), evaluated by Horner; 2^n from the
// exponent bits. About 2 ulp from the exact value on the domain.
//
// Domain: x <= 88. Below kExpF32Floor the result is exactly 0 (so -inf, the
// removed tokens, give 0 and never NaN); the flush costs only values under
// exp(-87) ~ 1.6e-38, far below a float probability's resolution.
//
// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_EXP_INL_H_
#undef BD_KERNELS_EXP_INL_H_
#else
#define BD_KERNELS_EXP_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

constexpr float kExpF32Floor = -87.0f;

template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE V ExpF32(D d, V x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::RebindToSigned<D> di;
  const auto flushed = hn::Lt(x, hn::Set(d, kExpF32Floor));
  // Clamp so 2^n stays a normal float and -inf / huge values do no harm.
  x = hn::Min(hn::Max(x, hn::Set(d, -87.5f)), hn::Set(d, 88.0f));
  // nearest(x / ln2) by the 1.5 * 2^23 shifter: round-to-nearest-even in
  // plain IEEE adds, identical everywhere.
  const auto shifter = hn::Set(d, 12582912.0f);
  const auto n = hn::Sub(hn::Add(hn::Mul(x, hn::Set(d, 1.44269504088896341f)), shifter), shifter);
  // ln2 = 0.693359375 (9 significant bits: n * it is exact) - 2.12194440e-4.
  auto r = hn::Sub(x, hn::Mul(n, hn::Set(d, 0.693359375f)));
  r = hn::Add(r, hn::Mul(n, hn::Set(d, 2.12194440e-4f)));
  auto p = hn::Set(d, 1.0f / 5040.0f);
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 1.0f / 720.0f));
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 1.0f / 120.0f));
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 1.0f / 24.0f));
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 1.0f / 6.0f));
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 0.5f));
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 1.0f));
  p = hn::Add(hn::Mul(p, r), hn::Set(d, 1.0f));
  const auto two_n = hn::BitCast(
      d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127))));
  return hn::IfThenZeroElse(flushed, hn::Mul(p, two_n));
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // BD_KERNELS_EXP_INL_H_
