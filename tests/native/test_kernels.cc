// Each Highway kernel against a scalar float64 oracle, Highway-test style:
// lengths around the vector width, misaligned starts, real vocabulary sizes,
// +-inf/NaN corners, and sentinels that catch writes past the end.
#include <doctest/doctest.h>

#include <cfloat>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "kernels/order_free_sum.h"
#include "kernels/blocks.h"
#include "kernels/exp_f64.h"
#include "kernels/float_order.h"
#include "kernels/histogram.h"
#include "kernels/key_sort.h"
#include "kernels/moments.h"
#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "kernels/target_name.h"
#include "kernels/threshold.h"
#include "exp_twin.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

const std::vector<size_t>& Lengths() {
  static const std::vector<size_t> v = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33,
                                        63, 64, 65, 100, 1023, 1024, 1025, 4096, 32000,
                                        131072 + 3};
  return v;
}

std::vector<float> RandomRow(size_t n, std::mt19937_64& rng, double neg_inf_frac = 0.0) {
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng) < neg_inf_frac ? -kInf : normal(rng);
  return v;
}

}  // namespace

TEST_CASE("kernels report their Highway target") {
  const std::string name = bd::KernelTargetName();
  MESSAGE("kernel target: " << name);
  CHECK(!name.empty());
#if defined(__EMSCRIPTEN__)
  CHECK(name == "WASM");
#else
  CHECK(name != "SCALAR");
  CHECK(name != "EMU128");
#endif
}

TEST_CASE("ScanRow: max and NaN detection match a scalar scan") {
  std::mt19937_64 rng(1);
  for (size_t n : Lengths()) {
    for (size_t offset : {0, 1, 3}) {
      std::vector<float> buf = RandomRow(n + offset, rng, 0.1);
      const float* row = buf.data() + offset;
      float want = -kInf;
      for (size_t i = 0; i < n; ++i) want = std::max(want, row[i]);
      const bd::RowScan got = bd::ScanRow(row, n);
      CHECK(got.max == want);
      CHECK_FALSE(got.has_nan);
      if (n > 0) {
        // A NaN anywhere, including the scalar tail, is seen and ignored.
        for (size_t pos : {size_t{0}, n / 2, n - 1}) {
          std::vector<float> copy(row, row + n);
          copy[pos] = std::nanf("");
          float want2 = -kInf;
          for (size_t i = 0; i < n; ++i) if (i != pos) want2 = std::max(want2, copy[i]);
          const bd::RowScan g2 = bd::ScanRow(copy.data(), n);
          CHECK(g2.has_nan);
          CHECK(g2.max == want2);
          // Only blocks with an uncounted entry are read again for NaN: a
          // -inf beside it, or alone, must not change the answer.
          const size_t beside = (pos ^ 1) < n ? (pos ^ 1) : pos;  // same block
          copy[beside] = -kInf;
          CHECK(bd::ScanRow(copy.data(), n).has_nan == (beside != pos));
          copy[pos] = -kInf;
          CHECK_FALSE(bd::ScanRow(copy.data(), n).has_nan);
        }
      }
    }
  }
  SUBCASE("all -inf reports -inf, not -FLT_MAX") {
    std::vector<float> all(37, -kInf);
    CHECK(bd::ScanRow(all.data(), all.size()).max == -kInf);
  }
}

