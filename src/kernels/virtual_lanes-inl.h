// Sums over a row in a layout that does not depend on the vector width:
// element i always goes to "virtual lane" i % 16 of its 256-element block,
// each virtual lane adds its 16 terms in index order (in float), and a block's
// 16 lanes are reduced by one fixed pairwise tree. A target with N-lane
// vectors (N = 1, 4, 8 or 16) holds the 16 virtual lanes in 16 / N vectors,
// so scalar, SSE4, AVX2, AVX-512 and WASM all perform the very same float
// additions in the same order and return the same bits. Block sums are then
// added in double, block by block in order (about 1e-7 relative accuracy
// however long the row).
//
// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_VIRTUAL_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_VIRTUAL_LANES_INL_H_
#undef BD_KERNELS_VIRTUAL_LANES_INL_H_
#else
#define BD_KERNELS_VIRTUAL_LANES_INL_H_
#endif

#include <cstddef>
#include <type_traits>

#include <hwy/highway.h>

#include "kernels/blocks.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

// Marks the terms lambdas: they must inline into the loop (a call per chunk
// would spill the accumulators; wasm pays most for that).
#define BD_TERMS __attribute__((always_inline))

// Reduces 16 floats by the fixed tree (0+8, 1+9, ...), (0+4, ...), ...
HWY_INLINE float ReduceVirtualLanes(float* lanes) {
  for (size_t width = kVirtualLanes / 2; width >= 1; width /= 2) {
    for (size_t j = 0; j < width; ++j) lanes[j] = lanes[j] + lanes[j + width];
  }
  return lanes[0];
}

// SumVirtualLanes' default group_terms: none (each vector by terms alone).
struct NoGroupTerms {};

// The vectors group_terms takes at once: enough independent chains to hide
// an exp's Horner latency, few enough to stay in registers (AVX-512 has 32,
// the 128- and 256-bit targets 16). Not in wasm: there the groups made
// Chromium 156's code 1.2-2.4x slower (softmax sample, Bregman at k ~ 10;
// bench rows, Intel Xeon) while Node 20's gained 2-8 %.
template <size_t N>
constexpr size_t kTermsGroup = N == 16 ? 4 : 2;
constexpr bool kGroupTerms = HWY_TARGET != HWY_WASM;

