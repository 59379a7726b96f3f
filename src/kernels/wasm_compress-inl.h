// Per-target, used on wasm only: mask bits and lane compression that
// Highway 1.0.3 does slowly there (through the stack). The compaction
// kernels (threshold.cc, order_keys.cc) compress with these on wasm and with
// CompressLanes (compress-inl.h) elsewhere.

// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_WASM_COMPRESS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_WASM_COMPRESS_INL_H_
#undef BD_KERNELS_WASM_COMPRESS_INL_H_
#else
#define BD_KERNELS_WASM_COMPRESS_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_WASM
// Highway 1.0.3 turns a wasm mask into bits through a stack store; the
// i32x4.bitmask instruction does it in one step. The bits drive both
// compressions and the count (same results, fewer instructions).
template <class M>
HWY_INLINE uint32_t WasmMaskBits(M mask) {
  return static_cast<uint32_t>(wasm_i32x4_bitmask(mask.raw));
}

// Highway 1.0.3's wasm Compress goes through TableLookupBytes, which it
// emulates byte by byte via the stack (engine support for i8x16.swizzle was
// young then); every engine we target has it now. Row `bits` of this table
// moves the 4-byte lanes set in `bits` to the front, in order (the tail is
// don't-care: the caller stores a whole vector into its slack).
struct WasmCompressTable {
  alignas(16) uint8_t bytes[16][16];
  constexpr WasmCompressTable() : bytes() {
    for (uint32_t bits = 0; bits < 16; ++bits) {
      uint32_t out = 0;
      for (uint32_t lane = 0; lane < 4; ++lane) {
        if (!((bits >> lane) & 1u)) continue;
        for (uint32_t b = 0; b < 4; ++b) bytes[bits][4 * out + b] = static_cast<uint8_t>(4 * lane + b);
        ++out;
      }
      for (; out < 4; ++out) {
        for (uint32_t b = 0; b < 4; ++b) bytes[bits][4 * out + b] = static_cast<uint8_t>(b);
      }
    }
  }
};
constexpr WasmCompressTable kWasmCompress{};

// The keep masks of 8 vectors (32 lanes, all-ones or zero) as one 32-bit
// mask, bit 4j + l for lane l of vector j: the saturating narrows keep each
// lane's sign, so two byte bitmasks replace eight lane bitmasks and their
// shifts.
HWY_INLINE uint32_t WasmGroupBits(const v128_t* keep) {
  const v128_t lo = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(keep[0], keep[1]),
                                            wasm_i16x8_narrow_i32x4(keep[2], keep[3]));
  const v128_t hi = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(keep[4], keep[5]),
                                            wasm_i16x8_narrow_i32x4(keep[6], keep[7]));
  return static_cast<uint32_t>(wasm_i8x16_bitmask(lo)) |
         (static_cast<uint32_t>(wasm_i8x16_bitmask(hi)) << 16);
}

template <class V>
HWY_INLINE V WasmCompress(V v, uint32_t bits) {
  return V{wasm_i8x16_swizzle(v.raw, wasm_v128_load(kWasmCompress.bytes[bits]))};
}
#endif


}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
