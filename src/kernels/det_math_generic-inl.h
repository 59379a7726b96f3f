// The det_math formulas that run on one double and on SIMD vectors alike,
// written once over an Ops type (static Set/Add/Sub/Mul/Div on Ops::V), so one
// element gives the same bits either way: det_math.h includes this file in
// namespace bd::det_math (Ops = DoubleOps), and the float64 kernels include
// it again per Highway target (Ops = F64, kernels/f64_vec-inl.h), like
// Highway's own -inl.h headers; hence no include guard. Constants come from
// bd::det_math.
//
// Only IEEE add, sub and mul (never MulAdd): the core is built with
// -ffp-contract=off, so no step is fused on any target.

#ifndef BD_DET_INLINE
#define BD_DET_INLINE __attribute__((always_inline)) inline
#endif

// Exact product a * b = p + e (Dekker with Veltkamp splitting: no FMA).
// Needs |a|, |b| < 2^995 and no underflow of the low parts.
template <class Ops, class V>
BD_DET_INLINE void TwoProdT(V a, V b, V* p, V* e) {
  const V split = Ops::Set(134217729.0);  // 2^27 + 1
  const V ca = Ops::Mul(split, a), cb = Ops::Mul(split, b);
  const V ah = Ops::Sub(ca, Ops::Sub(ca, a)), al = Ops::Sub(a, ah);
  const V bh = Ops::Sub(cb, Ops::Sub(cb, b)), bl = Ops::Sub(b, bh);
  *p = Ops::Mul(a, b);
  *e = Ops::Add(Ops::Add(Ops::Add(Ops::Sub(Ops::Mul(ah, bh), *p), Ops::Mul(ah, bl)),
                         Ops::Mul(al, bh)),
                Ops::Mul(al, bl));
}

// Exact sums: a + b = s + e, for |a| >= |b| (or a == 0) and for any order.
template <class Ops, class V>
BD_DET_INLINE void FastTwoSumT(V a, V b, V* s, V* e) {
  *s = Ops::Add(a, b);
  *e = Ops::Sub(b, Ops::Sub(*s, a));
}
template <class Ops, class V>
BD_DET_INLINE void TwoSumT(V a, V b, V* s, V* e) {
  *s = Ops::Add(a, b);
  const V bb = Ops::Sub(*s, a);
  *e = Ops::Add(Ops::Sub(a, Ops::Sub(*s, bb)), Ops::Sub(b, bb));
}

// (e^t - 1 - t) / t^2 = 1/2! + t/3! + ... + t^12/14! (Taylor, Horner), for
// |t| <= ~0.35, where the truncation error is below 2^-62 relative.
template <class Ops, class V>
BD_DET_INLINE V ExpTaylorTailT(V t) {
  V q = Ops::Set(1.0 / 87178291200.0);  // 1/14!
  constexpr double kInvFact[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                                 1.0 / 3628800.0,    1.0 / 362880.0,    1.0 / 40320.0,
                                 1.0 / 5040.0,       1.0 / 720.0,       1.0 / 120.0,
                                 1.0 / 24.0,         1.0 / 6.0,         0.5};
  for (double k : kInvFact) q = Ops::Add(Ops::Mul(q, t), Ops::Set(k));
  return q;
}

// 2^r = e^(r ln2) for |r| <= ~1/2. r ln2 = t + c to ~2^-105 (TwoProd and
// ln2's tail); e^t - 1 = t + t^2 (1/2! + t/3! + ... + t^12/14!) (Taylor; the
// truncation error is below 2^-62 for |t| <= 0.35), e^(t + c) = e^t (1 + c);
// the last step adds 1 to the small part, so one rounding dominates.
template <class Ops, class V>
BD_DET_INLINE V Exp2FractionT(V r) {
  V t, c;
  TwoProdT<Ops>(r, Ops::Set(::bd::det_math::kLn2), &t, &c);
  c = Ops::Add(c, Ops::Mul(r, Ops::Set(::bd::det_math::kLn2Tail)));
  const V q = ExpTaylorTailT<Ops>(t);
  const V em1 = Ops::Add(t, Ops::Mul(Ops::Mul(t, t), q));
  return Ops::Add(Ops::Set(1.0), Ops::Add(em1, Ops::Add(c, Ops::Mul(em1, c))));
}