TEST_CASE("ScanList: ascending ids and the max match a scalar scan, a descent at any position") {
  std::mt19937_64 rng(11);
  for (size_t n : Lengths()) {
    std::vector<float> logits = RandomRow(n, rng, 0.1);
    std::vector<int32_t> ids(n);
    int32_t id = static_cast<int32_t>(rng() % 3);
    for (size_t i = 0; i < n; ++i) ids[i] = (id += 1 + static_cast<int32_t>(rng() % 4));
    float want_max = -kInf;
    for (size_t i = 0; i < n; ++i) want_max = std::max(want_max, logits[i]);
    const bd::ListScan got = bd::ScanList(ids.data(), logits.data(), n);
    CHECK(got.ids_ascending);
    CHECK(got.max == want_max);
    // Positions: all of a short list, the ends, the middle and a sample of a long one.
    std::vector<size_t> at;
    for (size_t i = 0; i < n; ++i) {
      if (n <= 1100 || i < 2 || i + 2 >= n || i == n / 2 || rng() % 2048 == 0) at.push_back(i);
    }
    // An adjacent pair made equal, or swapped, breaks the order anywhere.
    for (size_t i : at) {
      if (i + 1 >= n) continue;
      std::vector<int32_t> tie = ids;
      tie[i + 1] = tie[i];
      CHECK_FALSE(bd::ScanList(tie.data(), logits.data(), n).ids_ascending);
      std::vector<int32_t> swapped = ids;
      std::swap(swapped[i], swapped[i + 1]);
      CHECK_FALSE(bd::ScanList(swapped.data(), logits.data(), n).ids_ascending);
    }
    // The max at any position, the scalar tail included.
    for (size_t i : at) {
      std::vector<float> peak = logits;
      peak[i] = 1e30f;
      CHECK(bd::ScanList(ids.data(), peak.data(), n).max == 1e30f);
    }
  }
  CHECK(bd::ScanList(nullptr, nullptr, 0).max == -kInf);
  CHECK(bd::ScanList(nullptr, nullptr, 0).ids_ascending);
}

TEST_CASE("FindFirstEqual returns the lowest index of the maximum") {
  std::mt19937_64 rng(2);
  for (size_t n : Lengths()) {
    if (n == 0) continue;
    std::vector<float> row = RandomRow(n, rng);
    // Plant ties of the maximum at two places.
    const size_t a = rng() % n, b = rng() % n;
    row[a] = 100.0f;
    row[b] = 100.0f;
    CHECK(bd::FindFirstEqual(row.data(), n, 100.0f) == std::min(a, b));
  }
  std::vector<float> none(10, 1.0f);
  CHECK(bd::FindFirstEqual(none.data(), none.size(), 2.0f) == none.size());
}

TEST_CASE("ExpSum / ExpWrite match float64 within 1e-6 relative") {
  std::mt19937_64 rng(3);
  double worst = 0.0;
  for (size_t n : Lengths()) {
    for (float scale : {1.0f, 0.5f, 2.0f}) {
      std::vector<float> row = RandomRow(n, rng, 0.05);
      float max = -kInf;
      for (float x : row) max = std::max(max, x);
      if (n == 0 || max == -kInf) max = 0.0f;
      double want = 0.0;
      for (float x : row) want += std::exp((static_cast<double>(x) - max) * scale);
      std::vector<float> out(n + 16, 12345.0f);
      const double got = bd::ExpWrite(row.data(), n, max, scale, out.data());
      const double got2 = bd::ExpSum(row.data(), n, max, scale);
      CHECK(got == got2);
      if (want > 0) worst = std::max(worst, std::fabs(got - want) / want);
      CHECK(std::fabs(got - want) <= 1e-6 * want + 1e-30);
      for (size_t i = 0; i < n; ++i) {
        // The kernel's contract: exp to a few ulp of its float argument (the
        // argument's own rounding is the caller's, and bounded by the sum test).
        const float arg = (row[i] - max) * scale;
        const double e = std::exp(static_cast<double>(arg));
        REQUIRE(std::fabs(out[i] - e) <= 3e-7 * e + 1e-38);
      }
      for (size_t i = n; i < n + 16; ++i) REQUIRE(out[i] == 12345.0f);  // sentinel
    }
  }
  MESSAGE("ExpSum max relative error vs float64: " << worst);
}

TEST_CASE("CountAtLeast / GatherAtLeast match a scalar filter") {
  std::mt19937_64 rng(5);
  for (size_t n : Lengths()) {
    std::vector<float> row = RandomRow(n, rng, 0.1);
    for (float t : {-kInf, -FLT_MAX, -1.0f, 0.0f, 2.5f, 100.0f}) {
      std::vector<int32_t> want_ids;
      for (size_t i = 0; i < n; ++i) if (row[i] >= t) want_ids.push_back(static_cast<int32_t>(i));
      CHECK(bd::CountAtLeast(row.data(), n, t) == want_ids.size());
      std::vector<int32_t> ids(n + bd::kCompressSlack + 4, -7);
      std::vector<float> vals(n + bd::kCompressSlack + 4, -7.0f);
      const size_t got = bd::GatherAtLeast(row.data(), n, t, ids.data(), vals.data());
      REQUIRE(got == want_ids.size());
      for (size_t j = 0; j < got; ++j) {
        REQUIRE(ids[j] == want_ids[j]);
        REQUIRE(vals[j] == row[static_cast<size_t>(want_ids[j])]);
      }
      // Only the documented slack past the count may be touched.
      for (size_t j = got + bd::kCompressSlack; j < ids.size(); ++j) REQUIRE(ids[j] == -7);
    }
  }
}

