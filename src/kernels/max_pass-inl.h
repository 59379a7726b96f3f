// Per-target: the plain maximum of a float row in four independent chains
// (one chain is bound by the max latency). The floors of the benchmarks are
// this pass (src/kernels/floor.cc for the library's tools, bench/floor for
// the standalone module): the least work a greedy decoder can do.

// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_MAX_PASS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_MAX_PASS_INL_H_
#undef BD_KERNELS_MAX_PASS_INL_H_
#else
#define BD_KERNELS_MAX_PASS_INL_H_
#endif

#include <cstddef>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

// max(init, x[0..n)) (NaN entries ignored as Highway's Max ignores them).
template <class D>
HWY_INLINE float MaxPass(D d, const float* HWY_RESTRICT x, size_t n, float init) {
  namespace hn = hwy::HWY_NAMESPACE;
  const size_t N = hn::Lanes(d);
  auto m0 = hn::Set(d, init);
  auto m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    m0 = hn::Max(m0, hn::LoadU(d, x + i));
    m1 = hn::Max(m1, hn::LoadU(d, x + i + N));
    m2 = hn::Max(m2, hn::LoadU(d, x + i + 2 * N));
    m3 = hn::Max(m3, hn::LoadU(d, x + i + 3 * N));
  }
  m0 = hn::Max(hn::Max(m0, m1), hn::Max(m2, m3));
  for (; i + N <= n; i += N) m0 = hn::Max(m0, hn::LoadU(d, x + i));
  float m = hn::GetLane(hn::MaxOfLanes(d, m0));
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // BD_KERNELS_MAX_PASS_INL_H_
