// Each Highway kernel against a scalar float64 oracle, Highway-test style:
// lengths around the vector width, misaligned starts, real vocabulary sizes,
// +-inf/NaN corners, and sentinels that catch writes past the end.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "kernels/target_name.h"
#include "kernels/threshold.h"

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
        }
      }
    }
  }
  SUBCASE("all -inf reports -inf, not -FLT_MAX") {
    std::vector<float> all(37, -kInf);
    CHECK(bd::ScanRow(all.data(), all.size()).max == -kInf);
  }
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
