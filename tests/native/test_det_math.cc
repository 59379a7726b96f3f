// det_math.h against independent references: long double libm natively
// (x87, 64-bit mantissa: ~2^-11 of a double ulp), exact integer arithmetic for
// small integer powers, C pow's special values, and a pinned hash of the
// functions' bits on fixed inputs that native and wasm must both reproduce.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/det_math.h"
#include "kernels/exp_f64.h"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();
// Natively the reference is long double libm; in wasm, long double libm is
// musl's double functions (not independent), so the double libm is used with
// a looser budget there.
#if LDBL_MANT_DIG == 64 && !defined(__EMSCRIPTEN__)
constexpr bool kLongDoubleRef = true;
#else
constexpr bool kLongDoubleRef = false;
#endif

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}
double FromBits(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof(x));
  return x;
}

struct SplitMix {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(Next() >> 11) * 0x1p-53);
  }
};

// |got - want| in ulps of the double nearest want (denormal spacing below
// the normal range).
double UlpError(double got, long double want) {
  if (std::isnan(static_cast<double>(want))) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(static_cast<double>(want)) || std::isinf(got)) {
    return got == static_cast<double>(want) ? 0.0 : 1e30;
  }
  const double w = std::fabs(static_cast<double>(want));
  int e;
  std::frexp(w == 0.0 ? DBL_MIN : std::max(w, DBL_MIN), &e);
  const long double ulp = std::ldexp(1.0L, e - 53);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

bool SameBits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || Bits(a) == Bits(b);
}

// Random positive doubles over every binade (denormals included), plus the
// neighbourhood of 1 where log is small.
std::vector<double> LogInputs() {
  SplitMix r{1};
  std::vector<double> v;
  for (int i = 0; i < 200000; ++i) v.push_back(FromBits(r.Next() >> 1 & 0x7fefffffffffffffull));
  for (int i = 0; i < 100000; ++i) v.push_back(r.Uniform(0.5, 2.0));
  for (int i = 0; i < 50000; ++i) v.push_back(1.0 + r.Uniform(-1e-6, 1e-6));
  for (int i = 0; i < 1000; ++i) v.push_back(FromBits(r.Next() % (1ull << 52)));  // denormals
  for (double x : {kDenormMin, DBL_MIN, DBL_MAX, 1.0, 2.0, 0.5, 1.4142135623730951,
                   0.7071067811865476, std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0), 10.0,
                   1e-300, 1e300, 0.1, 3.0})
    v.push_back(x);
  return v;
}

}  // namespace

TEST_CASE("LogF64 and Log2F64: special values as C log") {
  for (double x : {0.0, -0.0, kInf, -kInf, kNaN, -1.0, -kDenormMin, 1.0}) {
    CHECK_MESSAGE(SameBits(bd::LogF64(x), std::log(x)), x);
    CHECK_MESSAGE(SameBits(bd::Log2F64(x), std::log2(x)), x);
  }
  // Powers of two: log2 exact, log = k ln2 correctly rounded by libm too.
  for (int k = -1074; k <= 1023; ++k) {
    const double x = std::ldexp(1.0, k);
    REQUIRE(bd::Log2F64(x) == static_cast<double>(k));
  }
}

TEST_CASE("LogF64 and Log2F64: max ulp error over every binade") {
  const std::vector<double> in = LogInputs();
  double worst_log = 0.0, worst_log2 = 0.0, worst_x = 0.0, worst_x2 = 0.0;
  for (double x : in) {
    long double want, want2;
    if (kLongDoubleRef) {
      want = std::log(static_cast<long double>(x));
      want2 = std::log2(static_cast<long double>(x));
    } else {
      want = std::log(x);
      want2 = std::log2(x);
    }
    const double e = UlpError(bd::LogF64(x), want);
    const double e2 = UlpError(bd::Log2F64(x), want2);
    if (e > worst_log) worst_log = e, worst_x = x;
    if (e2 > worst_log2) worst_log2 = e2, worst_x2 = x;
  }
  MESSAGE("LogF64 max " << worst_log << " ulp at " << worst_x << ", Log2F64 max " << worst_log2
                        << " ulp at " << worst_x2 << " over " << in.size() << " inputs"
                        << (kLongDoubleRef ? " (vs long double)" : " (vs libm double)"));
  CHECK(worst_log < (kLongDoubleRef ? 1.0 : 1.5));
  CHECK(worst_log2 < (kLongDoubleRef ? 2.0 : 2.5));
}

