#include "kernels/threshold.h"

#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/threshold.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/band_terms-inl.h"
#include "kernels/blocks.h"
#include "kernels/compress-inl.h"
#include "kernels/exp-inl.h"
#include "kernels/virtual_lanes-inl.h"
#include "kernels/wasm_compress-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Stores the lanes of v and id (and of w when kWithW) that keep
// selects at out + count, in order, as whole vectors (the lanes past the
// count land in the documented slack: cheaper than masked compress-stores on
// every target, and no branch), and returns the new count. In place (out at
// or before the lanes' own place) is fine: each vector is loaded first.
template <bool kWithW, class D, class M>
HWY_INLINE size_t StoreKept(D d, M keep, hn::Vec<D> v, hn::Vec<hn::RebindToSigned<D>> id,
                            hn::Vec<D> w, float* vals_out, int32_t* ids_out, float* w_out,
                            size_t count) {
  const hn::RebindToSigned<D> di;
#if HWY_TARGET == HWY_WASM
  const uint32_t bits = WasmMaskBits(keep);
  hn::StoreU(WasmCompress(v, bits), d, vals_out + count);
  hn::StoreU(WasmCompress(id, bits), di, ids_out + count);
  if (kWithW) hn::StoreU(WasmCompress(w, bits), d, w_out + count);
  return count + static_cast<size_t>(__builtin_popcount(bits));
#else
  hn::StoreU(CompressLanes(d, v, keep), d, vals_out + count);
  hn::StoreU(CompressLanes(di, id, hn::RebindMask(di, keep)), di, ids_out + count);
  if (kWithW) hn::StoreU(CompressLanes(d, w, keep), d, w_out + count);
  return count + hn::CountTrue(d, keep);
#endif
}

// Calls f(begin, end) for each run of consecutive blocks that may hold an
// entry >= t (all of [0, n) without block maxima).
template <class F>
HWY_INLINE void ForCandidateRuns(size_t n, float t, const float* block_max, F f) {
  if (!block_max) {
    f(size_t{0}, n);
    return;
  }
  const size_t nb = NumBlocks(n);
  for (size_t b = 0; b < nb;) {
    if (!(block_max[b] >= t)) {
      ++b;
      continue;
    }
    size_t e = b + 1;
    while (e < nb && block_max[e] >= t) ++e;
    f(b * kBlock, e * kBlock < n ? e * kBlock : n);
    b = e;
  }
}

size_t CountAtLeastImpl(const float* HWY_RESTRICT row, size_t n, float t,
                        const float* HWY_RESTRICT block_max) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vt = hn::Set(d, t);
  size_t count = 0;
  ForCandidateRuns(n, t, block_max, [&](size_t begin, size_t end) {
    size_t i = begin;
#if HWY_TARGET == HWY_WASM
    for (; i + N <= end; i += N) {
      count += static_cast<size_t>(__builtin_popcount(WasmMaskBits(hn::Ge(hn::LoadU(d, row + i), vt))));
    }
#else
    for (; i + N <= end; i += N) count += hn::CountTrue(d, hn::Ge(hn::LoadU(d, row + i), vt));
#endif
    for (; i < end; ++i) count += row[i] >= t ? 1 : 0;
  });
  return count;
}

