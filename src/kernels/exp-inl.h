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

// ExpF32 of K vectors in place, each step taken across all K before the
// next (independent chains the core can overlap: one Horner chain alone
// leaves an AVX-512 core waiting on latency); every lane goes through the
// very operations below, so the bits are ExpF32's.
template <size_t K, class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE void ExpF32Each(D d, V* x) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::RebindToSigned<D> di;
  using M = decltype(hn::Lt(x[0], x[0]));
  M flushed[K];
  V shifted[K], n[K], r[K], p[K];
  for (size_t k = 0; k < K; ++k) flushed[k] = hn::Lt(x[k], hn::Set(d, kExpF32Floor));
  // Clamp so -inf / huge values do no harm and every product below stays a
  // normal float: at the floor, p ~ 1.4 times 2^-126. (Below it the lanes
  // are flushed to 0 anyway; a subnormal product, which a lower clamp gives,
  // costs x86 a microcode assist per lane: 3x the pass on a row mostly
  // -inf, as a grammar mask or an allowed set leaves.)
  for (size_t k = 0; k < K; ++k) {
    x[k] = hn::Min(hn::Max(x[k], hn::Set(d, kExpF32Floor)), hn::Set(d, 88.0f));
  }
  // nearest(x / ln2) by the 1.5 * 2^23 shifter: round-to-nearest-even in
  // plain IEEE adds, identical everywhere.
  const auto shifter = hn::Set(d, 12582912.0f);
  for (size_t k = 0; k < K; ++k) {
    shifted[k] = hn::Add(hn::Mul(x[k], hn::Set(d, 1.44269504088896341f)), shifter);
    n[k] = hn::Sub(shifted[k], shifter);
  }
  // ln2 = 0.693359375 (9 significant bits: n * it is exact) - 2.12194440e-4.
  for (size_t k = 0; k < K; ++k) r[k] = hn::Sub(x[k], hn::Mul(n[k], hn::Set(d, 0.693359375f)));
  for (size_t k = 0; k < K; ++k) r[k] = hn::Add(r[k], hn::Mul(n[k], hn::Set(d, 2.12194440e-4f)));
  // exp(r) by Horner, 1/7! down to the two 1s.
  constexpr float kCoeff[] = {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f,
                              1.0f,          1.0f};
  for (size_t k = 0; k < K; ++k) p[k] = hn::Set(d, 1.0f / 5040.0f);
  for (float c : kCoeff) {
    for (size_t k = 0; k < K; ++k) p[k] = hn::Add(hn::Mul(p[k], r[k]), hn::Set(d, c));
  }
  // 2^n from the shifted sum's own bits: it lies in [2^23, 2^24), where the
  // bits are 0x4B400000 + n, and shifting n + 127 + 0x4B400000 left by 23
  // drops the constant (0x4B400000 << 23 is 0 mod 2^32), so no float-to-int
  // conversion is needed (wasm's saturating one costs V8 about eight x86
  // instructions; the same bits).
  for (size_t k = 0; k < K; ++k) {
    const auto two_n = hn::BitCast(
        d, hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, shifted[k]), hn::Set(di, 127))));
    x[k] = hn::IfThenZeroElse(flushed[k], hn::Mul(p[k], two_n));
  }
}

template <class D, class V = hwy::HWY_NAMESPACE::Vec<D>>
HWY_INLINE V ExpF32(D d, V x) {
  ExpF32Each<1>(d, &x);
  return x;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // BD_KERNELS_EXP_INL_H_
