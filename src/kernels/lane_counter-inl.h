// LaneCounter: how many lanes a run of masks selected, in integer lanes.
// A count is an integer, so any order of additions gives the same value:
// where a kernel's float sums must take the virtual lanes' fixed order
// (virtual_lanes-inl.h, the same bits on every target), its counts need
// not, and a float count there cost wasm four more accumulators (a 4-lane
// vector holds a quarter of the 16 virtual lanes) and two operations per
// vector instead of one. Exact while n < 2^31 (kMaxVocab is 2^22).
//
// Per-target include guard: this header is included once per Highway target.
#if defined(BD_KERNELS_LANE_COUNTER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BD_KERNELS_LANE_COUNTER_INL_H_
#undef BD_KERNELS_LANE_COUNTER_INL_H_
#else
#define BD_KERNELS_LANE_COUNTER_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bd {
namespace HWY_NAMESPACE {

template <class D>
class LaneCounter {
  using DI = hwy::HWY_NAMESPACE::RebindToSigned<std::remove_const_t<D>>;

 public:
  HWY_INLINE LaneCounter() : n_(hwy::HWY_NAMESPACE::Zero(DI())) {}
  template <class M>
  HWY_INLINE void Add(M mask) {
    namespace hn = hwy::HWY_NAMESPACE;
    n_ = hn::Sub(n_, hn::VecFromMask(DI(), hn::RebindMask(DI(), mask)));  // true lanes are -1
  }
  HWY_INLINE size_t Total() const {
    namespace hn = hwy::HWY_NAMESPACE;
    return static_cast<size_t>(static_cast<uint32_t>(hn::GetLane(hn::SumOfLanes(DI(), n_))));
  }

 private:
  hwy::HWY_NAMESPACE::Vec<DI> n_;
};

}  // namespace HWY_NAMESPACE
}  // namespace bd
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
