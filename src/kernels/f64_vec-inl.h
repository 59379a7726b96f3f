// float64 vectors on every target, wasm included. Highway 1.0.3 has no f64
// ops on WASM (HWY_HAVE_FLOAT64 is 0 there), so F64 wraps wasm's f64x2
// directly on that target and Highway's full-width f64 vectors elsewhere;
// F64Scalar is the same interface on one double. Only IEEE-754 operations
// that round the same everywhere (add, sub, mul, div, sqrt; never MulAdd),
// so one element computes the same bits through F64 on any target and
// through F64Scalar.
//
// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_F64_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_F64_VEC_INL_H_
#undef BD_KERNELS_F64_VEC_INL_H_
#else
#define BD_KERNELS_F64_VEC_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <hwy/highway.h>

#if HWY_TARGET == HWY_WASM
#include <wasm_simd128.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_WASM
struct F64 {
  struct V {
    v128_t raw;
  };
  static constexpr size_t kLanes = 2;
  static HWY_INLINE V Load(const double* p) { return {wasm_v128_load(p)}; }
  static HWY_INLINE void Store(V v, double* p) { wasm_v128_store(p, v.raw); }
  static HWY_INLINE V Set(double x) { return {wasm_f64x2_splat(x)}; }
  static HWY_INLINE V Zero() { return Set(0.0); }
  static HWY_INLINE V Add(V a, V b) { return {wasm_f64x2_add(a.raw, b.raw)}; }
  static HWY_INLINE V Sub(V a, V b) { return {wasm_f64x2_sub(a.raw, b.raw)}; }
  static HWY_INLINE V Mul(V a, V b) { return {wasm_f64x2_mul(a.raw, b.raw)}; }
  static HWY_INLINE V Div(V a, V b) { return {wasm_f64x2_div(a.raw, b.raw)}; }
  static HWY_INLINE V Sqrt(V a) { return {wasm_f64x2_sqrt(a.raw)}; }
  // 2^n for integer-valued n in [-1022, 1023]: n + 1023 lands in the low
  // mantissa bits of n + 1023 + 2^52, shifted into the exponent field.
  static HWY_INLINE V Pow2Of(V n) {
    const v128_t biased = wasm_f64x2_add(n.raw, wasm_f64x2_splat(0x1p52 + 1023.0));
    return {wasm_i64x2_shl(biased, 52)};
  }
  // v where p > 0, else +0 (NaN p gives 0).
  static HWY_INLINE V WherePositive(V p, V v) {
    return {wasm_v128_and(v.raw, wasm_f64x2_gt(p.raw, wasm_f64x2_splat(0.0)))};
  }
  // a == 0 ? x : y, lane by lane.
  static HWY_INLINE V IfZero(V a, V x, V y) {
    return {wasm_v128_bitselect(x.raw, y.raw, wasm_f64x2_eq(a.raw, wasm_f64x2_splat(0.0)))};
  }
  // b < a ? b : a and a < b ? b : a (a NaN a stays: as F64Scalar's).
  static HWY_INLINE V Min(V a, V b) { return {wasm_f64x2_pmin(a.raw, b.raw)}; }
  static HWY_INLINE V Max(V a, V b) { return {wasm_f64x2_pmax(a.raw, b.raw)}; }
  // a < b ? x : y, lane by lane (a NaN compare picks y).
  static HWY_INLINE V IfLess(V a, V b, V x, V y) {
    return {wasm_v128_bitselect(x.raw, y.raw, wasm_f64x2_lt(a.raw, b.raw))};
  }
  // Whether any lane is nonzero (NaN counts as nonzero).
  static HWY_INLINE bool AnyNonZero(V a) {
    return wasm_v128_any_true(wasm_f64x2_ne(a.raw, wasm_f64x2_splat(0.0)));
  }
  // c0 + f (c1 + f (c2 + f c3)) with each lane's c = coef[4 j .. 4 j + 3]
  // (j integer-valued, in range): a table of cubics, two 128-bit loads per lane.
  static HWY_INLINE V CubicAt(const double* coef, V j, V f) {
    const v128_t index = wasm_i32x4_trunc_sat_f64x2_zero(j.raw);
    const double* a = coef + 4 * wasm_i32x4_extract_lane(index, 0);
    const double* b = coef + 4 * wasm_i32x4_extract_lane(index, 1);
    const v128_t a01 = wasm_v128_load(a), a23 = wasm_v128_load(a + 2);
    const v128_t b01 = wasm_v128_load(b), b23 = wasm_v128_load(b + 2);
    const V c0 = {wasm_i64x2_shuffle(a01, b01, 0, 2)}, c1 = {wasm_i64x2_shuffle(a01, b01, 1, 3)};
    const V c2 = {wasm_i64x2_shuffle(a23, b23, 0, 2)}, c3 = {wasm_i64x2_shuffle(a23, b23, 1, 3)};
    return Add(c0, Mul(f, Add(c1, Mul(f, Add(c2, Mul(f, c3))))));
  }
  // x = 2^k m, m in [sqrt(2)/2, sqrt(2)), for normal x > 0 (det_math's
  // SplitExponent there); k as a double: the biased exponent e in the low
  // bits of 2^52 + e, minus 2^52 + 1023.
  static HWY_INLINE V SplitNormal(V x, V* k) {
    const v128_t e = wasm_u64x2_shr(x.raw, 52);
    const V kd = Sub({wasm_v128_or(e, wasm_i64x2_splat(0x4330000000000000ll))},
                     Set(0x1p52 + 1023.0));
    const V m = {wasm_v128_or(wasm_v128_and(x.raw, wasm_i64x2_splat(0x000fffffffffffffll)),
                              wasm_i64x2_splat(0x3ff0000000000000ll))};
    const v128_t big = wasm_f64x2_gt(m.raw, wasm_f64x2_splat(1.4142135623730951));
    *k = {wasm_v128_bitselect(Add(kd, Set(1.0)).raw, kd.raw, big)};
    return {wasm_v128_bitselect(Mul(m, Set(0.5)).raw, m.raw, big)};
  }
};
#else
struct F64 {
  using D = hwy::HWY_NAMESPACE::ScalableTag<double>;
  using V = hwy::HWY_NAMESPACE::Vec<D>;
  static constexpr size_t kLanes = hwy::HWY_NAMESPACE::MaxLanes(D());
  static HWY_INLINE V Load(const double* p) { return hwy::HWY_NAMESPACE::LoadU(D(), p); }
  static HWY_INLINE void Store(V v, double* p) { hwy::HWY_NAMESPACE::StoreU(v, D(), p); }
  static HWY_INLINE V Set(double x) { return hwy::HWY_NAMESPACE::Set(D(), x); }
  static HWY_INLINE V Zero() { return hwy::HWY_NAMESPACE::Zero(D()); }
  static HWY_INLINE V Add(V a, V b) { return hwy::HWY_NAMESPACE::Add(a, b); }
  static HWY_INLINE V Sub(V a, V b) { return hwy::HWY_NAMESPACE::Sub(a, b); }
  static HWY_INLINE V Mul(V a, V b) { return hwy::HWY_NAMESPACE::Mul(a, b); }
  static HWY_INLINE V Div(V a, V b) { return hwy::HWY_NAMESPACE::Div(a, b); }
  static HWY_INLINE V Sqrt(V a) { return hwy::HWY_NAMESPACE::Sqrt(a); }
  static HWY_INLINE V Pow2Of(V n) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::RebindToUnsigned<D> du;
    const auto biased = hn::BitCast(du, hn::Add(n, hn::Set(D(), 0x1p52 + 1023.0)));
    return hn::BitCast(D(), hn::ShiftLeft<52>(biased));
  }
  static HWY_INLINE V WherePositive(V p, V v) {
    namespace hn = hwy::HWY_NAMESPACE;
    return hn::IfThenElseZero(hn::Gt(p, hn::Zero(D())), v);
  }
  static HWY_INLINE V IfZero(V a, V x, V y) {
    namespace hn = hwy::HWY_NAMESPACE;
    return hn::IfThenElse(hn::Eq(a, hn::Zero(D())), x, y);
  }
  // Spelled as compares (not Highway's Min/Max, whose NaN rules differ by
  // target): b < a ? b : a and a < b ? b : a.
  static HWY_INLINE V Min(V a, V b) {
    namespace hn = hwy::HWY_NAMESPACE;
    return hn::IfThenElse(hn::Lt(b, a), b, a);
  }
  static HWY_INLINE V Max(V a, V b) {
    namespace hn = hwy::HWY_NAMESPACE;
    return hn::IfThenElse(hn::Lt(a, b), b, a);
  }
  static HWY_INLINE V IfLess(V a, V b, V x, V y) {
    namespace hn = hwy::HWY_NAMESPACE;
    return hn::IfThenElse(hn::Lt(a, b), x, y);
  }
  static HWY_INLINE bool AnyNonZero(V a) {
    namespace hn = hwy::HWY_NAMESPACE;
    return !hn::AllTrue(D(), hn::Eq(a, hn::Zero(D())));
  }
  static HWY_INLINE V CubicAt(const double* coef, V j, V f) {
    HWY_ALIGN double index[kLanes], c[4][kLanes];
    Store(j, index);
    for (size_t l = 0; l < kLanes; ++l) {
      const double* at = coef + 4 * static_cast<size_t>(index[l]);
      for (size_t m = 0; m < 4; ++m) c[m][l] = at[m];
    }
    return Add(Load(c[0]), Mul(f, Add(Load(c[1]), Mul(f, Add(Load(c[2]), Mul(f, Load(c[3])))))));
  }
  static HWY_INLINE V SplitNormal(V x, V* k) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::RebindToUnsigned<D> du;
    const auto bits = hn::BitCast(du, x);
    const auto e = hn::ShiftRight<52>(bits);
    const V kd = hn::Sub(hn::BitCast(D(), hn::Or(e, hn::Set(du, 0x4330000000000000ull))),
                         hn::Set(D(), 0x1p52 + 1023.0));
    const V m = hn::BitCast(D(), hn::Or(hn::And(bits, hn::Set(du, 0x000fffffffffffffull)),
                                        hn::Set(du, 0x3ff0000000000000ull)));
    const auto big = hn::Gt(m, hn::Set(D(), 1.4142135623730951));
    *k = hn::IfThenElse(big, hn::Add(kd, hn::Set(D(), 1.0)), kd);
    return hn::IfThenElse(big, hn::Mul(m, hn::Set(D(), 0.5)), m);
  }
};
#endif