// ---------------------------------------------------------------------------
// The order-fixed arithmetic (exp-inl.h, exp_f64.h, virtual_lanes-inl.h):
// scalar twins of the exact float operations, compared bit for bit.
namespace {

using bd_test::ExpF32Twin;

// The virtual-lane sum of term(i) over [0, n): 16 float lanes per 256-block,
// each in index order, the fixed tree, then blocks in double.
template <class Term>
double VirtualLaneTwin(size_t n, Term term, std::vector<float>* block_sums = nullptr) {
  double total = 0.0;
  for (size_t b = 0; b < n; b += 256) {
    float lanes[16] = {0};
    for (size_t i = b; i < std::min(n, b + 256); ++i) lanes[(i - b) % 16] += term(i);
    for (size_t w = 8; w >= 1; w /= 2) {
      for (size_t j = 0; j < w; ++j) lanes[j] = lanes[j] + lanes[j + w];
    }
    if (block_sums) block_sums->push_back(lanes[0]);
    total += lanes[0];
  }
  return total;
}

}  // namespace

TEST_CASE("ExpF32 equals its scalar twin bit for bit, within 2 ulp of exp") {
  std::vector<float> x;
  for (float v = -90.0f; v <= 88.0f; v += 0.01237f) x.push_back(v);
  for (float v : {-kInf, -87.0f, -86.99999f, -87.00001f, 0.0f, -0.0f, -1e-30f, -0.34657359f,
                  0.34657359f, -0.3465736f, 88.0f})
    x.push_back(v);
  std::vector<float> out(x.size());
  bd::ExpWrite(x.data(), x.size(), 0.0f, 1.0f, out.data());
  double worst_ulp = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float twin = ExpF32Twin(x[i]);
    REQUIRE(std::memcmp(&out[i], &twin, sizeof(float)) == 0);
    if (x[i] >= -87.0f) {
      const double e = std::exp(static_cast<double>(x[i]));
      const double ulp = std::ldexp(1.0, std::ilogb(e) - 23);
      worst_ulp = std::max(worst_ulp, std::fabs(out[i] - e) / ulp);
    } else {
      REQUIRE(out[i] == 0.0f);  // flushed, never NaN (-inf included)
    }
  }
  MESSAGE("ExpF32 worst error: " << worst_ulp << " ulp");
  CHECK(worst_ulp <= 2.0);
}

TEST_CASE("ExpF64 is within 2 ulp of exp, and 0 below its floor") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-708.0, 709.0);
  double worst_ulp = 0.0;
  for (int i = 0; i < 200000; ++i) {
    const double x = i < 100000 ? u(rng) : u(rng) * 1e-3;
    const double got = bd::ExpF64(x);
    const long double e = std::exp(static_cast<long double>(x));
    const double ulp = std::ldexp(1.0, std::ilogb(static_cast<double>(e)) - 52);
    worst_ulp = std::max(worst_ulp, static_cast<double>(std::fabs(got - e) / ulp));
  }
  MESSAGE("ExpF64 worst error: " << worst_ulp << " ulp");
  CHECK(worst_ulp <= 2.0);
  CHECK(bd::ExpF64(0.0) == 1.0);
  CHECK(bd::ExpF64(-kInf) == 0.0);
  CHECK(bd::ExpF64(-708.5) == 0.0);
}