TEST_CASE("Exp2F64: special values, exact integers, max ulp error") {
  for (double x : {kInf, -kInf, kNaN, 1024.0, -1076.0, -1e300, 1e300, 0.0, -0.0}) {
    CHECK_MESSAGE(SameBits(bd::Exp2F64(x), std::exp2(x)), x);
  }
  for (int k = -1074; k <= 1023; ++k) REQUIRE(bd::Exp2F64(k) == std::ldexp(1.0, k));
  SplitMix r{2};
  std::vector<double> in;
  for (int i = 0; i < 200000; ++i) in.push_back(r.Uniform(-1080.0, 1025.0));
  for (int i = 0; i < 100000; ++i) in.push_back(r.Uniform(-30.0, 30.0));
  for (int i = 0; i < 20000; ++i) in.push_back(r.Uniform(-1e-10, 1e-10));
  for (int i = 0; i < 20000; ++i) in.push_back(r.Uniform(-1074.9, -1022.0));  // denormal results
  double worst = 0.0, worst_x = 0.0, worst_denormal = 0.0;
  for (double x : in) {
    const long double want =
        kLongDoubleRef ? std::exp2(static_cast<long double>(x)) : std::exp2(x);
    const double got = bd::Exp2F64(x);
    if (std::fabs(static_cast<double>(want)) < DBL_MIN) {
      // Two roundings at most: within one denormal step.
      worst_denormal = std::max(worst_denormal, UlpError(got, want));
      continue;
    }
    const double e = UlpError(got, want);
    if (e > worst) worst = e, worst_x = x;
  }
  MESSAGE("Exp2F64 max " << worst << " ulp at " << worst_x << " (normal results), "
                         << worst_denormal << " denormal steps (denormal results) over "
                         << in.size() << " inputs");
  CHECK(worst < (kLongDoubleRef ? 1.5 : 2.0));
  CHECK(worst_denormal <= 1.0);
}