// The same interface on one double (tails, single elements).
struct F64Scalar {
  using V = double;
  static constexpr size_t kLanes = 1;
  static HWY_INLINE V Load(const double* p) { return *p; }
  static HWY_INLINE void Store(V v, double* p) { *p = v; }
  static HWY_INLINE V Set(double x) { return x; }
  static HWY_INLINE V Zero() { return 0.0; }
  static HWY_INLINE V Add(V a, V b) { return a + b; }
  static HWY_INLINE V Sub(V a, V b) { return a - b; }
  static HWY_INLINE V Mul(V a, V b) { return a * b; }
  static HWY_INLINE V Div(V a, V b) { return a / b; }
  static HWY_INLINE V Sqrt(V a) { return std::sqrt(a); }
  static HWY_INLINE V WherePositive(V p, V v) { return p > 0.0 ? v : 0.0; }
  static HWY_INLINE V IfZero(V a, V x, V y) { return a == 0.0 ? x : y; }
  static HWY_INLINE V Min(V a, V b) { return b < a ? b : a; }
  static HWY_INLINE V Max(V a, V b) { return a < b ? b : a; }
  static HWY_INLINE V IfLess(V a, V b, V x, V y) { return a < b ? x : y; }
  static HWY_INLINE bool AnyNonZero(V a) { return a != 0.0; }
  static HWY_INLINE V CubicAt(const double* coef, V j, V f) {
    const double* c = coef + 4 * static_cast<size_t>(j);
    return c[0] + f * (c[1] + f * (c[2] + f * c[3]));
  }
  // The vector ops' bit manipulations on one double (same results).
  static HWY_INLINE V Pow2Of(V n) {
    const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(n) + 1023) << 52;
    double out;
    std::memcpy(&out, &bits, sizeof(out));
    return out;
  }
  static HWY_INLINE V SplitNormal(V x, V* k) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    double kd = static_cast<double>(static_cast<int64_t>(bits >> 52) - 1023);
    const uint64_t m_bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    std::memcpy(&m, &m_bits, sizeof(m));
    if (m > 1.4142135623730951) {
      m *= 0.5;
      kd += 1.0;
    }
    *k = kd;
    return m;
  }
};