// For each block of v[0..n) (and w, when non-null, at the same indices):
// terms(x, w_or_zero, t) writes kSums term vectors for 16 / N consecutive
// elements; totals[s] += the block's sum of term s, and block_sums (when
// non-null) receives each block's sum of term 0 as a float; write0 (when
// non-null; it may alias v) receives term 0 itself, element by element.
// Elements past n read as `pad` (v) and 0 (w): terms must map pad to 0.
// group_terms (optional): group_terms(x, w, t) writes the terms t[g][s] of
// G = kTermsGroup<N> consecutive vectors x[g] (w[g]) at once, each lane as
// terms would: independent chains of a long dependent computation (an exp's
// Horner steps) then overlap. Each lane's additions stay in index order: the
// same bits. (SumVirtualLanesGrouped below derives terms from it.)
template <size_t kSums, class D, class Terms, class GroupTerms = NoGroupTerms>
HWY_INLINE void SumVirtualLanes(D d, const float* v, const float* w, size_t n, float pad,
                                Terms terms, double* totals, float* block_sums,
                                float* write0 = nullptr, GroupTerms group_terms = {}) {
  namespace hn = hwy::HWY_NAMESPACE;
  using V = hn::Vec<D>;
  constexpr size_t N = hn::MaxLanes(d);
  static_assert(kVirtualLanes % N == 0, "vector width must divide 16");
  constexpr size_t R = kVirtualLanes / N;
  HWY_ALIGN float lanes[kVirtualLanes];
  HWY_ALIGN float pad_v[kVirtualLanes];
  HWY_ALIGN float pad_w[kVirtualLanes];
  HWY_ALIGN float pad_out[kVirtualLanes];
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t end = n - b > kBlock ? b + kBlock : n;
    V acc[kSums][R];
    for (size_t s = 0; s < kSums; ++s) {
      for (size_t r = 0; r < R; ++r) acc[s][r] = hn::Zero(d);
    }
    size_t i = b;
    if constexpr (kGroupTerms && N >= 4 && !std::is_same_v<GroupTerms, NoGroupTerms>) {
      constexpr size_t G = kTermsGroup<N>;
      static_assert(kBlock % (G * N) == 0 && (G % R == 0 || R % G == 0), "groups tile chunks");
      // Whole chunks only: the chunk loop below must start on one.
      const size_t whole = b + (end - b) / kVirtualLanes * kVirtualLanes;
      for (; i + G * N <= whole; i += G * N) {
        V x[G], wx[G], t[G][kSums];
        for (size_t g = 0; g < G; ++g) {
          x[g] = hn::LoadU(d, v + i + g * N);
          wx[g] = w ? hn::LoadU(d, w + i + g * N) : hn::Zero(d);
        }
        group_terms(x, wx, t);
        const size_t r0 = ((i - b) / N) % R;  // the chunk vector of x[0]
        for (size_t g = 0; g < G; ++g) {
          if (write0) hn::StoreU(t[g][0], d, write0 + i + g * N);
          for (size_t s = 0; s < kSums; ++s) {
            acc[s][(r0 + g) % R] = hn::Add(acc[s][(r0 + g) % R], t[g][s]);
          }
        }
      }
    }
    for (; i + kVirtualLanes <= end; i += kVirtualLanes) {
      for (size_t r = 0; r < R; ++r) {
        V t[kSums];
        terms(hn::LoadU(d, v + i + r * N), w ? hn::LoadU(d, w + i + r * N) : hn::Zero(d), t);
        if (write0) hn::StoreU(t[0], d, write0 + i + r * N);
        for (size_t s = 0; s < kSums; ++s) acc[s][r] = hn::Add(acc[s][r], t[s]);
      }
    }
    if (i < end) {
      // The row's last partial chunk, padded: same lanes, same order.
      for (size_t j = 0; j < kVirtualLanes; ++j) {
        pad_v[j] = i + j < end ? v[i + j] : pad;
        pad_w[j] = (w && i + j < end) ? w[i + j] : 0.0f;
      }
      for (size_t r = 0; r < R; ++r) {
        V t[kSums];
        terms(hn::LoadU(d, pad_v + r * N), hn::LoadU(d, pad_w + r * N), t);
        hn::StoreU(t[0], d, pad_out + r * N);
        for (size_t s = 0; s < kSums; ++s) acc[s][r] = hn::Add(acc[s][r], t[s]);
      }
      if (write0) {
        for (size_t j = 0; i + j < end; ++j) write0[i + j] = pad_out[j];
      }
    }
    for (size_t s = 0; s < kSums; ++s) {
      for (size_t r = 0; r < R; ++r) hn::Store(acc[s][r], d, lanes + r * N);
      const float block = ReduceVirtualLanes(lanes);
      totals[s] += block;
      if (s == 0 && block_sums) block_sums[b / kBlock] = block;
    }
  }
}

// SumVirtualLanes given group_terms alone: the vectors outside whole groups
// (and all of them where groups are off: wasm, scalar) go through it as
// groups of one, so a kernel writes its terms once.
template <size_t kSums, class D, class GroupTerms>
HWY_INLINE void SumVirtualLanesGrouped(D d, const float* v, const float* w, size_t n, float pad,
                                       GroupTerms group_terms, double* totals, float* block_sums,
                                       float* write0 = nullptr) {
  using V = hwy::HWY_NAMESPACE::Vec<D>;
  SumVirtualLanes<kSums>(
      d, v, w, n, pad,
      [&](V x, V wx, V* t) BD_TERMS {
        V xs[1] = {x}, ws[1] = {wx}, ts[1][kSums];
        group_terms(xs, ws, ts);
        for (size_t s = 0; s < kSums; ++s) t[s] = ts[0][s];
      },
      totals, block_sums, write0, group_terms);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // BD_KERNELS_VIRTUAL_LANES_INL_H_
