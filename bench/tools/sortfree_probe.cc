// bd_sortfree_probe: what a sort-free large-k Bregman path would cost
// natively, measured with the library's own kernels on one row: the steps
// that would replace the key sort of a k ~ V/2 decode and feed the sketch
// (notes/bregman_journal.md, "A sort-free large-k path"),
// cumulatively (stage s includes every stage before it):
//   0  the floor: copy of the row + max + sum of exp (bench/floor)
//   1  + gather of the entries >= the k-th largest logit (SIMD compress)
//   2  + a cell per gathered entry (16 per binade of p, from its logit) and a
//        count per cell
//   3  + prefix sums and a stable scatter of (id, logit) into cell order
//   4  + float64 p of every bucketed entry (ScaledExpF64)
//   5  + 8 Chebyshev moments of every cell of more than 8 entries
//   6  + the cells' series increments for q (ChebyshevIncrements, 8 terms)
// The search on the sketch's nodes and the draw inside one cell are left out
// (a few thousand nodes, one cell). Within a cell the entries stay in id
// order: only a cell that holds the support's boundary would be sorted.
//   bd_sortfree_probe ROW.f32 K [REPS]   (bench/tools/sortfree_probe.mjs runs it)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "floor/floor.h"
#include "kernels/scaled_exp.h"
#include "kernels/support_map.h"
#include "kernels/threshold.h"

namespace {

constexpr size_t kMaxV = 262144;
constexpr size_t kCells = 4096;
constexpr size_t kTerms = bd::kChebyshevTerms;

alignas(64) float g_input[kMaxV];  // the row read from ROW.f32
alignas(64) float g_row[kMaxV];    // the copy the floor and the stages read
alignas(64) int32_t g_ids[kMaxV + bd::kCompressSlack], g_cell_ids[kMaxV];
alignas(64) float g_vals[kMaxV + bd::kCompressSlack], g_cell_vals[kMaxV];
alignas(64) double g_p[kMaxV], g_q[kMaxV];
uint16_t g_cell[kMaxV];
uint32_t g_end[kCells];
double g_moments[kCells * kTerms];
double g_coef[kTerms] = {1e-9, 2e-10, -3e-11, 4e-12, -5e-13, 6e-14, -7e-15, 8e-16};
float g_threshold = 0.0f, g_max = 0.0f;
double g_z = 1.0;

double Run(size_t n, int stage) {
  std::memcpy(g_row, g_input, n * sizeof(float));
  double sink = FloorMaxSumExp(g_row, n);
  if (stage < 1) return sink;
  const size_t m = bd::GatherAtLeast(g_row, n, g_threshold, g_ids, g_vals);
  if (stage < 2) return m;
  // Cell c holds (max - l) in [c, c + 1) / 16 binades of p (T = 1).
  const float cells_per_nat = static_cast<float>(16.0 / std::log(2.0));
  std::memset(g_end, 0, sizeof(g_end));
  for (size_t i = 0; i < m; ++i) {
    const float d = (g_max - g_vals[i]) * cells_per_nat;
    const uint32_t c = d < static_cast<float>(kCells - 1) ? static_cast<uint32_t>(d) : kCells - 1;
    g_cell[i] = static_cast<uint16_t>(c);
    ++g_end[c];
  }
  if (stage < 3) return g_end[0];
  uint32_t at = 0;
  for (size_t c = 0; c < kCells; ++c) {
    const uint32_t count = g_end[c];
    g_end[c] = at;
    at += count;
  }
  for (size_t i = 0; i < m; ++i) {
    const uint32_t to = g_end[g_cell[i]]++;  // ends up as the cell's end
    g_cell_ids[to] = g_ids[i];
    g_cell_vals[to] = g_vals[i];
  }
  if (stage < 4) return g_cell_ids[m / 2];
  bd::ScaledExpF64(g_cell_vals, m, g_max, 1.0, g_z, g_p);
  if (stage < 5) return g_p[m / 2];
  const double width = std::log(2.0) / 16.0;
  for (int pass = 5; pass <= stage && pass <= 6; ++pass) {
    uint32_t begin = 0;
    for (size_t c = 0; c < kCells; ++c) {
      const uint32_t end = g_end[c];
      if (end - begin > kTerms) {
        const double hi = std::exp(-width * c) / g_z, lo = std::exp(-width * (c + 1)) / g_z;
        const double centre = 0.5 * (hi + lo), inv_half = 2.0 / (hi - lo);
        if (pass == 5) {
          bd::ChebyshevMoments(g_p + begin, end - begin, centre, inv_half, kTerms, g_moments + kTerms * c);
        } else {
          bd::ChebyshevIncrements(g_p + begin, end - begin, centre, inv_half, g_coef, kTerms, g_q + begin);
        }
      }
      begin = end;
    }
  }
  return stage < 6 ? g_moments[kTerms] : g_q[m / 2];
}

// The k-th largest logit (the support's threshold), the max and Z.
void Setup(size_t n, size_t k) {
  std::vector<float> copy(g_input, g_input + n);
  std::nth_element(copy.begin(), copy.begin() + (k - 1), copy.end(), std::greater<float>());
  g_threshold = copy[k - 1];
  g_max = *std::max_element(g_input, g_input + n);
  double z = 0.0;
  for (size_t i = 0; i < n; ++i) z += std::exp(static_cast<double>(g_input[i]) - g_max);
  g_z = z;
}

}  // namespace

// Prints one line per stage: {"stage": s, "ms": min over REPS}.
int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ROW.f32 K [REPS]\n", argv[0]);
    return 2;
  }
  FILE* f = std::fopen(argv[1], "rb");
  if (f == nullptr) return 2;
  const size_t n = std::fread(g_input, sizeof(float), kMaxV, f);
  std::fclose(f);
  const size_t k = std::strtoul(argv[2], nullptr, 10);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 200;
  if (k < 1 || k > n) return 2;
  Setup(n, k);
  for (int stage = 0; stage <= 6; ++stage) {
    double best = 1e9, sink = 0.0;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      sink += Run(n, stage);
      const std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
      best = std::min(best, dt.count());
    }
    std::printf("{\"stage\": %d, \"ms\": %.5f, \"sink\": %g}\n", stage, best, sink);
  }
  return 0;
}