namespace {

// Correctly rounded m^n * 2^(e n) for a float's 24-bit integer mantissa m and
// n <= 4 (m^n < 2^96), by integer arithmetic: round to 53 bits, ties to even.
double ExactFloatPow(float x, int n) {
  int e;
  const float fm = std::frexp(x, &e);  // x = fm 2^e, fm in [0.5, 1)
  const uint64_t m = static_cast<uint64_t>(std::ldexp(static_cast<double>(fm), 24));
  unsigned __int128 p = 1;
  for (int i = 0; i < n; ++i) p *= m;
  int bits = 0;
  for (unsigned __int128 t = p; t != 0; t >>= 1) ++bits;
  int shift = bits > 53 ? bits - 53 : 0;
  unsigned __int128 q = p >> shift;
  if (shift > 0) {
    const unsigned __int128 rem = p & ((static_cast<unsigned __int128>(1) << shift) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  return std::ldexp(static_cast<double>(static_cast<uint64_t>(q)), shift + (e - 24) * n);
}

}  // namespace

TEST_CASE("PowIntF64: correctly rounded for a float to a power <= 4 (exact integer reference)") {
  SplitMix r{3};
  int checked = 0;
  for (int i = 0; i < 100000; ++i) {
    const float x = static_cast<float>(r.Uniform(0.0, 1.0) < 0.5 ? r.Uniform(1.0, 4.0)
                                                                  : r.Uniform(1e-3, 1e3));
    for (int n = 1; n <= 4; ++n) {
      const double want = ExactFloatPow(x, n);
      REQUIRE_MESSAGE(Bits(bd::PowIntF64(x, n)) == Bits(want), x << "^" << n);
      ++checked;
    }
  }
  // Exact halfway cases: 1.75^19 = 7^19 / 2^38, 7^19 a 54-bit odd integer.
  {
    // 7^19 = 11398895185373143: halfway between two doubles, ties to even.
    const double even = 11398895185373144.0 * 0x1p-38;
    CHECK(bd::PowIntF64(1.75, 19) == even);
  }
  MESSAGE(checked << " float powers checked exactly");
}

TEST_CASE("PowIntF64: special values as C pow, long double reference elsewhere") {
  // (INT64_MAX is odd but no double: checked apart.)
  const int64_t ns[] = {1, 2, 3, -1, -2, -3, 0, 1075, -1075, 2000, -2000, 1LL << 40,
                        -(1LL << 40), INT64_MIN};
  CHECK(bd::PowIntF64(-1.0, INT64_MAX) == -1.0);
  CHECK(bd::PowIntF64(-2.0, INT64_MAX) == -kInf);
  CHECK(SameBits(bd::PowIntF64(-0.0, INT64_MAX), -0.0));
  CHECK(SameBits(bd::PowIntF64(-0.5, INT64_MAX), -0.0));
  for (double x : {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, kDenormMin,
                   -kDenormMin, DBL_MAX, -DBL_MAX, 1.0000001, 0.9999999}) {
    for (int64_t n : ns) {
      CHECK_MESSAGE(SameBits(bd::PowIntF64(x, n), std::pow(x, static_cast<double>(n))),
                    x << "^" << n);
    }
  }
  SplitMix r{4};
  double worst = 0.0, worst_x = 0.0;
  int64_t worst_n = 0;
  for (int i = 0; i < 100000; ++i) {
    const double x = r.Uniform(0.0, 1.0) < 0.5 ? r.Uniform(0.25, 4.0) : r.Uniform(-2.0, 2.0);
    const int64_t n = static_cast<int64_t>(r.Next() % 301) - 150;
    const long double want = kLongDoubleRef
                                 ? std::pow(static_cast<long double>(x), static_cast<long double>(n))
                                 : std::pow(x, static_cast<double>(n));
    const double got = bd::PowIntF64(x, n);
    if (std::fabs(static_cast<double>(want)) < DBL_MIN) continue;
    const double e = UlpError(got, want);
    if (e > worst) worst = e, worst_x = x, worst_n = n;
  }
  MESSAGE("PowIntF64 max " << worst << " ulp at " << worst_x << "^" << worst_n);
  CHECK(worst <= (kLongDoubleRef ? 0.501 : 1.0));
}

TEST_CASE("PowF64: special values as C pow, max ulp error") {
  const double vals[] = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5,
                         -1.5, 3.0, -3.0, 0x1p53, -0x1p53, 0x1p63, 0x1p64, 1e300, -1e300,
                         kDenormMin, 0.25, 1024.0, -1075.0, 0.9999999, 1.0000001};
  auto special = [](double v) { return v == 0.0 || std::isinf(v) || std::isnan(v) || std::fabs(v) == 1.0; };
  for (double x : vals) {
    for (double y : vals) {
      // Special operands, integer powers and overflow/underflow give C pow's
      // bits exactly; the rest is measured below.
      const double want = std::pow(x, y);
      const bool exact = special(x) || special(y) || std::nearbyint(y) == y || want == 0.0 ||
                         std::isinf(want) || std::isnan(want);
      if (exact) CHECK_MESSAGE(SameBits(bd::PowF64(x, y), want), x << "^" << y);
      else CHECK_MESSAGE(UlpError(bd::PowF64(x, y), want) <= 1.0, x << "^" << y);
    }
  }
  SplitMix r{5};
  double worst = 0.0, worst_x = 0.0, worst_y = 0.0;
  double worst_small = 0.0;  // |y| <= 8, x in [0, 1]: dynamic temperature's domain
  for (int i = 0; i < 300000; ++i) {
    double x, y;
    switch (i % 3) {
      case 0: x = r.Uniform(0.0, 1.0), y = r.Uniform(0.0, 8.0); break;
      case 1: x = FromBits(r.Next() >> 1 & 0x7fefffffffffffffull), y = r.Uniform(-8.0, 8.0); break;
      default: x = r.Uniform(0.0, 10.0), y = r.Uniform(-300.0, 300.0); break;
    }
    const long double want = kLongDoubleRef
                                 ? std::pow(static_cast<long double>(x), static_cast<long double>(y))
                                 : std::pow(x, y);
    if (std::fabs(static_cast<double>(want)) < DBL_MIN || std::isinf(static_cast<double>(want)))
      continue;
    const double e = UlpError(bd::PowF64(x, y), want);
    if (std::fabs(y) <= 8.0) worst_small = std::max(worst_small, e);
    if (e / (1.5 + std::fabs(y) / 16.0) > worst / (1.5 + std::fabs(worst_y) / 16.0)) {
      worst = e, worst_x = x, worst_y = y;
    }
  }
  MESSAGE("PowF64 max " << worst_small << " ulp for |y| <= 8; worst relative to the bound "
                        << worst << " ulp at " << worst_x << "^" << worst_y);
  CHECK(worst_small < (kLongDoubleRef ? 1.5 : 2.5));
  CHECK(worst <= (kLongDoubleRef ? 1.5 : 2.5) + std::fabs(worst_y) / 16.0);
}

TEST_CASE("Expm1F64 and Log1pF64: special values as C expm1 and log1p") {
  // Only values whose C result is pinned by the standard or by rounding
  // (zeros, infinities, NaN, -1, tiny x), so musl must agree too.
  const double both[] = {0.0, -0.0, kInf, -kInf, kNaN, -kDenormMin, kDenormMin, 0x1p-60,
                         -0x1p-60, 0x1p-1022, -0x1p-1022, 1e-300, -1e-300, -DBL_MAX, -1e300};
  for (double x : both) {
    CHECK_MESSAGE(SameBits(bd::Expm1F64(x), std::expm1(x)), x);
    CHECK_MESSAGE(SameBits(bd::Log1pF64(x), std::log1p(x)), x);
  }
  for (double x : {1e300, DBL_MAX, 710.0, 709.8, -38.5, -40.0, -745.0}) {
    CHECK_MESSAGE(SameBits(bd::Expm1F64(x), std::expm1(x)), x);
  }
  for (double x : {-1.0, -2.0, -1.0000000000000002}) {
    CHECK_MESSAGE(SameBits(bd::Log1pF64(x), std::log1p(x)), x);
  }
  // Below 2^-54 both return x itself, bit for bit (C's do as well).
  SplitMix r{7};
  for (int i = 0; i < 10000; ++i) {
    const double x = FromBits(r.Next() % Bits(0x1p-54)) * (i % 2 ? -1.0 : 1.0);
    REQUIRE(SameBits(bd::Expm1F64(x), x));
    REQUIRE(SameBits(bd::Log1pF64(x), x));
  }
}

TEST_CASE("Expm1F64 and Log1pF64: max ulp error across the domain") {
  SplitMix r{8};
  std::vector<double> ex;
  for (int i = 0; i < 200000; ++i) ex.push_back(r.Uniform(-40.0, 709.78));
  for (int i = 0; i < 100000; ++i) ex.push_back(r.Uniform(-2.0, 2.0));
  for (int i = 0; i < 100000; ++i) ex.push_back(r.Uniform(-0.36, 0.36));  // n = 0 and +-1 edges
  // Every binade of small |x| down to 2^-60, both signs.
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(r.Uniform(1.0, 2.0), -static_cast<int>(r.Next() % 60) - 1);
    ex.push_back(i % 2 ? -x : x);
  }
  double worst_e = 0.0, worst_ex = 0.0;
  for (double x : ex) {
    const long double want = kLongDoubleRef ? std::expm1(static_cast<long double>(x)) : std::expm1(x);
    if (std::isinf(static_cast<double>(want))) continue;
    const double e = UlpError(bd::Expm1F64(x), want);
    if (e > worst_e) worst_e = e, worst_ex = x;
  }
  std::vector<double> lx;
  for (int i = 0; i < 200000; ++i) lx.push_back(FromBits(r.Next() >> 1 & 0x7fefffffffffffffull));
  for (int i = 0; i < 100000; ++i) lx.push_back(r.Uniform(-1.0, 2.0));
  for (int i = 0; i < 50000; ++i) lx.push_back(-1.0 + std::ldexp(r.Uniform(1.0, 2.0), -static_cast<int>(r.Next() % 53) - 1));
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(r.Uniform(1.0, 2.0), -static_cast<int>(r.Next() % 60) - 1);
    lx.push_back(i % 2 ? -x : x);
  }
  for (double x : {-0.29289321881345254, 0.41421356237309503, -0.2928932188134524,
                   0.414213562373095, std::nextafter(-1.0, 0.0), 0x1p53, 0x1p53 + 2.0})
    lx.push_back(x);
  double worst_l = 0.0, worst_lx = 0.0;
  for (double x : lx) {
    const long double want = kLongDoubleRef ? std::log1p(static_cast<long double>(x)) : std::log1p(x);
    const double e = UlpError(bd::Log1pF64(x), want);
    if (e > worst_l) worst_l = e, worst_lx = x;
  }
  MESSAGE("Expm1F64 max " << worst_e << " ulp at " << worst_ex << " over " << ex.size()
                          << " inputs; Log1pF64 max " << worst_l << " ulp at " << worst_lx
                          << " over " << lx.size() << " inputs"
                          << (kLongDoubleRef ? " (vs long double)" : " (vs libm double)"));
  CHECK(worst_e < (kLongDoubleRef ? 1.0 : 1.5));
  CHECK(worst_l < (kLongDoubleRef ? 1.0 : 1.5));
}