TEST_CASE("ExpSum / ExpBlockSums / SumBlocks / ExpMoments / BandSum / SumBandBlocks / FiniteMoments equal their virtual-lane twins bit for bit") {
  std::mt19937_64 rng(12);
  for (size_t n : Lengths()) {
    std::vector<float> row = RandomRow(n, rng, 0.05);
    float max = -kInf;
    for (float x : row) max = std::max(max, x);
    if (max == -kInf) max = 0.0f;
    for (float scale : {1.0f, 0.7f}) {
      auto e = [&](size_t i) { return ExpF32Twin((row[i] - max) * scale); };
      std::vector<float> want_blocks;
      const double want = VirtualLaneTwin(n, e, &want_blocks);
      CHECK(bd::ExpSum(row.data(), n, max, scale) == want);
      std::vector<float> blocks(bd::NumBlocks(n) + 1, -1.0f);
      CHECK(bd::ExpBlockSums(row.data(), n, max, scale, blocks.data()) == want);
      for (size_t b = 0; b < want_blocks.size(); ++b) REQUIRE(blocks[b] == want_blocks[b]);
      std::vector<float> out(n + 1);
      CHECK(bd::ExpWrite(row.data(), n, max, scale, out.data()) == want);
      // The draw's sums over exps already written: the same bits.
      std::vector<float> summed_blocks(bd::NumBlocks(n) + 1, -1.0f);
      CHECK(bd::SumBlocks(out.data(), n, summed_blocks.data()) == want);
      for (size_t b = 0; b < want_blocks.size(); ++b) REQUIRE(summed_blocks[b] == want_blocks[b]);
      const bd::ExpMomentSums m = bd::ExpMoments(row.data(), n, max, scale, nullptr);
      CHECK(m.sum_e == want);
      CHECK(m.sum_ex == VirtualLaneTwin(n, [&](size_t i) {
              const float y = std::max((row[i] - max) * scale, -110.0f);
              return ExpF32Twin(y) * y;
            }));
      const float lo = -1.0f, hi = 2.0f;
      const bd::BandTotals band = bd::BandSum(row.data(), out.data(), n, lo, hi);
      CHECK(band.sum_w == VirtualLaneTwin(n, [&](size_t i) {
              return row[i] >= lo && row[i] <= hi ? out[i] : 0.0f;
            }));
      size_t in_band = 0;
      for (float x : row) in_band += x >= lo && x <= hi;
      CHECK(band.count == in_band);
      // The draw's sums over a band of the row: per block, the rest 0.
      std::vector<float> want_band_blocks;
      const double want_band = VirtualLaneTwin(
          n, [&](size_t i) { return row[i] >= lo && row[i] <= hi ? out[i] : 0.0f; },
          &want_band_blocks);
      std::vector<float> band_blocks(bd::NumBlocks(n) + 1, -1.0f);
      CHECK(bd::SumBandBlocks(row.data(), out.data(), n, lo, hi, band_blocks.data()) == want_band);
      CHECK(want_band == band.sum_w);
      for (size_t b = 0; b < want_band_blocks.size(); ++b) {
        REQUIRE(band_blocks[b] == want_band_blocks[b]);
      }
    }
    const bd::FiniteMomentSums f = bd::FiniteMoments(row.data(), n, 0.5f);
    auto dx = [&](size_t i) { return row[i] >= -FLT_MAX ? row[i] - 0.5f : 0.0f; };
    if (n <= 256) {
      // Small inputs: float64, one by one.
      double s1 = 0.0, s2 = 0.0;
      for (size_t i = 0; i < n; ++i) {
        s1 += dx(i);
        s2 += static_cast<double>(dx(i)) * dx(i);
      }
      CHECK(f.sum_d == s1);
      CHECK(f.sum_d2 == s2);
    } else {
      CHECK(f.sum_d == VirtualLaneTwin(n, dx));
      CHECK(f.sum_d2 == VirtualLaneTwin(n, [&](size_t i) { return dx(i) * dx(i); }));
    }
  }
}

