#include "kernels/order_keys.h"

#include <cfloat>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/order_keys.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/compress-inl.h"
#include "kernels/wasm_compress-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // (no halves of a one-lane vector)
// OrderKey's high half on lanes: -0 folded to +0, then OrderedBits (a
// negative's every bit flipped, the others' sign).
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> OrderedHighHalves(D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(du, hn::IfThenZeroElse(hn::Eq(v, hn::Zero(d)), v));
  const auto negative = hn::BitCast(du, hn::BroadcastSignBit(hn::BitCast(di, bits)));
  return hn::Xor(bits, hn::Or(negative, hn::Set(du, 0x80000000u)));
}

// The keys (hi << 32) | lo of a vector's lanes, in lane order, at keys[0..N).
template <class DU>
HWY_INLINE void StoreKeys(DU du, hn::Vec<DU> hi, hn::Vec<DU> lo, uint64_t* HWY_RESTRICT keys) {
  const hn::Half<DU> dh;
  const hn::Rebind<uint64_t, decltype(dh)> d64;
  hn::StoreU(hn::Or(hn::ShiftLeft<32>(hn::PromoteTo(d64, hn::LowerHalf(dh, hi))),
                    hn::PromoteTo(d64, hn::LowerHalf(dh, lo))),
             d64, keys);
  hn::StoreU(hn::Or(hn::ShiftLeft<32>(hn::PromoteTo(d64, hn::UpperHalf(dh, hi))),
                    hn::PromoteTo(d64, hn::UpperHalf(dh, lo))),
             d64, keys + hn::Lanes(du) / 2);
}
#endif

size_t RowKeysBelowImpl(const float* HWY_RESTRICT row, size_t n, uint64_t last,
                        uint64_t* HWY_RESTRICT keys) {
  size_t count = 0, i = 0;
#if HWY_TARGET != HWY_SCALAR  // (no halves of a one-lane vector)
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  // Unsigned 32-bit order as signed order after flipping the top bit (no
  // unsigned compare on every target). key < last: its high half below
  // last's, or equal with the low half below.
  const auto top = hn::Set(du, 0x80000000u);
  const auto last_hi = hn::Set(di, static_cast<int32_t>(static_cast<uint32_t>(last >> 32) ^ 0x80000000u));
  const auto last_lo = hn::Set(di, static_cast<int32_t>(static_cast<uint32_t>(last) ^ 0x80000000u));
  const auto lowest = hn::Set(d, -FLT_MAX);
  const auto all_ones = hn::Set(du, 0xFFFFFFFFu);
  const auto iota = hn::Iota(du, 0);
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, row + i);
    const auto hi = OrderedHighHalves(d, v);
    const auto lo = hn::Sub(all_ones, hn::Add(iota, hn::Set(du, static_cast<uint32_t>(i))));
    const auto hi_s = hn::BitCast(di, hn::Xor(hi, top));
    const auto lo_s = hn::BitCast(di, hn::Xor(lo, top));
    const auto below =
        hn::Or(hn::Lt(hi_s, last_hi), hn::And(hn::Eq(hi_s, last_hi), hn::Lt(lo_s, last_lo)));
    const auto keep = hn::And(hn::RebindMask(du, hn::Ge(v, lowest)), hn::RebindMask(du, below));
#if HWY_TARGET == HWY_WASM
    const uint32_t mask_bits = WasmMaskBits(keep);
    if (mask_bits == 0) continue;
    const auto hi_c = WasmCompress(hi, mask_bits);
    const auto lo_c = WasmCompress(lo, mask_bits);
    const size_t kept = static_cast<size_t>(__builtin_popcount(mask_bits));
#else
    if (hn::AllFalse(du, keep)) continue;
    const auto hi_c = CompressLanes(du, hi, keep);
    const auto lo_c = CompressLanes(du, lo, keep);
    const size_t kept = hn::CountTrue(du, keep);
#endif
    // Whole vectors into the slack: lanes past the count are don't-care.
    StoreKeys(du, hi_c, lo_c, keys + count);
    count += kept;
  }
#endif
  for (; i < n; ++i) {
    const float x = row[i];
    const uint64_t key = OrderKey(x, static_cast<int32_t>(i));
    keys[count] = key;
    count += (x >= -FLT_MAX) & (key < last);
  }
  return count;
}

void PackKeysImpl(const int32_t* HWY_RESTRICT ids, const float* HWY_RESTRICT logits, size_t n,
                  uint64_t* HWY_RESTRICT keys) {
  size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::RebindToSigned<decltype(d)> di;
  const size_t N = hn::Lanes(d);
  const auto all_ones = hn::Set(du, 0xFFFFFFFFu);
  for (; i + N <= n; i += N) {
    const auto lo = hn::Sub(all_ones, hn::BitCast(du, hn::LoadU(di, ids + i)));  // 0xFFFFFFFF - id
    StoreKeys(du, OrderedHighHalves(d, hn::LoadU(d, logits + i)), lo, keys + i);
  }
#endif
  for (; i < n; ++i) keys[i] = OrderKey(logits[i], ids[i]);
}

void UnpackKeysImpl(const uint64_t* HWY_RESTRICT keys, size_t n, int32_t* HWY_RESTRICT ids,
                    float* HWY_RESTRICT logits) {
  size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Repartition<uint64_t, decltype(du)> d64;
  const size_t N = hn::Lanes(du);
  const auto top = hn::Set(du, 0x80000000u);
  const auto all_ones = hn::Set(du, 0xFFFFFFFFu);
  for (; i + N <= n; i += N) {
    const auto a = hn::BitCast(du, hn::LoadU(d64, keys + i));
    const auto b = hn::BitCast(du, hn::LoadU(d64, keys + i + N / 2));
    const auto lo = hn::ConcatEven(du, b, a);  // the low halves, in order
    const auto hi = hn::ConcatOdd(du, b, a);
    // FromOrderedBits: a clear top bit (a negative float) flips every bit.
    const auto was_negative =
        hn::BitCast(du, hn::BroadcastSignBit(hn::BitCast(di, hn::Xor(hi, top))));
    hn::StoreU(hn::BitCast(di, hn::Sub(all_ones, lo)), di, ids + i);
    hn::StoreU(hn::BitCast(df, hn::Xor(hi, hn::Or(was_negative, top))), df, logits + i);
  }
#endif
  for (; i < n; ++i) {
    ids[i] = KeyId(keys[i]);
    logits[i] = KeyLogit(keys[i]);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bd {
HWY_EXPORT(RowKeysBelowImpl);
HWY_EXPORT(UnpackKeysImpl);
HWY_EXPORT(PackKeysImpl);

size_t RowKeysBelow(const float* row, size_t n, uint64_t last, uint64_t* keys) {
  return HWY_DYNAMIC_DISPATCH(RowKeysBelowImpl)(row, n, last, keys);
}
void UnpackKeys(const uint64_t* keys, size_t n, int32_t* ids, float* logits) {
  HWY_DYNAMIC_DISPATCH(UnpackKeysImpl)(keys, n, ids, logits);
}
void PackKeys(const int32_t* ids, const float* logits, size_t n, uint64_t* keys) {
  HWY_DYNAMIC_DISPATCH(PackKeysImpl)(ids, logits, n, keys);
}
}  // namespace bd
#endif  // HWY_ONCE