// e^x = v 2^n (n integer-valued) for -708 <= x <= 709, within ~2 ulp: the
// Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2 (ln2 split so that n
// kLn2Hi is exact for |n| < 2^11), and Taylor to degree 13 (truncation below
// 5e-18 relative). exp_f64.h's ExpF64; half the work of ExpSplitT's
// two-double reduction below.
template <class Ops, class V>
BD_DET_INLINE V ExpCodyWaiteT(V x, V* n) {
  const V shifter = Ops::Set(6755399441055744.0);  // 1.5 * 2^52
  *n = Ops::Sub(Ops::Add(Ops::Mul(x, Ops::Set(1.4426950408889634)), shifter), shifter);
  const V r = Ops::Sub(Ops::Sub(x, Ops::Mul(*n, Ops::Set(0x1.62e42fee00000p-1))),
                       Ops::Mul(*n, Ops::Set(0x1.a39ef35793c76p-33)));
  V v = Ops::Set(1.0 / 6227020800.0);  // 1/13!
  constexpr double kInvFact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                 1.0 / 362880.0,    1.0 / 40320.0,    1.0 / 5040.0,
                                 1.0 / 720.0,       1.0 / 120.0,      1.0 / 24.0,
                                 1.0 / 6.0,         0.5,              1.0,
                                 1.0};
  for (double c : kInvFact) v = Ops::Add(Ops::Mul(v, r), Ops::Set(c));
  return v;
}

// e^x = 2^n v with n an integer (as a double) and v = 2^r, |r| <= ~1/2, from
// x log2 e carried in two doubles. For |x| <= 709.8; ExpFullF64 scales by 2^n.
template <class Ops, class V>
BD_DET_INLINE V ExpSplitT(V x, V* n) {
  V s, s_lo;
  TwoProdT<Ops>(x, Ops::Set(::bd::det_math::kLog2e), &s, &s_lo);
  s_lo = Ops::Add(s_lo, Ops::Mul(x, Ops::Set(::bd::det_math::kLog2eTail)));
  const V shifter = Ops::Set(6755399441055744.0);  // 1.5 * 2^52: rounds to an integer
  *n = Ops::Sub(Ops::Add(s, shifter), shifter);
  const V r = Ops::Add(Ops::Sub(s, *n), s_lo);  // s - n exact
  return Exp2FractionT<Ops>(r);
}

// ln(1 + f) = 2 atanh(s), s = f / (2 + f), as f - (f^2/2 - s (f^2/2 + R)),
// R = sum_{n>=1} 2 s^(2n) / (2n + 1) (fdlibm's arrangement: the rounding
// errors fall on the small terms). |s| <= 0.1716, s^2 <= 0.0295: eleven terms
// leave a truncation error below 2^-60 relative. Writes hfsq = f^2/2 and the
// tail s (hfsq + R): ln(1 + f) = f - (hfsq - tail).
template <class Ops, class V>
BD_DET_INLINE void Log1pReducedT(V f, V* hfsq, V* tail) {
  const V s = Ops::Div(f, Ops::Add(Ops::Set(2.0), f));
  const V z = Ops::Mul(s, s);
  V r = Ops::Set(2.0 / 23.0);
  constexpr double kCoef[] = {2.0 / 21.0, 2.0 / 19.0, 2.0 / 17.0, 2.0 / 15.0, 2.0 / 13.0,
                              2.0 / 11.0, 2.0 / 9.0,  2.0 / 7.0,  2.0 / 5.0,  2.0 / 3.0};
  for (double c : kCoef) r = Ops::Add(Ops::Mul(r, z), Ops::Set(c));
  r = Ops::Mul(r, z);
  *hfsq = Ops::Mul(Ops::Mul(Ops::Set(0.5), f), f);
  *tail = Ops::Mul(s, Ops::Add(*hfsq, r));
}

// ln x for x = 2^k m, m in [sqrt(2)/2, sqrt(2)) (k given as a double):
// k ln2 with ln2 split so that k * kLn2Hi is exact, plus ln(1 + (m - 1))
// (m - 1 exact by Sterbenz). In two parts, hi = k kLn2Hi exactly (a logarithm
// near +-700 keeps its low bits in lo), and summed (the bits of the one-part
// form hi - ((hfsq - l) - f): x + (f - y) = x - (y - f) exactly).
template <class Ops, class V>
BD_DET_INLINE V LogFromSplitPartsT(V m, V k, V* lo_out) {
  const V f = Ops::Sub(m, Ops::Set(1.0));
  V hfsq, tail;
  Log1pReducedT<Ops>(f, &hfsq, &tail);
  const V lo = Ops::Add(tail, Ops::Mul(k, Ops::Set(::bd::det_math::kLn2Lo)));
  *lo_out = Ops::Sub(f, Ops::Sub(hfsq, lo));
  return Ops::Mul(k, Ops::Set(::bd::det_math::kLn2Hi));
}
template <class Ops, class V>
BD_DET_INLINE V LogFromSplitT(V m, V k) {
  V lo;
  const V hi = LogFromSplitPartsT<Ops>(m, k, &lo);
  return Ops::Add(hi, lo);
}