TEST_CASE("ExpSumBelow and ExpSumAtMost: their virtual-lane twins' bits, the ties at the cut, float64 within 1e-6") {
  // The Bregman objective's dropped tail (below the cut, ties counted apart)
  // and the stage's normaliser (at or below it, ties exactly 1 each): exps
  // relative to a cut among the row's own values (rounded to eighths, so
  // cuts fall inside runs of ties).
  REQUIRE(ExpF32Twin(0.0f) == 1.0f);
  std::mt19937_64 rng(21);
  double worst = 0.0;
  for (size_t n : Lengths()) {
    std::vector<float> row = RandomRow(n, rng, 0.05);
    for (float& x : row) x = std::round(x * 8.0f) / 8.0f;
    for (int c = 0; c < 3 && n > 0; ++c) {
      const float cut = row[static_cast<size_t>(rng() % n)];
      if (cut == -kInf) continue;
      for (float scale : {1.0f, 0.3f, 5.7f}) {
        auto e = [&](size_t i) { return row[i] < cut ? ExpF32Twin((row[i] - cut) * scale) : 0.0f; };
        double equal = -1.0;
        const double got = bd::ExpSumBelow(row.data(), n, cut, scale, &equal);
        CHECK(got == VirtualLaneTwin(n, e));
        size_t at_cut = 0;
        double want = 0.0;
        for (float x : row) {
          at_cut += x == cut;
          if (x < cut) want += std::exp((static_cast<double>(x) - cut) * scale);
        }
        CHECK(equal == static_cast<double>(at_cut));
        if (want > 0.0) worst = std::max(worst, std::fabs(got - want) / want);
        CHECK(std::fabs(got - want) <= 1e-6 * want + 1e-30);
        auto e_at_most = [&](size_t i) { return row[i] <= cut ? ExpF32Twin((row[i] - cut) * scale) : 0.0f; };
        const double at_most = bd::ExpSumAtMost(row.data(), n, cut, scale);
        CHECK(at_most == VirtualLaneTwin(n, e_at_most));
        const double want_at_most = want + static_cast<double>(at_cut);
        worst = std::max(worst, std::fabs(at_most - want_at_most) / want_at_most);
        CHECK(std::fabs(at_most - want_at_most) <= 1e-6 * want_at_most);
      }
    }
  }
  MESSAGE("ExpSumBelow / ExpSumAtMost max relative error vs float64: " << worst);
}

TEST_CASE("ScanRow: finite count and block maxima match a scalar scan") {
  std::mt19937_64 rng(13);
  for (size_t n : Lengths()) {
    std::vector<float> row = RandomRow(n, rng, 0.3);
    if (n > 600) std::fill(row.begin() + 256, row.begin() + 512, -kInf);  // an all -inf block
    if (n > 3) row[n / 3] = std::nanf("");
    std::vector<float> blocks(bd::NumBlocks(n) + 1, 7.0f);
    const bd::RowScan s = bd::ScanRow(row.data(), n, blocks.data());
    size_t finite = 0;
    for (float x : row) finite += x >= -FLT_MAX;
    CHECK(s.finite == finite);
    CHECK(s.has_nan == (n > 3));
    for (size_t b = 0; b < bd::NumBlocks(n); ++b) {
      float want = -kInf;
      for (size_t i = b * 256; i < std::min(n, b * 256 + 256); ++i) {
        if (row[i] == row[i]) want = std::max(want, row[i]);
      }
      REQUIRE(blocks[b] == want);
    }
    CHECK(blocks[bd::NumBlocks(n)] == 7.0f);  // nothing written past the blocks
    if (n > 0) {
      // FindFirstEqual through the block maxima: the lowest index of the max.
      const size_t a = rng() % n;
      row[a] = 50.0f;
      if (a + 300 < n) row[a + 300] = 50.0f;
      bd::ScanRow(row.data(), n, blocks.data());
      CHECK(bd::FindFirstEqual(row.data(), n, 50.0f, blocks.data()) == a);
    }
  }
}

TEST_CASE("CountAtLeast / GatherAtLeast with block maxima equal the full passes") {
  std::mt19937_64 rng(14);
  for (size_t n : Lengths()) {
    std::vector<float> row = RandomRow(n, rng, 0.2);
    std::vector<float> blocks(bd::NumBlocks(n) + 1);
    bd::ScanRow(row.data(), n, blocks.data());
    for (float t : {-kInf, -FLT_MAX, -1.0f, 0.0f, 5.0f, 8.0f, 100.0f, std::nanf("")}) {
      CHECK(bd::CountAtLeast(row.data(), n, t, blocks.data()) == bd::CountAtLeast(row.data(), n, t));
      std::vector<int32_t> ids_a(n + bd::kCompressSlack), ids_b(n + bd::kCompressSlack);
      std::vector<float> v_a(n + bd::kCompressSlack), v_b(n + bd::kCompressSlack);
      const size_t a = bd::GatherAtLeast(row.data(), n, t, ids_a.data(), v_a.data(), blocks.data());
      const size_t b = bd::GatherAtLeast(row.data(), n, t, ids_b.data(), v_b.data());
      REQUIRE(a == b);
      for (size_t j = 0; j < a; ++j) {
        REQUIRE(ids_a[j] == ids_b[j]);
        REQUIRE(v_a[j] == v_b[j]);
      }
    }
  }
}