// The entries with lo <= row[i] (and row[i] < hi when kBelowHi), compacted
// in index order into ids_out / vals_out, and w[i] into w_out when kWithW.
// kSparse: few entries are expected (a band between two close thresholds);
// wasm then tests groups of 32 entries at a time (below). The other gathers
// (a nucleus, a min-p set, a sorted prefix's candidates) can be dense: there
// the plain loop is the faster one in V8 (the grouped loop, even switching
// back to the plain one after a dense group, slows a large nucleus's gather).
template <bool kBelowHi, bool kWithW, bool kSparse>
HWY_INLINE size_t GatherRange(const float* HWY_RESTRICT row, size_t n, float lo, float hi,
                              int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                              const float* HWY_RESTRICT block_max, const float* HWY_RESTRICT w,
                              float* HWY_RESTRICT w_out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  const auto step = hn::Set(di, static_cast<int32_t>(N));
  size_t count = 0;
  ForCandidateRuns(n, lo, block_max, [&](size_t begin, size_t end) {
    size_t i = begin;
#if HWY_TARGET == HWY_WASM
    // Groups of 8 vectors (32 entries) under one 32-bit keep mask: an empty
    // group costs only its compares; one with at most 4 kept entries takes
    // them by index (4 fixed steps, no branch on the count: steps past it
    // write into the slack); a denser one compacts vector by vector. After
    // a group keeping more than half its entries the rest of the run goes
    // vector by vector without the mask. Same output either way.
    constexpr size_t kGroup = 8;
    static_assert(4 * kGroup == 32, "one mask bit per entry of the group");
    for (; kSparse && i + kGroup * N <= end; i += kGroup * N) {
      v128_t keep[kGroup];
      for (size_t j = 0; j < kGroup; ++j) {
        const auto v = hn::LoadU(d, row + i + j * N);
        keep[j] = (kBelowHi ? hn::And(hn::Ge(v, vlo), hn::Lt(v, vhi)) : hn::Ge(v, vlo)).raw;
      }
      uint32_t mask = WasmGroupBits(keep);
      if (mask == 0) continue;
      const size_t kept = static_cast<size_t>(__builtin_popcount(mask));
      if (kept <= 4) {
        for (size_t r = 0; r < 4; ++r) {
          // An emptied mask points at entry 31 (inside the group): a slack write.
          const size_t at = i + static_cast<size_t>(__builtin_ctz(mask | 0x80000000u));
          ids_out[count + r] = static_cast<int32_t>(at);
          vals_out[count + r] = row[at];
          if (kWithW) w_out[count + r] = w[at];
          mask &= mask - 1;
        }
        count += kept;
        continue;
      }
      for (size_t j = 0; j < kGroup; ++j) {
        const uint32_t bits = (mask >> (4 * j)) & 0xFu;
        const auto v = hn::LoadU(d, row + i + j * N);
        const auto idv = hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(i + j * N)));
        hn::StoreU(WasmCompress(v, bits), d, vals_out + count);
        hn::StoreU(WasmCompress(idv, bits), di, ids_out + count);
        if (kWithW) hn::StoreU(WasmCompress(hn::LoadU(d, w + i + j * N), bits), d, w_out + count);
        count += static_cast<size_t>(__builtin_popcount(bits));
      }
      if (kept > 16) {  // dense: the rest of the run vector by vector
        i += kGroup * N;
        break;
      }
    }
#endif
    auto ids = hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(i)));
    for (; i + N <= end; i += N) {
      const auto v = hn::LoadU(d, row + i);
      const auto keep = kBelowHi ? hn::And(hn::Ge(v, vlo), hn::Lt(v, vhi)) : hn::Ge(v, vlo);
#if HWY_TARGET == HWY_WASM
      // No branch: a dense keep pattern (a large nucleus) would mispredict
      // it on most vectors; an empty store lands in the slack.
      count = StoreKept<kWithW>(d, keep, v, ids, kWithW ? hn::LoadU(d, w + i) : v, vals_out,
                                ids_out, w_out, count);
#else
      if (!hn::AllFalse(d, keep)) {
        count = StoreKept<kWithW>(d, keep, v, ids, kWithW ? hn::LoadU(d, w + i) : v, vals_out,
                                ids_out, w_out, count);
      }
#endif
      ids = hn::Add(ids, step);
    }
    for (; i < end; ++i) {
      if (row[i] >= lo && (!kBelowHi || row[i] < hi)) {
        ids_out[count] = static_cast<int32_t>(i);
        vals_out[count] = row[i];
        if (kWithW) w_out[count] = w[i];
        ++count;
      }
    }
  });
  return count;
}

size_t GatherAtLeastImpl(const float* HWY_RESTRICT row, size_t n, float t,
                         int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                         const float* HWY_RESTRICT block_max) {
  return GatherRange<false, false, false>(row, n, t, 0.0f, ids_out, vals_out, block_max,
                                          nullptr, nullptr);
}

size_t GatherAtLeastSparseImpl(const float* HWY_RESTRICT row, size_t n, float t,
                               int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                               const float* HWY_RESTRICT block_max) {
  return GatherRange<false, false, true>(row, n, t, 0.0f, ids_out, vals_out, block_max, nullptr,
                                         nullptr);
}

size_t GatherAtLeastWithImpl(const float* HWY_RESTRICT row, size_t n, float t,
                             int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                             const float* HWY_RESTRICT block_max, const float* HWY_RESTRICT w,
                             float* HWY_RESTRICT w_out) {
  return GatherRange<false, true, false>(row, n, t, 0.0f, ids_out, vals_out, block_max, w, w_out);
}

