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

// Bit j of a 32-bit word for lane j: the lanes at offset j of a word read
// the bits at kLaneBit[j..j + N).
alignas(64) constexpr uint32_t kLaneBit[32] = {
    1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
    1u << 8,  1u << 9,  1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15,
    1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23,
    1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

// One block [b, end) of MaskRowImpl: returns the masked block's maximum, adds
// its finite count to *finite and the raw block's checks to *raw.
template <class D>
HWY_INLINE float MaskBlock(D d, const float* row, const uint32_t* HWY_RESTRICT mask, float* out,
                           size_t b, size_t end, size_t* finite, MaskedRowScan* raw) {
  const hn::RebindToUnsigned<D> du;
  const size_t N = hn::Lanes(d);  // divides 32 on every target
  const float kNegInf = -std::numeric_limits<float>::infinity();
  const auto vneg = hn::Set(d, kNegInf);
  auto vmax = vneg, vmax1 = vneg;
  // v - v is +0 for a finite v and NaN for NaN and +-inf: the sum stays 0
  // exactly while the raw block holds only finite values.
  auto bad = hn::Zero(d), bad1 = hn::Zero(d);
  size_t allowed = 0;  // set bits of the whole words read
  size_t i = b;
  for (; i + 32 <= end && 2 * N <= 32; i += 32) {
    const uint32_t w = mask[i / 32];
    allowed += static_cast<size_t>(__builtin_popcount(w));
    const auto word = hn::Set(du, w);
    for (size_t j = 0; j < 32; j += 2 * N) {
      const auto r0 = hn::LoadU(d, row + i + j), r1 = hn::LoadU(d, row + i + j + N);
      bad = hn::Add(bad, hn::Sub(r0, r0));
      bad1 = hn::Add(bad1, hn::Sub(r1, r1));
      const auto k0 = hn::RebindMask(d, hn::TestBit(word, hn::Load(du, kLaneBit + j)));
      const auto k1 = hn::RebindMask(d, hn::TestBit(word, hn::LoadU(du, kLaneBit + j + N)));
      const auto v0 = hn::IfThenElse(k0, r0, vneg), v1 = hn::IfThenElse(k1, r1, vneg);
      hn::StoreU(v0, d, out + i + j);
      hn::StoreU(v1, d, out + i + j + N);
      vmax = hn::Max(v0, vmax);
      vmax1 = hn::Max(v1, vmax1);
    }
  }
  float bm = hn::GetLane(hn::MaxOfLanes(d, hn::Max(vmax, vmax1)));
  const auto sum = hn::Add(bad, bad1);
  bool clean = hn::AllTrue(d, hn::Eq(sum, sum));
  for (; i < end; ++i) {
    const float r = row[i];
    clean &= r - r == 0.0f;
    const float v = (mask[i / 32] >> (i % 32)) & 1u ? r : kNegInf;
    out[i] = v;
    if (v > bm) bm = v;
    allowed += v >= -FLT_MAX;
  }
  if (clean) {
    // Every raw entry finite: the masked block's finite entries are its
    // allowed ones.
    *finite += allowed;
    raw->raw_finite += end - b;
    return bm;
  }
  // A NaN or an infinity in the raw block: both blocks counted again.
  const RowScan r = ScanRowImpl(row + b, end - b, nullptr);
  raw->raw_has_nan |= r.has_nan;
  raw->raw_has_pos_inf |= r.max == std::numeric_limits<float>::infinity();
  raw->raw_finite += r.finite;
  *finite += ScanRowImpl(out + b, end - b, nullptr).finite;
  return bm;
}

MaskedRowScan MaskRowImpl(const float* row, const uint32_t* HWY_RESTRICT mask, float* out,
                          size_t n, float* HWY_RESTRICT block_max) {
  static_assert(kBlock % 32 == 0, "a block holds whole mask words");
  const hn::ScalableTag<float> d;
  MaskedRowScan s{};
  s.masked.max = -std::numeric_limits<float>::infinity();
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t end = n - b > kBlock ? b + kBlock : n;
    const float bm = MaskBlock(d, row, mask, out, b, end, &s.masked.finite, &s);
    if (block_max) block_max[b / kBlock] = bm;
    if (bm > s.masked.max) s.masked.max = bm;
  }
  return s;
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
HWY_EXPORT(MaskRowImpl);

RowScan ScanRow(const float* row, size_t n, float* block_max) {
  return HWY_DYNAMIC_DISPATCH(ScanRowImpl)(row, n, block_max);
}
size_t FindFirstEqual(const float* row, size_t n, float max, const float* block_max) {
  return HWY_DYNAMIC_DISPATCH(FindFirstEqualImpl)(row, n, max, block_max);
}
MaskedRowScan MaskRow(const float* row, const uint32_t* mask, float* out, size_t n,
                      float* block_max) {
  return HWY_DYNAMIC_DISPATCH(MaskRowImpl)(row, mask, out, n, block_max);
}
ListScan ScanList(const int32_t* ids, const float* logits, size_t n) {
  return HWY_DYNAMIC_DISPATCH(ScanListImpl)(ids, logits, n);
}
}  // namespace bd
#endif  // HWY_ONCE