// Sums of kSums per-element terms over i in [0, n) in 8 order-fixed
// "virtual lanes": element i adds into lane i % 8, each lane in index order,
// and the lanes reduce by one fixed tree, (0+4, 1+5, ...), (0+2, 1+3), 0+1.
// A target with N lanes per vector (N = 1, 2, 4, 8) holds the 8 lanes in 8 / N
// vectors, and the tail runs the same terms on F64Scalar, so every target
// performs the same additions in the same order: the same bits.
// terms(ops, i, t) writes t[0..kSums) for elements i .. i + ops.kLanes - 1
// (ops is F64 or F64Scalar).
constexpr size_t kF64VirtualLanes = 8;

template <size_t kSums, class Terms>
HWY_INLINE void SumF64Lanes(size_t n, const Terms& terms, double* totals) {
  constexpr size_t N = F64::kLanes;
  static_assert(kF64VirtualLanes % N == 0, "vector width must divide 8");
  constexpr size_t R = kF64VirtualLanes / N;
  typename F64::V acc[kSums][R];
  for (size_t s = 0; s < kSums; ++s) {
    for (size_t r = 0; r < R; ++r) acc[s][r] = F64::Zero();
  }
  size_t i = 0;
  for (; i + kF64VirtualLanes <= n; i += kF64VirtualLanes) {
    for (size_t r = 0; r < R; ++r) {
      typename F64::V t[kSums];
      terms(F64(), i + r * N, t);
      for (size_t s = 0; s < kSums; ++s) acc[s][r] = F64::Add(acc[s][r], t[s]);
    }
  }
  HWY_ALIGN double lanes[kSums][kF64VirtualLanes];
  for (size_t s = 0; s < kSums; ++s) {
    for (size_t r = 0; r < R; ++r) F64::Store(acc[s][r], lanes[s] + r * N);
  }
  for (; i < n; ++i) {
    double t[kSums];
    terms(F64Scalar(), i, t);
    for (size_t s = 0; s < kSums; ++s) lanes[s][i % kF64VirtualLanes] += t[s];
  }
  for (size_t s = 0; s < kSums; ++s) {
    double* l = lanes[s];
    for (size_t width = kF64VirtualLanes / 2; width >= 1; width /= 2) {
      for (size_t j = 0; j < width; ++j) l[j] = l[j] + l[j + width];
    }
    totals[s] = l[0];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // BD_KERNELS_F64_VEC_INL_H_
