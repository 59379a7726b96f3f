#include "kernels/row_scan.h"

#include <cfloat>
#include <cmath>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/row_scan.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/blocks.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether x[0..n) holds a NaN: the re-read of a block whose finite count
// fell short (a NaN or a -inf in it; a masked row has -inf in most blocks,
// so this stays a SIMD pass). Eq, not Ne: Highway's AVX-512 Ne is an
// ordered compare, false for NaN.
template <class D>
HWY_INLINE bool HasNaN(D d, const float* HWY_RESTRICT x, size_t n) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, x + i);
    if (!hn::AllTrue(d, hn::Eq(v, v))) return true;
  }
  for (; i < n; ++i) {
    if (x[i] != x[i]) return true;
  }
  return false;
}

RowScan ScanRowImpl(const float* HWY_RESTRICT row, size_t n, float* HWY_RESTRICT block_max) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const float kNegInf = -std::numeric_limits<float>::infinity();
  const auto vlow = hn::Set(d, -FLT_MAX);
  float m = kNegInf;
  size_t finite_total = 0;
  bool has_nan = false;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t end = n - b > kBlock ? b + kBlock : n;
    // Start at -inf (not Highway's -FLT_MAX) so an all -inf block reports -inf.
    auto vmax = hn::Set(d, kNegInf);
    // The block's finite count per lane: subtracting a mask vector (-1
    // where set) adds 1.
    auto finite = hn::Zero(di);
    size_t i = b;
    // Four vectors per step with their own maxima (the max chain is the
    // loop's only dependency). Max(v, m) ignores a NaN v on every target
    // (Highway matches x86: Max(NaN, x) is x). NaN is not looked for here:
    // a block whose every entry counts as finite holds none, and only the
    // others (NaN or -inf in them) are read again for it below (HasNaN).
    auto vmax1 = vmax, vmax2 = vmax, vmax3 = vmax;
    for (; i + 4 * N <= end; i += 4 * N) {
      const auto v0 = hn::LoadU(d, row + i), v1 = hn::LoadU(d, row + i + N);
      const auto v2 = hn::LoadU(d, row + i + 2 * N), v3 = hn::LoadU(d, row + i + 3 * N);
      vmax = hn::Max(v0, vmax);
      vmax1 = hn::Max(v1, vmax1);
      vmax2 = hn::Max(v2, vmax2);
      vmax3 = hn::Max(v3, vmax3);
      const auto f01 = hn::Add(hn::VecFromMask(di, hn::RebindMask(di, hn::Ge(v0, vlow))),
                               hn::VecFromMask(di, hn::RebindMask(di, hn::Ge(v1, vlow))));
      const auto f23 = hn::Add(hn::VecFromMask(di, hn::RebindMask(di, hn::Ge(v2, vlow))),
                               hn::VecFromMask(di, hn::RebindMask(di, hn::Ge(v3, vlow))));
      finite = hn::Sub(finite, hn::Add(f01, f23));
    }
    vmax = hn::Max(hn::Max(vmax, vmax1), hn::Max(vmax2, vmax3));
    for (; i + N <= end; i += N) {
      const auto v = hn::LoadU(d, row + i);
      vmax = hn::Max(v, vmax);
      finite = hn::Sub(finite, hn::VecFromMask(di, hn::RebindMask(di, hn::Ge(v, vlow))));
    }
    float bm = hn::GetLane(hn::MaxOfLanes(d, vmax));
    size_t counted = static_cast<size_t>(hn::GetLane(hn::SumOfLanes(di, finite)));
    for (; i < end; ++i) {
      const float v = row[i];
      if (v > bm) bm = v;
      if (v >= -FLT_MAX) ++counted;
    }
    if (!has_nan && counted < end - b) has_nan = HasNaN(d, row + b, end - b);
    finite_total += counted;
    if (block_max) block_max[b / kBlock] = bm;
    if (bm > m) m = bm;
  }
  return RowScan{m, has_nan, finite_total};
}

size_t FindFirstEqualImpl(const float* HWY_RESTRICT row, size_t n, float max,
                          const float* HWY_RESTRICT block_max) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vmax = hn::Set(d, max);
  size_t begin = 0;
  if (block_max) {
    // The first block whose maximum is `max` holds the first hit.
    size_t b = 0;
    while (b < NumBlocks(n) && !(block_max[b] == max)) ++b;
    begin = b * kBlock;
  }
  size_t i = begin;
  for (; i + N <= n; i += N) {
    const intptr_t pos = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, row + i), vmax));
    if (pos >= 0) return i + static_cast<size_t>(pos);
  }
  for (; i < n; ++i) {
    if (row[i] == max) return i;
  }
  return n;
}

ListScan ScanListImpl(const int32_t* HWY_RESTRICT ids, const float* HWY_RESTRICT logits,
                      size_t n) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  // ids[i] < ids[i + 1] for every i: a vector against the one a lane later.
  auto ascending = hn::FirstN(di, N);
  auto vmax = hn::Set(d, -std::numeric_limits<float>::infinity());
  size_t i = 0;
  for (; i + N + 1 <= n; i += N) {
    ascending = hn::And(ascending, hn::Lt(hn::LoadU(di, ids + i), hn::LoadU(di, ids + i + 1)));
    vmax = hn::Max(hn::LoadU(d, logits + i), vmax);
  }
  bool asc = hn::AllTrue(di, ascending) && (n == 0 || ids[0] >= 0);
  float m = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; i < n; ++i) {
    if (i + 1 < n) asc &= ids[i] < ids[i + 1];
    if (logits[i] > m) m = logits[i];
  }
  return ListScan{asc, m};
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(ScanRowImpl);
HWY_EXPORT(FindFirstEqualImpl);
HWY_EXPORT(ScanListImpl);

RowScan ScanRow(const float* row, size_t n, float* block_max) {
  return HWY_DYNAMIC_DISPATCH(ScanRowImpl)(row, n, block_max);
}
size_t FindFirstEqual(const float* row, size_t n, float max, const float* block_max) {
  return HWY_DYNAMIC_DISPATCH(FindFirstEqualImpl)(row, n, max, block_max);
}
ListScan ScanList(const int32_t* ids, const float* logits, size_t n) {
  return HWY_DYNAMIC_DISPATCH(ScanListImpl)(ids, logits, n);
}
}  // namespace bd
#endif  // HWY_ONCE