size_t GatherAtLeastWithSparseImpl(const float* HWY_RESTRICT row, size_t n, float t,
                                   int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                                   const float* HWY_RESTRICT block_max,
                                   const float* HWY_RESTRICT w, float* HWY_RESTRICT w_out) {
  return GatherRange<false, true, true>(row, n, t, 0.0f, ids_out, vals_out, block_max, w, w_out);
}

size_t GatherInRangeImpl(const float* HWY_RESTRICT row, size_t n, float lo, float hi,
                         int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                         const float* HWY_RESTRICT block_max) {
  return GatherRange<true, false, true>(row, n, lo, hi, ids_out, vals_out, block_max, nullptr,
                                        nullptr);
}

size_t GatherInRangeWithImpl(const float* HWY_RESTRICT row, size_t n, float lo, float hi,
                             int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                             const float* HWY_RESTRICT block_max, const float* HWY_RESTRICT w,
                             float* HWY_RESTRICT w_out) {
  return GatherRange<true, true, false>(row, n, lo, hi, ids_out, vals_out, block_max, w, w_out);
}

size_t GatherInRangeWithSparseImpl(const float* HWY_RESTRICT row, size_t n, float lo, float hi,
                                   int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                                   const float* HWY_RESTRICT block_max, const float* HWY_RESTRICT w,
                                   float* HWY_RESTRICT w_out) {
  return GatherRange<true, true, true>(row, n, lo, hi, ids_out, vals_out, block_max, w, w_out);
}

// Keeps, in place and in order, the entries i with vals[i] > cut, or
// vals[i] == cut and ids[i] <= cut_id (a sorted walk's cut, ties broken by
// id), with w[i] when w is not null. A whole-vector store at `count` <= i
// ends inside the vector just loaded, so in place needs no slack.
// kBelow: the complement instead (vals[i] < cut, or == cut and ids[i] >
// cut_id: the entries after the cut in the order), NaN vals dropped too.
template <bool kWithW, bool kBelow = false>
HWY_INLINE size_t CompactAboveCutT(int32_t* HWY_RESTRICT ids, float* HWY_RESTRICT vals,
                                   float* HWY_RESTRICT w, size_t n, float cut, int32_t cut_id) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const auto vcut = hn::Set(d, cut);
  const auto vid = hn::Set(di, cut_id);
  size_t count = 0, i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, vals + i);
    const auto id = hn::LoadU(di, ids + i);
    const auto on_cut = hn::And(hn::Eq(v, vcut), hn::RebindMask(d, kBelow ? hn::Gt(id, vid)
                                                                            : hn::Not(hn::Gt(id, vid))));
    const auto keep = hn::Or(kBelow ? hn::Lt(v, vcut) : hn::Gt(v, vcut), on_cut);
    count = StoreKept<kWithW>(d, keep, v, id, kWithW ? hn::LoadU(d, w + i) : v, vals, ids, w,
                              count);
  }
  for (; i < n; ++i) {
    const bool keep = kBelow ? vals[i] < cut || (vals[i] == cut && ids[i] > cut_id)
                             : vals[i] > cut || (vals[i] == cut && ids[i] <= cut_id);
    ids[count] = ids[i];
    vals[count] = vals[i];
    if (kWithW) w[count] = w[i];
    count += keep;
  }
  return count;
}

size_t CompactAboveCutImpl(int32_t* HWY_RESTRICT ids, float* HWY_RESTRICT vals,
                           float* HWY_RESTRICT w, size_t n, float cut, int32_t cut_id) {
  return w ? CompactAboveCutT<true>(ids, vals, w, n, cut, cut_id)
           : CompactAboveCutT<false>(ids, vals, nullptr, n, cut, cut_id);
}

size_t CompactBelowCutImpl(int32_t* HWY_RESTRICT ids, float* HWY_RESTRICT vals, size_t n,
                           float cut, int32_t cut_id) {
  return CompactAboveCutT<false, true>(ids, vals, nullptr, n, cut, cut_id);
}

