// The floor of the benchmark: the least work any sampler must do on a logits
// row. Greedy must read every logit once (a max pass); a sampler that draws
// from softmax(logits) must also sum exp(logit - max) over the row. Nothing
// here is part of the library: it is the yardstick the library is timed
// against, built with the same SIMD (Highway, WASM SIMD128 in the .wasm,
// dynamic dispatch natively) so the ratio library / floor is honest.
//
// wasm: a standalone module (no JS loader, no imports) exporting
//   float* bd_floor_buffer(size_t n)   a static row buffer (JS copies into it)
//   float  bd_floor_max(size_t n)      max over the buffer
//   double bd_floor_max_sum_exp(size_t n)  max, then sum exp(x - max)
// native: bench/floor/floor.h (FloorMax, FloorMaxSumExp over any pointer),
//   the static library bd_bench_floor that the native bench tools link.
#include "floor/floor.h"

#include <cstddef>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "floor/floor.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace bd_floor {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements per float-lane partial sum before it is flushed to double (the
// library's softmax sums the same way: float lanes lose precision over 10^5
// terms).
constexpr size_t kFlushEvery = 4096;

// max(-inf, x[0..n)) in four independent chains (one chain is bound by the
// max latency); NaN entries are ignored as Highway's Max ignores them.
float MaxImpl(const float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto m0 = hn::Set(d, -std::numeric_limits<float>::infinity());
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

double MaxSumExpImpl(const float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const float m = MaxImpl(x, n);
  const auto vm = hn::Set(d, m);
  double total = 0.0;
  size_t i = 0;
  while (i + N <= n) {
    auto acc = hn::Zero(d);
    const size_t full_end = n - (n - i) % N;  // end of the last whole vector
    const size_t stop = full_end - i > kFlushEvery ? i + kFlushEvery : full_end;
    for (; i < stop; i += N) acc = hn::Add(acc, hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vm)));
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, acc)));
  }
  for (; i < n; ++i) total += static_cast<double>(hn::GetLane(hn::Exp(d, hn::Set(d, x[i] - m))));
  return total;
}

}  // namespace HWY_NAMESPACE
}  // namespace bd_floor
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#ifdef __EMSCRIPTEN__
// One target inside a wasm module: static dispatch, no Highway runtime.
float FloorMax(const float* x, size_t n) { return bd_floor::HWY_STATIC_DISPATCH(MaxImpl)(x, n); }
double FloorMaxSumExp(const float* x, size_t n) {
  return bd_floor::HWY_STATIC_DISPATCH(MaxSumExpImpl)(x, n);
}

namespace {
// 2^20 floats: enough for every vocabulary the bench uses (up to 262144).
constexpr size_t kCapacity = size_t{1} << 20;
alignas(64) float g_row[kCapacity];
}  // namespace

extern "C" {
__attribute__((export_name("bd_floor_buffer"))) float* bd_floor_buffer(size_t n) {
  return n <= kCapacity ? g_row : nullptr;
}
__attribute__((export_name("bd_floor_max"))) float bd_floor_max(size_t n) {
  return FloorMax(g_row, n);
}
__attribute__((export_name("bd_floor_max_sum_exp"))) double bd_floor_max_sum_exp(size_t n) {
  return FloorMaxSumExp(g_row, n);
}
}
#else
namespace bd_floor {
HWY_EXPORT(MaxImpl);
HWY_EXPORT(MaxSumExpImpl);
}  // namespace bd_floor
float FloorMax(const float* x, size_t n) { return HWY_DYNAMIC_DISPATCH(bd_floor::MaxImpl)(x, n); }
double FloorMaxSumExp(const float* x, size_t n) {
  return HWY_DYNAMIC_DISPATCH(bd_floor::MaxSumExpImpl)(x, n);
}
#endif
#endif  // HWY_ONCE