TEST_CASE("MassHistogram: masses and counts per bucket; BucketThreshold splits exactly at bucket k") {
  std::mt19937_64 rng(15);
  for (size_t n : {size_t{1}, size_t{100}, size_t{5000}, size_t{40000}}) {
    std::vector<float> row = RandomRow(n, rng, 0.05);
    float max = -kInf;
    for (float x : row) max = std::max(max, x);
    for (float temp : {1.0f, 0.3f}) {
      const float inv_width = static_cast<float>(bd::kMassBuckets / (104.0 * temp));
      std::vector<float> e(n);
      for (size_t i = 0; i < n; ++i) e[i] = static_cast<float>(std::exp((row[i] - max) / temp));
      std::vector<double> mass(bd::kMassBuckets, -1.0);
      std::vector<uint32_t> count(bd::kMassBuckets, 99);
      bd::MassHistogram(row.data(), e.data(), n, max, inv_width, mass.data(), count.data());
      std::vector<double> want_mass(bd::kMassBuckets, 0.0);
      std::vector<uint32_t> want_count(bd::kMassBuckets, 0);
      for (size_t i = 0; i < n; ++i) {
        const double x = std::floor(static_cast<double>((max - row[i]) * inv_width));
        const size_t j = x < bd::kMassBuckets - 1 ? static_cast<size_t>(x) : bd::kMassBuckets - 1;
        want_mass[j] += e[i];
        ++want_count[j];
      }
      for (size_t j = 0; j < bd::kMassBuckets; ++j) {
        REQUIRE(mass[j] == want_mass[j]);
        REQUIRE(count[j] == want_count[j]);
      }
      for (uint32_t k : {1u, 2u, 17u, 300u, 4095u}) {
        const float t = bd::BucketThreshold(max, inv_width, k);
        size_t below_k = 0, at_least_t = 0;
        for (uint32_t j = 0; j < k; ++j) below_k += want_count[j];
        for (float x : row) at_least_t += x >= t;
        REQUIRE(below_k == at_least_t);
        // t is the smallest such float: the next float down is outside.
        CHECK_FALSE((max - std::nextafter(t, -kInf)) * inv_width < static_cast<float>(k));
      }
    }
  }
}

TEST_CASE("BucketIndices / DistanceBucketIndices equal the scalar bucket rules at every length and start") {
  std::mt19937_64 rng(16);
  for (size_t n : Lengths()) {
    std::vector<float> row = RandomRow(n + 1, rng, 0.05);
    for (size_t k = 0; k < n; k += 7) row[k] *= 40.0f;  // beyond the last bucket
    float max = -kInf;
    for (float x : row) max = std::max(max, x);
    if (max == -kInf) max = 0.0f;
    for (float inv_width : {39.38f, 1.0f / 3.0f}) {
      for (size_t start : {size_t{0}, size_t{1}}) {
        if (start > n) continue;
        const size_t len = n - start;
        std::vector<uint32_t> out(len + 1, 12345u);
        bd::BucketIndices(row.data() + start, len, max, inv_width, out.data());
        for (size_t i = 0; i < len; ++i) {
          const float x = (max - row[start + i]) * inv_width;
          const uint32_t want = x < static_cast<float>(bd::kMassBuckets - 1)
                                    ? static_cast<uint32_t>(x)
                                    : static_cast<uint32_t>(bd::kMassBuckets - 1);
          REQUIRE(out[i] == want);
        }
        CHECK(out[len] == 12345u);  // no write past the end
        const float center = max - 2.5f;
        bd::DistanceBucketIndices(row.data() + start, len, center, inv_width, out.data());
        for (size_t i = 0; i < len; ++i) {
          const float x = std::fabs(row[start + i] - center) * inv_width;
          const uint32_t want = x < static_cast<float>(bd::kMassBuckets - 1)
                                    ? static_cast<uint32_t>(x)
                                    : static_cast<uint32_t>(bd::kMassBuckets - 1);
          REQUIRE(out[i] == want);
        }
        CHECK(out[len] == 12345u);
      }
    }
  }
}