// BandSum's terms (band_terms-inl.h) in BandSum's virtual-lane layout, so
// the hole's totals are its bits; the ring's entries are compacted beside them,
// in index order (the terms see the row's vectors in order, pad included).
BandTotals BandSumGatherRingImpl(const float* HWY_RESTRICT row, const float* HWY_RESTRICT w,
                                 size_t n, float lo, float hi, float hole_lo, float hole_hi,
                                 int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                                 float* HWY_RESTRICT w_out, size_t* gathered) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto vlo = hn::Set(d, lo);
  const auto vhi = hn::Set(d, hi);
  const auto hlo = hn::Set(d, hole_lo);
  const auto hhi = hn::Set(d, hole_hi);
  const auto step = hn::Set(di, static_cast<int32_t>(hn::Lanes(d)));
  auto id = hn::Iota(di, 0);
  size_t count = 0;
  double hole_w = 0.0;
  LaneCounter<decltype(d)> hole_count;
  SumVirtualLanes<1>(
      d, row, w, n, NAN,
      [&](auto x, auto wx, auto* t) BD_TERMS {
        const auto in_hole = BandTerms(x, wx, hlo, hhi, t, hole_count);
        const auto in_ring = hn::AndNot(in_hole, hn::And(hn::Ge(x, vlo), hn::Le(x, vhi)));
        count = w_out ? StoreKept<true>(d, in_ring, x, id, wx, vals_out, ids_out, w_out, count)
                      : StoreKept<false>(d, in_ring, x, id, x, vals_out, ids_out, nullptr, count);
        id = hn::Add(id, step);
      },
      &hole_w, nullptr);
  *gathered = count;
  return BandTotals{hole_count.Total(), hole_w};
}

// ExpWrite and BandSumGatherRing of its exps, for a ring with no upper edge
// (top-p's: lo <= row[i] < hole_lo), in one pass: term 0 is the exp pass's
// (the same lanes, so z and every exp are ExpWrite's bits), term 1 and the count
// BandTerms' over the hole [hole_lo, +inf] (BandSum's bits). The pad, -inf,
// has exp 0 and is in neither (lo is finite).
double ExpWriteGatherRingImpl(const float* row, size_t n, float max, float scale,
                              float* HWY_RESTRICT e_out, float lo, float hole_lo,
                              int32_t* HWY_RESTRICT ids_out, float* HWY_RESTRICT vals_out,
                              float* HWY_RESTRICT w_out, size_t* gathered, BandTotals* hole) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto vmax = hn::Set(d, max);
  const auto vscale = hn::Set(d, scale);
  const auto vlo = hn::Set(d, lo);
  const auto hlo = hn::Set(d, hole_lo);
  const auto hhi = hn::Set(d, HUGE_VALF);
  const auto step = hn::Set(di, static_cast<int32_t>(hn::Lanes(d)));
  auto id = hn::Iota(di, 0);
  size_t count = 0;
  double totals[2] = {0.0, 0.0};
  LaneCounter<decltype(d)> hole_count;
  SumVirtualLanesGrouped<2>(
      d, row, nullptr, n, -HUGE_VALF,
      [&](auto& x, auto&, auto& t) BD_TERMS {  // the group's exps interleaved, then each in turn
        constexpr size_t G = sizeof(x) / sizeof(x[0]);
        hn::Vec<decltype(d)> y[G];
        for (size_t g = 0; g < G; ++g) y[g] = hn::Mul(hn::Sub(x[g], vmax), vscale);
        ExpF32Each<G>(d, y);
        for (size_t g = 0; g < G; ++g) {  // t[0] = the exp, the hole's t[1] and count, the ring
          t[g][0] = y[g];
          const auto in_hole = BandTerms(x[g], y[g], hlo, hhi, t[g] + 1, hole_count);
          count = StoreKept<true>(d, hn::AndNot(in_hole, hn::Ge(x[g], vlo)), x[g], id, y[g],
                                  vals_out, ids_out, w_out, count);
          id = hn::Add(id, step);
        }
      },
      totals, nullptr, e_out);
  *gathered = count;
  *hole = BandTotals{hole_count.Total(), totals[1]};
  return totals[0];
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(CountAtLeastImpl);
HWY_EXPORT(BandSumGatherRingImpl);
HWY_EXPORT(ExpWriteGatherRingImpl);
HWY_EXPORT(GatherAtLeastImpl);
HWY_EXPORT(GatherAtLeastSparseImpl);
HWY_EXPORT(GatherAtLeastWithImpl);
HWY_EXPORT(GatherAtLeastWithSparseImpl);
HWY_EXPORT(GatherInRangeImpl);
HWY_EXPORT(GatherInRangeWithImpl);
HWY_EXPORT(GatherInRangeWithSparseImpl);
HWY_EXPORT(CompactAboveCutImpl);
HWY_EXPORT(CompactBelowCutImpl);

