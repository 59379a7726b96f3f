// The documented draw (decoder.cc), written plainly: exps from `max` at
// `scale` (ExpF32's operations), block sums of 256 in the virtual-lane
// layout, the first index whose running sum exceeds u * Z. The twin the
// cross-target test and the list-draw tests compare the decoder with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "exp_twin.h"

namespace bd_test {

struct TwinDraw {
  int32_t token;
  double gap;  // |u Z - nearest CDF boundary| / Z
};
// keep (optional, row-aligned): the entries outside it weigh 0 (the draw
// over a band of the row, DrawHint::kRowBand).
inline TwinDraw DrawTwin(const std::vector<float>& row, float max, float scale, double u,
                         const std::vector<char>* keep = nullptr) {
  const size_t n = row.size();
  std::vector<float> e(n), bs;
  for (size_t i = 0; i < n; ++i) {
    e[i] = keep && !(*keep)[i] ? 0.0f : ExpF32Twin((row[i] - max) * scale);
  }
  double z = 0.0;
  for (size_t b = 0; b < n; b += 256) {
    float lanes[16] = {0};
    for (size_t i = b; i < std::min(n, b + 256); ++i) lanes[(i - b) % 16] += e[i];
    for (size_t w = 8; w >= 1; w /= 2)
      for (size_t j = 0; j < w; ++j) lanes[j] = lanes[j] + lanes[j + w];
    bs.push_back(lanes[0]);
    z += lanes[0];
  }
  const double target = u * z;
  double cum = 0.0;
  size_t b = 0;
  for (; b < bs.size(); ++b) {
    if (bs[b] > 0.0f && cum + bs[b] > target) break;
    cum += bs[b];
  }
  if (b == bs.size()) return TwinDraw{-1, 0.0};  // every weight underflowed
  double gap = std::fabs(target - cum);
  int32_t pick = -1;
  for (size_t i = b * 256; i < std::min(n, b * 256 + 256); ++i) {
    if (!(e[i] > 0.0f)) continue;
    pick = static_cast<int32_t>(i);
    cum += e[i];
    gap = std::min(gap, std::fabs(target - cum));
    if (cum > target) break;
  }
  return TwinDraw{pick, gap / z};
}

}  // namespace bd_test