TEST_CASE("ExpFullF64 and exp_f64.h's ExpF64: max ulp error, range") {
  for (double x : {kInf, -kInf, kNaN, 0.0, -0.0, 709.8, 710.0, -746.0, -1e300, 1e300}) {
    CHECK_MESSAGE(SameBits(bd::ExpFullF64(x), std::exp(x)), x);
  }
  SplitMix r{9};
  std::vector<double> in;
  for (int i = 0; i < 200000; ++i) in.push_back(r.Uniform(-708.0, 709.78));
  for (int i = 0; i < 100000; ++i) in.push_back(r.Uniform(-40.0, 40.0));
  for (int i = 0; i < 20000; ++i) in.push_back(r.Uniform(-1e-10, 1e-10));
  for (int i = 0; i < 20000; ++i) in.push_back(r.Uniform(-745.2, -708.4));  // denormal results
  double worst_full = 0.0, worst_old = 0.0, worst_full_x = 0.0, worst_old_x = 0.0;
  double worst_denormal = 0.0;
  for (double x : in) {
    const long double want = kLongDoubleRef ? std::exp(static_cast<long double>(x)) : std::exp(x);
    if (std::fabs(static_cast<double>(want)) < DBL_MIN) {
      worst_denormal = std::max(worst_denormal, UlpError(bd::ExpFullF64(x), want));
      continue;
    }
    const double e = UlpError(bd::ExpFullF64(x), want);
    if (e > worst_full) worst_full = e, worst_full_x = x;
    if (x >= bd::kExpF64Floor && x <= 709.0) {
      const double eo = UlpError(bd::ExpF64(x), want);
      if (eo > worst_old) worst_old = eo, worst_old_x = x;
    }
  }
  MESSAGE("ExpFullF64 max " << worst_full << " ulp at " << worst_full_x << ", "
                            << worst_denormal << " denormal steps; exp_f64.h ExpF64 max "
                            << worst_old << " ulp at " << worst_old_x << " on [-708, 709]");
  CHECK(worst_full < (kLongDoubleRef ? 1.5 : 2.0));
  CHECK(worst_denormal <= 1.0);
  CHECK(worst_old < (kLongDoubleRef ? 3.0 : 3.5));
  // ExpF64 is not a drop-in for C exp outside [-708, 709]: it flushes below
  // (exp(-708.2) is still a normal double), saturates above (no inf), and
  // gives 0 for NaN.
  CHECK(bd::ExpF64(-708.2) == 0.0);
  CHECK(std::exp(-708.2) > DBL_MIN);
  CHECK(bd::ExpF64(710.0) == bd::ExpF64(709.0));
  CHECK(bd::ExpF64(kNaN) == 0.0);
  CHECK(UlpError(bd::ExpFullF64(-708.2),
                 kLongDoubleRef ? std::exp(static_cast<long double>(-708.2)) : std::exp(-708.2)) < 1.5);
}

