// Lane compression for the compaction kernels (threshold.cc, order_keys.cc)
// on every target but wasm (wasm_compress-inl.h): CompressLanes(d, v, keep)
// puts the 32-bit lanes of v that keep selects first, in order; the lanes
// after them are don't-care (callers store whole vectors into slack).
//
// On the 4- and 8-lane x86 targets Highway 1.0.3's Compress reads its
// permutation from a table declared as a non-static local array, which GCC
// copies onto the stack (1 KB) at every call. The table here is static; the
// permutation is the same, so are the results. AVX-512 and scalar keep
// hn::Compress (a native instruction, or one lane).
//
// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_COMPRESS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_COMPRESS_INL_H_
#undef BD_KERNELS_COMPRESS_INL_H_
#else
#define BD_KERNELS_COMPRESS_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
// Row `bits` of the table: the lanes set in `bits` in order, then the others,
// one lane index per nibble (lane 0's index in the lowest).
template <size_t N>
struct CompressNibbles {
  uint32_t packed[size_t{1} << N];
  constexpr CompressNibbles() : packed() {
    for (uint32_t bits = 0; bits < (1u << N); ++bits) {
      uint32_t p = 0, out = 0;
      for (uint32_t lane = 0; lane < N; ++lane) {  // the kept lanes first
        if ((bits >> lane) & 1u) p |= lane << (4 * out++);
      }
      for (uint32_t lane = 0; lane < N; ++lane) {  // then the rest
        if (!((bits >> lane) & 1u)) p |= lane << (4 * out++);
      }
      packed[bits] = p;
    }
  }
};
template <size_t N>
constexpr CompressNibbles<N> kCompressNibbles{};
#endif

template <class D, class M>
HWY_INLINE hwy::HWY_NAMESPACE::Vec<D> CompressLanes(D d, hwy::HWY_NAMESPACE::Vec<D> v, M keep) {
  namespace hn = hwy::HWY_NAMESPACE;
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  constexpr size_t N = hn::MaxLanes(d);
  if constexpr (sizeof(hn::TFromD<D>) == 4 && (N == 4 || N == 8)) {
    const hn::RebindToSigned<D> di;
    uint8_t bits[8] = {0};
    hn::StoreMaskBits(d, keep, bits);
    const auto packed = hn::Set(di, static_cast<int32_t>(kCompressNibbles<N>.packed[bits[0]]));
    const auto shifts = hn::ShiftLeft<2>(hn::Iota(di, 0));
    const auto idx = hn::And(hn::Shr(packed, shifts), hn::Set(di, 0xF));
    return hn::TableLookupLanes(v, hn::IndicesFromVec(d, idx));
  }
#endif
  (void)d;
  return hn::Compress(v, keep);
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
