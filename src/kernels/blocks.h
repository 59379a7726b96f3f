// The row's fixed block layout, shared by every pass that leaves a per-block
// summary behind: the scan's block maxima (so threshold passes skip blocks
// that cannot reach the threshold, and top-k reads its threshold off them)
// and the exp pass's block sums (so the draw walks blocks, then one block).
#pragma once

#include <cstddef>

namespace bd {

constexpr size_t kBlock = 256;        // elements per block
constexpr size_t kVirtualLanes = 16;  // width of the order-fixed sums

constexpr size_t NumBlocks(size_t n) { return (n + kBlock - 1) / kBlock; }

}  // namespace bd