TEST_CASE("det_math: the same bits natively and in wasm (pinned hash)") {
  // FNV-1a over the bits of every function on fixed inputs.
  uint64_t h = 1469598103934665603ull;
  auto add = [&](double v) {
    uint64_t b = Bits(v);
    for (int i = 0; i < 8; ++i) h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  SplitMix r{6};
  for (int i = 0; i < 20000; ++i) {
    const double x = FromBits(r.Next() >> 1 & 0x7fefffffffffffffull);
    const double u = r.Uniform(0.0, 1.0);
    const double t = r.Uniform(-1080.0, 1025.0);
    const double y = r.Uniform(-8.0, 8.0);
    add(bd::LogF64(x));
    add(bd::LogF64(u));
    add(bd::Log2F64(x));
    add(bd::Log2F64(u));
    add(bd::Exp2F64(t));
    add(bd::Exp2F64(-u * 20.0));
    add(bd::PowF64(u, y));
    add(bd::PowF64(1.0 + u, y * 10.0));
    add(bd::PowIntF64(static_cast<float>(1.0 + 3.0 * u), static_cast<int64_t>(r.Next() % 160)));
  }
  MESSAGE("det_math hash " << h);
  CHECK(h == 6823650762792866505ull);
}

TEST_CASE("det_math: Expm1F64, Log1pF64, ExpFullF64 the same bits natively and in wasm") {
  uint64_t h = 1469598103934665603ull;
  auto add = [&](double v) {
    uint64_t b = Bits(v);
    for (int i = 0; i < 8; ++i) h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  SplitMix r{10};
  for (int i = 0; i < 20000; ++i) {
    const double x = FromBits(r.Next() >> 1 & 0x7fefffffffffffffull);
    const double u = r.Uniform(-1.0, 1.0);
    const double t = r.Uniform(-750.0, 710.0);
    add(bd::Expm1F64(t * 0.06));
    add(bd::Expm1F64(u * 0x1p-20));
    add(bd::Expm1F64(t));
    add(bd::Log1pF64(x));
    add(bd::Log1pF64(u));
    add(bd::Log1pF64(u * 0x1p-30));
    add(bd::ExpFullF64(t));
    add(bd::ExpFullF64(u));
  }
  MESSAGE("det_math expm1/log1p/exp hash " << h);
  CHECK(h == 16700711450898405797ull);
}