size_t CountAtLeast(const float* row, size_t n, float t, const float* block_max) {
  return HWY_DYNAMIC_DISPATCH(CountAtLeastImpl)(row, n, t, block_max);
}
size_t GatherAtLeast(const float* row, size_t n, float t, int32_t* ids_out,
                     float* vals_out, const float* block_max) {
  return HWY_DYNAMIC_DISPATCH(GatherAtLeastImpl)(row, n, t, ids_out, vals_out, block_max);
}
size_t GatherAtLeastSparse(const float* row, size_t n, float t, int32_t* ids_out,
                           float* vals_out, const float* block_max) {
  return HWY_DYNAMIC_DISPATCH(GatherAtLeastSparseImpl)(row, n, t, ids_out, vals_out, block_max);
}
size_t GatherAtLeastWith(const float* row, size_t n, float t, int32_t* ids_out, float* vals_out,
                         const float* block_max, const float* w, float* w_out) {
  return HWY_DYNAMIC_DISPATCH(GatherAtLeastWithImpl)(row, n, t, ids_out, vals_out, block_max, w,
                                                     w_out);
}
size_t GatherAtLeastWithSparse(const float* row, size_t n, float t, int32_t* ids_out,
                               float* vals_out, const float* block_max, const float* w,
                               float* w_out) {
  return HWY_DYNAMIC_DISPATCH(GatherAtLeastWithSparseImpl)(row, n, t, ids_out, vals_out, block_max,
                                                           w, w_out);
}
size_t GatherInRange(const float* row, size_t n, float lo, float hi, int32_t* ids_out,
                     float* vals_out, const float* block_max) {
  return HWY_DYNAMIC_DISPATCH(GatherInRangeImpl)(row, n, lo, hi, ids_out, vals_out, block_max);
}
size_t GatherInRangeWith(const float* row, size_t n, float lo, float hi, int32_t* ids_out,
                         float* vals_out, const float* block_max, const float* w, float* w_out) {
  return HWY_DYNAMIC_DISPATCH(GatherInRangeWithImpl)(row, n, lo, hi, ids_out, vals_out, block_max,
                                                     w, w_out);
}
size_t CompactAboveCut(int32_t* ids, float* vals, float* w, size_t n, float cut, int32_t cut_id) {
  return HWY_DYNAMIC_DISPATCH(CompactAboveCutImpl)(ids, vals, w, n, cut, cut_id);
}
size_t CompactBelowCut(int32_t* ids, float* vals, size_t n, float cut, int32_t cut_id) {
  return HWY_DYNAMIC_DISPATCH(CompactBelowCutImpl)(ids, vals, n, cut, cut_id);
}
size_t GatherInRangeWithSparse(const float* row, size_t n, float lo, float hi, int32_t* ids_out,
                               float* vals_out, const float* block_max, const float* w,
                               float* w_out) {
  return HWY_DYNAMIC_DISPATCH(GatherInRangeWithSparseImpl)(row, n, lo, hi, ids_out, vals_out,
                                                           block_max, w, w_out);
}
BandTotals BandSumGatherRing(const float* row, const float* w, size_t n, float lo, float hi,
                             float hole_lo, float hole_hi, int32_t* ids_out, float* vals_out,
                             float* w_out, size_t* gathered) {
  return HWY_DYNAMIC_DISPATCH(BandSumGatherRingImpl)(row, w, n, lo, hi, hole_lo, hole_hi,
                                                     ids_out, vals_out, w_out, gathered);
}
double ExpWriteGatherRing(const float* row, size_t n, float max, float scale, float* e_out,
                          float lo, float hole_lo, int32_t* ids_out, float* vals_out,
                          float* w_out, size_t* gathered, BandTotals* hole) {
  return HWY_DYNAMIC_DISPATCH(ExpWriteGatherRingImpl)(row, n, max, scale, e_out, lo, hole_lo,
                                                      ids_out, vals_out, w_out, gathered, hole);
}
}  // namespace bd
#endif  // HWY_ONCE
