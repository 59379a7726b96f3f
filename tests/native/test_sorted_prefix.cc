// EnsureSorted on the row (candidates.cc): the sorted prefix it builds, for
// any size asked and any growth path, equals a full sort by (logit
// descending, id ascending), whichever threshold found the entries: block
// maxima, the strided sample (with its fallback when the sample misleads),
// or the counting search.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "candidates.h"
#include "kernels/blocks.h"
#include "kernels/row_scan.h"
#include "kernels/threshold.h"
#include "workspace.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The project's order, by a plain comparison sort.
std::vector<int32_t> FullOrder(const std::vector<float>& row) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < row.size(); ++i)
    if (row[i] != -kInf) ids.push_back(static_cast<int32_t>(i));
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return row[a] > row[b] || (row[a] == row[b] && a < b);
  });
  return ids;
}

// A row candidate set as the decoder builds it (with or without block maxima).
struct RowCands {
  bd::Workspace ws;
  bd::Candidates c;
  RowCands(const std::vector<float>& row, bool blocks) {
    const size_t v = row.size();
    ws.Reserve(v);
    std::copy(row.begin(), row.end(), ws.row.begin());
    c.row = ws.row.data();
    c.vocab = v;
    const bd::RowScan s = bd::ScanRow(c.row, v, blocks ? ws.block_max.data() : nullptr);
    c.row_max = s.max;
    c.block_max = blocks ? ws.block_max.data() : nullptr;
    c.blocks_valid = blocks;
    c.row_finite = bd::CountAtLeast(c.row, v, -FLT_MAX);
    c.ids = ws.ids.data();
    c.logits = ws.logits.data();
  }
};

void CheckPrefix(const RowCands& x, const std::vector<float>& row,
                 const std::vector<int32_t>& want, size_t m) {
  const size_t k = std::min(m, want.size());
  REQUIRE(x.c.size >= k);
  REQUIRE(x.c.size <= want.size());  // candidates only: no banned (-inf) token
  REQUIRE(x.c.sorted >= k);
  // Everything sorted, not only what was asked: a growth keeps all it
  // gathered (up to 3x the request) in order.
  REQUIRE(x.c.sorted == x.c.size);
  for (size_t i = 0; i < x.c.sorted; ++i) {
    REQUIRE(x.c.ids[i] == want[i]);
    REQUIRE(x.c.logits[i] == row[want[i]]);
  }
}

}  // namespace

TEST_CASE("EnsureSorted on the row: every prefix equals the full sort (sample, fallback, ties, -inf)") {
  std::mt19937_64 rng(41);
  std::normal_distribution<float> g(0.0f, 1.5f);
  for (size_t v : {size_t{5000}, size_t{20000}, size_t{65536}, size_t{262144}}) {
    for (int shape = 0; shape < 5; ++shape) {
      std::vector<float> row(v);
      for (float& x : row) x = g(rng);
      // ThresholdFromSample's stride (a sample of a thirty-second of the row,
      // 1024 to 4096 entries, from 16384 entries on): the shapes below put
      // the extremes where it samples.
      const size_t stride = v < 16384 ? v / 4096 : v / std::clamp<size_t>(v / 32, 1024, 4096);
      if (shape == 1) {
        for (float& x : row) x = std::round(x * 4.0f) / 4.0f;  // heavy ties
      } else if (shape == 2) {
        for (size_t i = 0; i < v; i += 3) row[i] = -kInf;  // banned tokens
      } else if (shape == 3 && stride > 0) {
        // The sampled positions hold the largest values: the sample thinks
        // the row is full of them and its threshold gathers too few.
        for (size_t i = 0; i < v; i += stride) row[i] = 20.0f + g(rng);
      } else if (shape == 4 && stride > 0) {
        // The sampled positions hold the smallest: it gathers too many.
        for (size_t i = 0; i < v; i += stride) row[i] = -20.0f + g(rng);
      }
      const std::vector<int32_t> want = FullOrder(row);
      CAPTURE(v);
      CAPTURE(shape);
      for (bool blocks : {true, false}) {
        // Direct requests of one size each.
        for (size_t m : {size_t{1}, size_t{40}, size_t{300}, size_t{1000}, size_t{4097},
                         size_t{5000}, size_t{30000}, v / 2, v}) {
          RowCands x(row, blocks);
          CAPTURE(m);
          bd::EnsureSorted(x.c, m, x.ws);
          CheckPrefix(x, row, want, m);
        }
        // A growing prefix, as the Bregman stage asks (8x, then 4x), and
        // one entry past what is sorted each time (a probe just beyond it).
        RowCands x(row, blocks);
        for (size_t m = 1; m < 2 * v; m *= m < 512 ? 8 : 4) {
          CAPTURE(m);
          bd::EnsureSorted(x.c, m, x.ws);
          CheckPrefix(x, row, want, m);
        }
        RowCands y(row, blocks);
        for (size_t m = 1; m <= v && y.c.size < want.size();) {
          CAPTURE(m);
          bd::EnsureSorted(y.c, m, y.ws);
          CheckPrefix(y, row, want, m);
          m = y.c.size + 1;
        }
      }
    }
  }
}