TEST_CASE("FiniteDeviationSum / FiniteSpread equal FiniteMoments' fields bit for bit") {
  std::mt19937_64 rng(17);
  for (size_t n : Lengths()) {
    const std::vector<float> row = RandomRow(n, rng, 0.05);
    for (float center : {0.5f, -3.25f}) {
      const bd::FiniteMomentSums f = bd::FiniteMoments(row.data(), n, center);
      CHECK(bd::FiniteDeviationSum(row.data(), n, center) == f.sum_d);
      const bd::FiniteMomentSums s = bd::FiniteSpread(row.data(), n, center);
      CHECK(s.sum_d == f.sum_d);
      CHECK(s.sum_d2 == f.sum_d2);
    }
  }
}

TEST_CASE("SortKeysDescending equals std::sort descending (radix and comparison paths)") {
  std::mt19937_64 rng(18);
  for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{2047}, size_t{2048}, size_t{2049},
                   size_t{40000}}) {
    // Keys as candidates.cc builds them: shared high bytes (nearby logits),
    // distinct low bytes (ids), and a few exact-tie logits.
    std::vector<uint64_t> keys(n), scratch(n + 1);
    std::uniform_int_distribution<uint32_t> logit_bits(0xBF800000u, 0xBF80FFFFu);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t hi = i % 5 == 0 ? 0xBF800000u : i % 7 == 0 ? 0x3F000000u : logit_bits(rng);
      keys[i] = (static_cast<uint64_t>(hi) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(i));
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    std::vector<uint64_t> want = keys;
    std::sort(want.begin(), want.end(), std::greater<uint64_t>());
    bd::SortKeysDescending(keys.data(), n, scratch.data());
    CHECK(keys == want);
  }
  // Every digit of the high half in play: random logit bits, wide and narrow.
  for (uint32_t spread : {0xFFFFFFFFu, 0x003FFFFFu}) {
    const size_t n = 100003;
    std::vector<uint64_t> keys(n), scratch(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t hi = 0x40000000u + static_cast<uint32_t>(rng() & spread);
      keys[i] = (static_cast<uint64_t>(hi) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(i));
    }
    std::vector<uint64_t> want = keys;
    std::sort(want.begin(), want.end(), std::greater<uint64_t>());
    std::vector<uint64_t> wide = keys;
    bd::SortKeysDescending(keys.data(), n, scratch.data());
    CHECK(keys == want);
    // The 16-bit digits (n is past kWideRadixMin); natively also vqsort, a
    // timing of both (which keeps vqsort's result) and the measured choice.
    for (bd::WideSort which : {bd::WideSort::kRadix, bd::WideSort::kVQSort,
                               bd::WideSort::kMeasureAgain, bd::WideSort::kMeasured}) {
      std::vector<uint32_t> counts(bd::kWideRadixCounts);
      std::vector<uint64_t> w = wide;
      bd::SortKeysDescending(w.data(), n, scratch.data(), counts.data(), false, which);
      CHECK(w == want);
    }
  }
  // 16-bit digits on candidate-like keys: every digit shared but the lowest
  // (a no-op pass), ties in the high half, and exactly kWideRadixMin keys.
  for (uint32_t spread : {0x0000FFFFu, 0x00FF00FFu}) {
    const size_t n = bd::kWideRadixMin;
    std::vector<uint64_t> keys(n), scratch(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t hi = i % 3 == 0 ? 0xBF800000u : 0xBF800000u + static_cast<uint32_t>(rng() & spread);
      keys[i] = (static_cast<uint64_t>(hi) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(i));
    }
    std::shuffle(keys.begin(), keys.end(), rng);
    std::vector<uint64_t> want = keys;
    std::sort(want.begin(), want.end(), std::greater<uint64_t>());
    for (bd::WideSort which : {bd::WideSort::kRadix, bd::WideSort::kVQSort,
                               bd::WideSort::kMeasureAgain, bd::WideSort::kMeasured}) {
      std::vector<uint32_t> counts(bd::kWideRadixCounts, 7u);
      std::vector<uint64_t> k = keys;
      bd::SortKeysDescending(k.data(), n, scratch.data(), counts.data(), false, which);
      CHECK(k == want);
    }
  }
  // in_id_order: keys in ascending id order (not shuffled), runs of up to
  // 40 equal logits; the stable radix passes alone must give the order
  // (narrow and wide digits, and the comparison path below kRadixMin).
  for (size_t n : {size_t{1000}, size_t{5000}, size_t{70000}}) {
    std::vector<uint64_t> keys(n), scratch(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t hi = 0xBF800000u + static_cast<uint32_t>(rng() % (n / 40 + 1));
      keys[i] = (static_cast<uint64_t>(hi) << 32) | (0xFFFFFFFFu - static_cast<uint32_t>(i));
    }
    std::vector<uint64_t> want = keys;
    std::sort(want.begin(), want.end(), std::greater<uint64_t>());
    std::vector<uint64_t> wide = keys;
    bd::SortKeysDescending(keys.data(), n, scratch.data(), nullptr, true);
    CHECK(keys == want);
    // The radix sort's stable passes, and vqsort.
    for (bd::WideSort which : {bd::WideSort::kRadix, bd::WideSort::kVQSort}) {
      std::vector<uint32_t> counts(bd::kWideRadixCounts);
      std::vector<uint64_t> w = wide;
      bd::SortKeysDescending(w.data(), n, scratch.data(), counts.data(), true, which);
      CHECK(w == want);
    }
  }
}

