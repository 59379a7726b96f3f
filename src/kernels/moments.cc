#include "kernels/moments.h"

#include <cfloat>
#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/moments.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements per float-lane partial sum before it is flushed to double.
constexpr size_t kMomentBlock = 1024;
// Exponents below this give exp() == 0 in Highway's float Exp (its bound is
// -104); clamping there keeps e * x at 0 instead of 0 * -inf = NaN.
constexpr float kExpFloor = -110.0f;

template <class D, class V>
HWY_INLINE double FlushLanes(D d, V acc) {
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(acc, d, lanes);
  double total = 0.0;
  for (size_t l = 0; l < hn::Lanes(d); ++l) total += lanes[l];
  return total;
}

template <bool kWrite>
ExpMomentSums ExpMomentsT(const float* HWY_RESTRICT v, size_t n, float max, float scale,
                          float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vmax = hn::Set(d, max);
  const auto vscale = hn::Set(d, scale);
  const auto vfloor = hn::Set(d, kExpFloor);
  ExpMomentSums s{0.0, 0.0};
  size_t i = 0;
  while (i + N <= n) {
    const size_t block_end = (n - i > kMomentBlock) ? i + kMomentBlock : n;
    auto acc_e = hn::Zero(d);
    auto acc_ex = hn::Zero(d);
    for (; i + N <= block_end; i += N) {
      const auto x = hn::Max(hn::Mul(hn::Sub(hn::LoadU(d, v + i), vmax), vscale), vfloor);
      const auto e = hn::Exp(d, x);
      if (kWrite) hn::StoreU(e, d, out + i);
      acc_e = hn::Add(acc_e, e);
      acc_ex = hn::MulAdd(e, x, acc_ex);
    }
    s.sum_e += FlushLanes(d, acc_e);
    s.sum_ex += FlushLanes(d, acc_ex);
  }
  for (; i < n; ++i) {
    // The tail goes through the same vector arithmetic (one lane).
    const auto x = hn::Max(hn::Set(d, (v[i] - max) * scale), vfloor);
    const auto e = hn::Exp(d, x);
    const float ef = hn::GetLane(e);
    if (kWrite) out[i] = ef;
    s.sum_e += ef;
    s.sum_ex += static_cast<double>(ef) * hn::GetLane(x);
  }
  return s;
}

ExpMomentSums ExpMomentsImpl(const float* v, size_t n, float max, float scale, float* out) {
  return out ? ExpMomentsT<true>(v, n, max, scale, out)
             : ExpMomentsT<false>(v, n, max, scale, nullptr);
}

BandTotals BandSumImpl(const float* HWY_RESTRICT v, const float* HWY_RESTRICT w, size_t n,
                       float lo, float hi) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  BandTotals t{0, 0.0};
  size_t i = 0;
  while (i + N <= n) {
    const size_t block_end = (n - i > kMomentBlock) ? i + kMomentBlock : n;
    auto acc = hn::Zero(d);
    for (; i + N <= block_end; i += N) {
      const auto x = hn::LoadU(d, v + i);
      const auto in = hn::And(hn::Ge(x, vlo), hn::Le(x, vhi));
      t.count += hn::CountTrue(d, in);
      acc = hn::Add(acc, hn::IfThenElseZero(in, hn::LoadU(d, w + i)));
    }
    t.sum_w += FlushLanes(d, acc);
  }
  for (; i < n; ++i) {
    if (v[i] >= lo && v[i] <= hi) {
      ++t.count;
      t.sum_w += w[i];
    }
  }
  return t;
}

FiniteMomentSums FiniteMomentsImpl(const float* HWY_RESTRICT v, size_t n, float center) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vc = hn::Set(d, center);
  const auto vmin = hn::Set(d, -FLT_MAX);
  FiniteMomentSums m{0, 0.0, 0.0};
  size_t i = 0;
  while (i + N <= n) {
    const size_t block_end = (n - i > kMomentBlock) ? i + kMomentBlock : n;
    auto acc1 = hn::Zero(d);
    auto acc2 = hn::Zero(d);
    for (; i + N <= block_end; i += N) {
      const auto x = hn::LoadU(d, v + i);
      const auto finite = hn::Ge(x, vmin);
      m.count += hn::CountTrue(d, finite);
      const auto dx = hn::IfThenElseZero(finite, hn::Sub(x, vc));
      acc1 = hn::Add(acc1, dx);
      acc2 = hn::MulAdd(dx, dx, acc2);
    }
    m.sum_d += FlushLanes(d, acc1);
    m.sum_d2 += FlushLanes(d, acc2);
  }
  for (; i < n; ++i) {
    if (v[i] >= -FLT_MAX) {
      const float dx = v[i] - center;
      ++m.count;
      m.sum_d += dx;
      m.sum_d2 += static_cast<double>(dx) * dx;
    }
  }
  return m;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ExpMomentsImpl);
HWY_EXPORT(BandSumImpl);
HWY_EXPORT(FiniteMomentsImpl);

ExpMomentSums ExpMoments(const float* v, size_t n, float max, float scale, float* out) {
  return HWY_DYNAMIC_DISPATCH(ExpMomentsImpl)(v, n, max, scale, out);
}
BandTotals BandSum(const float* v, const float* w, size_t n, float lo, float hi) {
  return HWY_DYNAMIC_DISPATCH(BandSumImpl)(v, w, n, lo, hi);
}
FiniteMomentSums FiniteMoments(const float* v, size_t n, float center) {
  return HWY_DYNAMIC_DISPATCH(FiniteMomentsImpl)(v, n, center);
}
}  // namespace bd
#endif  // HWY_ONCE