TEST_CASE("float order: OrderedBits is the float order and FromOrderedBits its inverse") {
  // Every 4099th bit pattern (a prime stride over all 2^32: both signs,
  // normals, subnormals, infinities) and the neighbours of zero: the image
  // is strictly increasing along the floats, one step per float
  // (nextafter), -0 just below +0, and FromOrderedBits maps it back.
  auto check = [](float x) {
    const uint32_t b = bd::OrderedBits(x);
    const float back = bd::FromOrderedBits(b);
    CHECK(std::memcmp(&back, &x, sizeof x) == 0);
    if (x < INFINITY) {
      const float up = std::nextafter(x, INFINITY);
      // (nextafter(-0) is the smallest positive subnormal: two steps, via +0.)
      CHECK(bd::OrderedBits(up) == b + ((x == 0.0f && std::signbit(x)) ? 2u : 1u));
    }
  };
  size_t checked = 0;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    const uint32_t b32 = static_cast<uint32_t>(bits);
    float x;
    std::memcpy(&x, &b32, sizeof x);
    if (x != x) continue;  // NaN has no place in the order
    check(x);
    ++checked;
  }
  for (float x : {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MAX, -FLT_MAX, -INFINITY, INFINITY}) {
    check(x);
  }
  CHECK(bd::OrderedBits(-0.0f) + 1 == bd::OrderedBits(0.0f));
  CHECK(bd::OrderedBits(-INFINITY) < bd::OrderedBits(-FLT_MAX));
  CHECK(checked > 1000000);
}

TEST_CASE("OrderFreeSum: the same bits in any order, within 1e-15 of the long double sum") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const size_t n : {size_t{1}, size_t{7}, size_t{1000}, size_t{100000}}) {
    std::vector<double> terms(n);
    for (size_t i = 0; i < n; ++i) {
      // Over many binades, and exact 1s and 0s among them.
      terms[i] = i % 97 == 0 ? 1.0 : i % 89 == 0 ? 0.0 : std::exp(-40.0 * u(rng)) * u(rng);
    }
    terms[0] = 1.0;  // a softmax list holds its maximum's exp(0)
    long double ref = 0.0L;
    for (const double t : terms) ref += t;
    bd::OrderFreeSum first;
    for (const double t : terms) first.Add(t);
    const double want = first.Sum();
    CHECK(std::fabs(static_cast<double>((want - ref) / ref)) < 1e-15);
    for (int shuffle = 0; shuffle < 5; ++shuffle) {
      std::shuffle(terms.begin(), terms.end(), rng);
      bd::OrderFreeSum again;
      for (const double t : terms) again.Add(t);
      const double got = again.Sum();
      CHECK(std::memcmp(&got, &want, sizeof got) == 0);
    }
  }
}

