// kernels/support_map.h against an independent reference: every element
// recomputed from the definitions in long double (q from pow, the divergence
// from phi, dq/dnu by its closed derivative), on rows with zeros, tiny and
// large probabilities; and the SIMD pass against its own scalar tail, element
// by element, bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "bregman/renormalise.h"
#include "kernels/support_map.h"
#include "reference/bregman_oracle.h"

namespace {

using LD = long double;
// The reference's rounding: x87 long double natively; in wasm long double is
// binary128 but its pow is musl's double pow, so a double-precision bound.
#if LDBL_MANT_DIG == 64 && !defined(__EMSCRIPTEN__)
constexpr LD kRefEps = 16 * std::numeric_limits<LD>::epsilon();
#else
constexpr LD kRefEps = 16 * std::numeric_limits<double>::epsilon();
#endif

struct Case {
  bool primal;
  double alpha;
  bd::SupportMap map;
};

const Case kCases[] = {
    {true, 0.5, bd::SupportMap::kPrimalInverse2},  {true, 0.75, bd::SupportMap::kPrimalInverse4},
    {true, 1.25, bd::SupportMap::kPrimalPower4},   {true, 3.0, bd::SupportMap::kPrimalRoot},
    {false, 1.5, bd::SupportMap::kDualSqrt},      {false, 3.0, bd::SupportMap::kDualCubic},
};

std::vector<double> Probabilities(size_t k, uint64_t seed, bool zeros) {
  std::mt19937_64 rng(seed);
  std::vector<double> p(k);
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    p[i] = u * u * u * std::exp(-0.02 * static_cast<double>(i));  // heavy head, tiny tail
    if (zeros && i % 7 == 3) p[i] = 0.0;
    sum += p[i];
  }
  for (double& x : p) x = 0.8 * x / sum;  // rem = 0.2
  if (k > 2) p[k - 1] = 1e-300;           // a tiny one
  if (k > 3) p[k - 2] = 5e-88;            // p^3.5 a normal double near the bottom of the range
  return p;
}

// d(x, y) of the alpha family by its definition, in long double; *scale
// bounds the magnitude of the terms that cancel in it (the reference's own
// rounding is about 1e-19 of that).
LD Divergence(LD alpha, LD x, LD y, LD* scale) {
  auto phi = [&](LD t) { return t == 0 ? LD(0) : (std::pow(t, alpha) - t) / (alpha * (alpha - 1)); };
  if (y == 0) {
    *scale = 0;
    return x == 0 ? LD(0) : std::pow(x, alpha) / (alpha * (alpha - 1));
  }
  const LD dphi = (alpha * std::pow(y, alpha - 1) - 1) / (alpha * (alpha - 1));
  *scale = std::fabs(phi(x)) + std::fabs(phi(y)) + std::fabs(dphi * (x - y));
  return phi(x) - phi(y) - dphi * (x - y);
}

struct Ref {
  LD q, dq;  // q(nu) and dq/dnu
};
Ref Reference(const Case& c, LD p, LD nu) {
  const LD a = c.alpha;
  if (c.primal) {
    const LD b = a - 1;
    const LD pb = p > 0 ? std::pow(p, b) : LD(0);
    if (p == 0 && b < 0) return {0, 0};
    const LD q = std::pow(pb + b * nu, 1 / b);
    return {q, std::pow(q, 2 - a)};
  }
  if (a == 3) {  // q (q - p) = nu; dq/dnu = 1 / h'(q) = 1 / (2q - p)
    const LD q = (p + std::sqrt(p * p + 4 * nu)) / 2;
    return {q, 1 / (2 * q - p)};
  }
  // Dual 3/2: sqrt(q) = (nu + sqrt(nu^2 + 4p)) / 2; dq/dnu = 1 / h'(q),
  // h(q) = q^{-1/2} (q - p), h'(q) = q^{-3/2} (q + p) / 2.
  const LD w = (nu + std::sqrt(nu * nu + 4 * p)) / 2;
  const LD q = w * w;
  return {q, 2 * q * w / (q + p)};
}

LD RelErr(LD got, LD want) {
  if (want == 0) return std::fabs(got);
  return std::fabs(got - want) / std::fabs(want);
}

// A map's sums and cost over a support against the reference's: the
// increment to 1e-13 of sum |q - p| plus the reference's own error, the
// slope to 1e-13, the divergence to 1e-12 plus the reference's error.
struct Expected {
  LD incr = 0, incr_abs = 0, incr_ref_err = 0, slope = 0, div = 0, div_ref_err = 0;
};
void CheckSums(const Expected& e, const bd::SupportMapSums& sums, double cost, double alpha,
               size_t k, double nu) {
  CHECK_MESSAGE(std::fabs(sums.increment - e.incr) <= 1e-13 * e.incr_abs + e.incr_ref_err,
                "alpha " << alpha << " k " << k << " nu " << nu << " got " << sums.increment
                         << " want " << static_cast<double>(e.incr));
  CHECK_MESSAGE(RelErr(sums.slope, e.slope) < 1e-13, "alpha " << alpha << " k " << k << " nu " << nu);
  CHECK_MESSAGE(std::fabs(cost - e.div) <= 1e-12 * e.div + e.div_ref_err,
                "alpha " << alpha << " k " << k << " nu " << nu << " got " << cost << " want "
                         << static_cast<double>(e.div));
}

}  // namespace

TEST_CASE("support maps: sums, q and divergence against long double definitions") {
  for (const Case& c : kCases) {
    bd::SupportMap map;
    REQUIRE(bd::FindSupportMap(c.primal, c.alpha, &map));
    REQUIRE(map == c.map);
    for (size_t k : {1u, 7u, 8u, 9u, 61u, 1000u}) {
      for (bool zeros : {false, true}) {
        const std::vector<double> p = Probabilities(k, 31 * k + zeros, zeros);
        std::vector<double> a(k), q(k);
        for (size_t i = 0; i < k; ++i) {
          a[i] = c.primal ? bd::bregman_detail::PrimalPower(p[i], c.alpha - 1.0)
                          : bd::bregman_detail::DualPower(p[i], c.alpha);
        }
        for (double nu : {1e-6, 1e-3, 0.05, 0.3}) {
          const double b = c.alpha - 1.0;
          if (c.primal && b < 0) {  // keep p^b + b nu > 0
            double amin = HUGE_VAL;
            for (double x : a) amin = std::min(amin, x);
            if (nu >= amin / -b) continue;
          }
          const double shift = c.primal ? b * nu : nu;
          const bd::SupportMapSums sums = bd::SumSupportMap(map, p.data(), a.data(), k, shift);
          const double cost = bd::ApplySupportMap(map, p.data(), a.data(), k, shift, q.data());
          LD incr = 0, slope = 0, div = 0, incr_abs = 0, incr_ref_err = 0, div_ref_err = 0;
          for (size_t i = 0; i < k; ++i) {
            const Ref r = Reference(c, p[i], nu);
            incr += r.q - p[i];
            incr_abs += std::fabs(r.q - LD(p[i]));
            incr_ref_err += kRefEps * (r.q + p[i]);
            slope += r.dq;
            LD scale = 0;
            div += c.primal ? Divergence(c.alpha, r.q, p[i], &scale)
                            : Divergence(c.alpha, p[i], r.q, &scale);
            div_ref_err += kRefEps * scale;
            // Below 1e-290 q is allowed to flush to 0 (y^m overflows).
            CHECK_MESSAGE(std::fabs(q[i] - r.q) <= 1e-14 * r.q + 1e-290,
                          "alpha " << c.alpha << " k " << k << " i " << i << " nu " << nu);
          }
          CheckSums({incr, incr_abs, incr_ref_err, slope, div, div_ref_err}, sums, cost, c.alpha, k,
                    nu);
        }
      }
    }
  }
}

TEST_CASE("support maps: the SIMD pass equals its scalar tail element by element") {
  for (const Case& c : kCases) {
    const size_t k = 203;
    const std::vector<double> p = Probabilities(k, 5, true);
    std::vector<double> a(k), q(k), q_one(k);
    for (size_t i = 0; i < k; ++i) {
      a[i] = c.primal ? bd::bregman_detail::PrimalPower(p[i], c.alpha - 1.0)
                      : bd::bregman_detail::DualPower(p[i], c.alpha);
    }
    const double shift = c.primal ? (c.alpha - 1.0) * 1e-3 : 1e-3;
    const double cost = bd::ApplySupportMap(c.map, p.data(), a.data(), k, shift, q.data());
    double lanes[8] = {0};  // the documented order: lane i % 8, tree (0+4, ...)
    for (size_t i = 0; i < k; ++i) {
      // One element takes the scalar path.
      lanes[i % 8] += bd::ApplySupportMap(c.map, &p[i], &a[i], 1, shift, &q_one[i]);
    }
    CHECK(std::memcmp(q.data(), q_one.data(), k * sizeof(double)) == 0);
    for (size_t w = 4; w >= 1; w /= 2)
      for (size_t j = 0; j < w; ++j) lanes[j] = lanes[j] + lanes[j + w];
    CHECK(cost == lanes[0]);
  }
}

// The general primal map (no algebraic form: one log1p and one expm1 per
// coordinate on float64 lanes) against the same long double definitions.
// (4.5: p = 5e-88 has p^b a normal 3e-306, so s / p^b passes 2^1000.)
const double kGeneralAlphas[] = {0.25, 0.6, 0.9, 1.01, 1.7, 2.5, 4.0, 4.5};

double ZeroGain(double b, double shift) { return b > 0.0 ? std::pow(shift, 1.0 / b) : 0.0; }

// p^b per coordinate as the primal solver stores it, and their minimum.
std::vector<double> PrimalPowersOf(const std::vector<double>& p, double b, double* amin) {
  std::vector<double> a(p.size());
  *amin = HUGE_VAL;
  for (size_t i = 0; i < p.size(); ++i) {
    a[i] = bd::bregman_detail::PrimalPower(p[i], b);
    *amin = std::min(*amin, a[i]);
  }
  return a;
}

TEST_CASE("general primal map: sums, q and divergence against long double definitions, every alpha") {
  for (double alpha : kGeneralAlphas) {
    const Case c{true, alpha, bd::SupportMap::kPrimalRoot};  // (map unused by Reference)
    bd::SupportMap unused;
    REQUIRE_FALSE(bd::FindSupportMap(true, alpha, &unused));
    const double b = alpha - 1.0;
    for (size_t k : {1u, 7u, 8u, 9u, 61u, 1000u}) {
      for (bool zeros : {false, true}) {
        const std::vector<double> p = Probabilities(k, 17 * k + zeros, zeros);
        double amin;
        const std::vector<double> a = PrimalPowersOf(p, b, &amin);
        for (double nu : {1e-9, 1e-6, 1e-3, 0.05, 0.3}) {
          if (b < 0 && nu >= amin / -b) continue;  // keep p^b + b nu > 0
          const double shift = b * nu;
          const double z = ZeroGain(b, shift);
          const bd::SupportMapSums sums =
              bd::SumPrimalPowerMap(p.data(), a.data(), k, b, shift, z, z / shift);
          std::vector<double> q(k);
          const double cost = bd::ApplyPrimalPowerMap(
              p.data(), a.data(), k, alpha, shift, z,
              bd::bregman_detail::DivergenceFromZero(alpha, z), q.data());
          std::vector<double> q_unpriced(k);
          CHECK(std::isnan(bd::ApplyPrimalPowerMap(
              p.data(), a.data(), k, alpha, shift, z,
              bd::bregman_detail::DivergenceFromZero(alpha, z), q_unpriced.data(), false)));
          CHECK(std::memcmp(q.data(), q_unpriced.data(), k * sizeof(double)) == 0);
          LD incr = 0, slope = 0, incr_abs = 0, incr_ref_err = 0, div = 0, div_ref_err = 0;
          for (size_t i = 0; i < k; ++i) {
            const Ref r = Reference(c, p[i], nu);
            LD scale = 0;
            div += Divergence(alpha, r.q, p[i], &scale);
            div_ref_err += kRefEps * std::max(1.0, std::fabs(1.0 / b)) * scale;
            // shift = b nu rounded to double moves q by |1/b| times its rounding;
            // the reference's pow of a large p^b (5e-88^-0.75 = 3e65) adds its own
            // error (a few kRefEps in wasm, whose long double pow is less exact).
            const double q_tol =
                1e-14 + std::fabs(1.0 / b) * 0x1p-52 + 4.0 * static_cast<double>(kRefEps);
            CHECK_MESSAGE(std::fabs(q[i] - r.q) <= q_tol * r.q + 1e-290,
                          "alpha " << alpha << " k " << k << " i " << i << " nu " << nu);
            incr += r.q - p[i];
            incr_abs += std::fabs(r.q - LD(p[i]));
            // The reference's pow(p^b + b nu, 1/b) turns its argument's
            // rounding into |1/b| times as much in q (1/b = 100 at alpha 1.01).
            incr_ref_err += kRefEps * std::max(1.0, std::fabs(1.0 / b)) * (r.q + p[i]);
            slope += r.dq;
          }
          CheckSums({incr, incr_abs, incr_ref_err, slope, div, div_ref_err}, sums, cost, alpha, k, nu);
        }
      }
    }
  }
}

TEST_CASE("general primal map: the SIMD pass equals its scalar tail element by element") {
  for (double alpha : kGeneralAlphas) {
    const size_t k = 203;
    const double b = alpha - 1.0;
    const std::vector<double> p = Probabilities(k, 5, true);
    std::vector<double> a(k);
    for (size_t i = 0; i < k; ++i) a[i] = bd::bregman_detail::PrimalPower(p[i], b);
    const double shift = b * 1e-4;
    const double z = ZeroGain(b, shift);
    const bd::SupportMapSums all = bd::SumPrimalPowerMap(p.data(), a.data(), k, b, shift, z, z / shift);
    double incr[8] = {0}, slope[8] = {0};  // lane i % 8, tree (0+4, ...)
    for (size_t i = 0; i < k; ++i) {
      const bd::SupportMapSums one = bd::SumPrimalPowerMap(&p[i], &a[i], 1, b, shift, z, z / shift);
      incr[i % 8] += one.increment;
      slope[i % 8] += one.slope;
    }
    for (size_t w = 4; w >= 1; w /= 2) {
      for (size_t j = 0; j < w; ++j) {
        incr[j] = incr[j] + incr[j + w];
        slope[j] = slope[j] + slope[j + w];
      }
    }
    CHECK_MESSAGE(all.increment == incr[0], "alpha " << alpha);
    CHECK_MESSAGE(all.slope == slope[0], "alpha " << alpha);
    // The apply: q element by element, the cost in the same lanes.
    const double zero_cost = bd::bregman_detail::DivergenceFromZero(alpha, z);
    std::vector<double> q(k), q_one(k);
    const double cost = bd::ApplyPrimalPowerMap(p.data(), a.data(), k, alpha, shift, z, zero_cost,
                                                q.data());
    double lanes[8] = {0};
    for (size_t i = 0; i < k; ++i) {
      lanes[i % 8] += bd::ApplyPrimalPowerMap(&p[i], &a[i], 1, alpha, shift, z, zero_cost, &q_one[i]);
    }
    for (size_t w = 4; w >= 1; w /= 2)
      for (size_t j = 0; j < w; ++j) lanes[j] = lanes[j] + lanes[j + w];
    CHECK(std::memcmp(q.data(), q_one.data(), k * sizeof(double)) == 0);
    CHECK_MESSAGE(cost == lanes[0], "alpha " << alpha);
  }
}

// The general dual map (every alpha > 1 but 3/2, 2 and 3: Halley steps on
// float64 lanes) against q solved from its definition in long double:
// q^{a-2} (q - p) = nu by bisection on log(q - p) (p = 0: q^{a-1} = nu), and
// dq/dnu = 1 / h'(q), h'(q) = q^{a-3} ((a-1) q - (a-2) p).
// (20: p^{2-a} = inf for p = 1e-300; 1.01: t far above 1 at moderate c;
// 1.001 and 60: no start table, Halley guesses from the asymptotes; 18.7:
// 1 / e^{40(a-1)} near the bottom of the normal range.)
const double kDualGeneralAlphas[] = {1.001, 1.01, 1.05, 1.25, 1.7, 2.5, 3.5, 4.0, 6.0, 18.7, 20.0, 60.0};

// q - p solving q^{a-2} (q - p) = nu for p > 0, itself (no cancellation
// against p): G(y) = (a-2) log(p + e^y) + y - log nu is increasing in y,
// bisection in double (cheap in wasm, whose long double is software), then
// Newton in long double, G' = 1 + (a-2) e^y / (p + e^y).
LD DualIncrementReference(LD a, LD p, LD nu) {
  const double pd = static_cast<double>(p), ad = static_cast<double>(a);
  const double lnu = std::log(static_cast<double>(nu));
  double lo = -800, hi = 800;
  for (int it = 0; it < 200; ++it) {
    const double mid = (lo + hi) / 2;
    if (mid == lo || mid == hi) break;
    (((ad - 2) * std::log(pd + std::exp(mid)) + mid - lnu) > 0 ? hi : lo) = mid;
  }
  LD y = (static_cast<LD>(lo) + hi) / 2;
  for (int it = 0; it < 3; ++it) {
    const LD e = std::exp(y);
    y -= ((a - 2) * std::log(p + e) + y - std::log(nu)) / (1 + (a - 2) * e / (p + e));
  }
  return std::exp(y);
}

// q and dq/dnu = 1 / h'(q), h'(q) = q^{a-3} ((a-1) q - (a-2) p); p = 0: q^{a-1} = nu.
Ref DualReference(LD a, LD p, LD nu) {
  if (p == 0) {
    const LD q = std::pow(nu, 1 / (a - 1));
    return {q, q / (nu * (a - 1))};
  }
  const LD q = p + DualIncrementReference(a, p, nu);
  return {q, 1 / (std::pow(q, a - 3) * ((a - 1) * q - (a - 2) * p))};
}

TEST_CASE("general dual map, rough: each increment within kDualRoughError of its definition") {
  // The short form (the map's start alone) that Newton's far evaluations
  // use: each term's increment and slope against the long double
  // reference, one term at a time and as weighted sums, every alpha,
  // multipliers over 11 decades; the sums' worst relative error is
  // reported (and must stay inside the stated bound the solver trusts).
  double worst = 0.0, worst_slope = 0.0;
  for (double alpha : kDualGeneralAlphas) {
    for (size_t k : {1u, 9u, 1000u}) {
      for (bool zeros : {false, true}) {
        const std::vector<double> p = Probabilities(k, 7 * k + zeros, zeros);
        std::vector<double> a(k), w(k);
        for (size_t i = 0; i < k; ++i) {
          a[i] = bd::bregman_detail::DualPower(p[i], alpha);
          w[i] = 0.5 + static_cast<double>(i % 5);
        }
        for (double nu : {1e-12, 1e-9, 1e-6, 1e-3, 0.05, 0.3}) {
          const double root = bd::PowF64(nu, 1.0 / (alpha - 1.0));
          const bd::SupportMapSums rough =
              bd::SumDualPowerMap(p.data(), a.data(), k, alpha, nu, root, w.data(), true);
          LD incr = 0, slope = 0;
          for (size_t i = 0; i < k; ++i) {
            const Ref r = DualReference(alpha, p[i], nu);
            incr += w[i] * (r.q - p[i]);
            slope += w[i] * r.dq;
            const bd::SupportMapSums one =
                bd::SumDualPowerMap(&p[i], &a[i], 1, alpha, nu, root, nullptr, true);
            const double want = static_cast<double>(r.q - p[i]);
            CAPTURE(alpha);
            CAPTURE(p[i]);
            CAPTURE(nu);
            CHECK(std::fabs(one.increment - want) <= bd::kDualRoughError * want);
          }
          const double e = static_cast<double>(std::fabs(rough.increment - incr) / incr);
          const double es = static_cast<double>(std::fabs(rough.slope - slope) / slope);
          worst = std::max(worst, e);
          worst_slope = std::max(worst_slope, es);
        }
      }
    }
  }
  MESSAGE("rough sums: worst relative error " << worst << " (increments), " << worst_slope
                                              << " (slopes); bound " << bd::kDualRoughError);
  CHECK(worst <= bd::kDualRoughError);
  CHECK(worst_slope <= bd::kDualRoughError);
}

TEST_CASE("general dual map: sums, q and divergence against long double definitions, every alpha") {
  for (double alpha : kDualGeneralAlphas) {
    bd::SupportMap unused;
    REQUIRE_FALSE(bd::FindSupportMap(false, alpha, &unused));
    for (size_t k : {1u, 7u, 8u, 9u, 61u, 1000u}) {
      for (bool zeros : {false, true}) {
        const std::vector<double> p = Probabilities(k, 13 * k + zeros, zeros);
        std::vector<double> a(k), q(k);
        for (size_t i = 0; i < k; ++i) a[i] = bd::bregman_detail::DualPower(p[i], alpha);
        for (double nu : {1e-12, 1e-9, 1e-6, 1e-3, 0.05, 0.3}) {
          const double root = bd::PowF64(nu, 1.0 / (alpha - 1.0));
          const bd::SupportMapSums sums = bd::SumDualPowerMap(p.data(), a.data(), k, alpha, nu, root);
          const double cost = bd::ApplyDualPowerMap(p.data(), a.data(), k, alpha, nu, root, q.data());
          // Unpriced (a sample's final q): the same q, bit for bit, and no cost.
          std::vector<double> q_unpriced(k);
          CHECK(std::isnan(bd::ApplyDualPowerMap(p.data(), a.data(), k, alpha, nu, root,
                                                 q_unpriced.data(), false)));
          CHECK(std::memcmp(q.data(), q_unpriced.data(), k * sizeof(double)) == 0);
          LD incr = 0, slope = 0, incr_abs = 0, incr_ref_err = 0, div = 0, div_ref_err = 0;
          for (size_t i = 0; i < k; ++i) {
            const Ref r = DualReference(alpha, p[i], nu);
            LD scale = 0;
            div += Divergence(alpha, p[i], r.q, &scale);
            // (phi's x^a - x loses up to 1/(a-1) of the reference's precision.)
            div_ref_err += kRefEps * std::max(1.0, 1.0 / (alpha - 1.0)) * scale;
            // p^{2-a} and nu^{1/(a-1)} come in rounded (PowF64: ~2 ulp): q - p
            // inherits it, to 1/(a-1) times as much where q^{a-1} ~ nu; so does
            // the reference's own rounding, and its exp of log q adds |log q|
            // of it (in wasm, whose long double exp and log are musl's double
            // ones, that is most of the tolerance).
            const double amplify = std::max(1.0, 1.0 / (alpha - 1.0));
            const double log_q = std::fabs(std::log(std::max(static_cast<double>(r.q), 1e-300)));
            const double q_tol = 1e-14 + 8.0 * amplify * 0x1p-52 +
                                 4.0 * (amplify + log_q) * static_cast<double>(kRefEps);
            // (q below the double range, nu^{1/(a-1)} = 1e-1200, flushes to 0.)
            CHECK_MESSAGE(std::fabs(q[i] - r.q) <= q_tol * r.q + 1e-300,
                          "alpha " << alpha << " k " << k << " i " << i << " p " << p[i] << " nu "
                                   << nu << " got " << q[i] << " want "
                                   << static_cast<double>(r.q));
            incr += r.q - p[i];
            incr_abs += std::fabs(r.q - LD(p[i]));
            incr_ref_err += q_tol * r.q;
            slope += r.dq;
          }
          CheckSums({incr, incr_abs, incr_ref_err, slope, div, div_ref_err}, sums, cost, alpha, k, nu);
        }
      }
    }
  }
}

TEST_CASE("general dual map: q - p itself within a few ulp, however small next to p") {
  // One coordinate at a time (the scalar path, the same bits as the lanes):
  // p from 0.5 down to subnormal, nu from 1e-14 to 0.5, so t = (q - p) / p
  // runs from ~1e-16 (q - p far below an ulp of p) to ~1e15.
  const double ps[] = {0.5, 0.1, 1e-3, 1e-6, 1e-12, 1e-40, 1e-300, 1e-320};
  const double nus[] = {1e-14, 1e-10, 1e-6, 1e-3, 0.05, 0.5};
  LD worst = 0;
  for (double alpha : kDualGeneralAlphas) {
    for (double p : ps) {
      const double a = bd::bregman_detail::DualPower(p, alpha);
      for (double nu : nus) {
        const double root = bd::PowF64(nu, 1.0 / (alpha - 1.0));
        const bd::SupportMapSums one = bd::SumDualPowerMap(&p, &a, 1, alpha, nu, root);
        const LD want = DualIncrementReference(alpha, p, nu);
        if (!(want > 1e-300)) continue;  // below the double range
        // p^{2-a} (~2 ulp) enters q - p where t is small; nu^{1/(a-1)} (~2 ulp,
        // amplified by 1/(a-1)) where t is large; the reference's own exp.
        const double amplify = std::max(1.0, 1.0 / (alpha - 1.0));
        const LD tol = (8.0 * amplify * 0x1p-52 +
                        4.0 * (amplify + std::fabs(std::log(static_cast<double>(want)))) *
                            static_cast<double>(kRefEps)) * want;
        const LD err = std::fabs(one.increment - want);
        if (p >= 1e-300) worst = std::max(worst, err / want / amplify);
        CHECK_MESSAGE(err <= tol, "alpha " << alpha << " p " << p << " nu " << nu << " got "
                                           << one.increment << " want "
                                           << static_cast<double>(want));
      }
      // The cost is finite (a subnormal p once made q^2 underflow against
      // nu / (q - p) = inf: NaN).
      double q = 0.0;
      const double root = bd::PowF64(1e-5, 1.0 / (alpha - 1.0));
      CHECK_MESSAGE(std::isfinite(bd::ApplyDualPowerMap(&p, &a, 1, alpha, 1e-5, root, &q)),
                    "alpha " << alpha << " p " << p);
    }
  }
  MESSAGE("general dual map: worst q - p error " << static_cast<double>(worst / 0x1p-52)
                                                 << " ulp (over max(1, 1/(a-1)))");
}

TEST_CASE("general dual: a multiplier below the double range is solved in log scale") {
  // A near-certain token and a tail of 1e-14 each: at alpha 40 the dual's
  // nu is ~1e-530 (the fuzzer found sum q = 1.87 here: nu cannot be
  // represented). q must still sum to 1 and meet the KKT condition
  // (alpha-2) log q + log(q - p) = log nu for every token.
  for (double alpha : {40.0, 12.0, 60.0}) {
    for (double tail : {1e-14, 1e-9}) {
      const size_t k = 32;
      std::vector<double> p(k, tail), q(k), scratch(k);
      p[0] = 1.0 - 31.0 * tail - 1e-13;
      const double cost = bd::BregmanRenormalise(bd::BregmanDivergence::kDual, alpha, p.data(), k,
                                                 q.data(), scratch.data());
      LD sum = 0, lo = HUGE_VAL, hi = -HUGE_VAL;
      for (size_t i = 0; i < k; ++i) {
        sum += q[i];
        CHECK(q[i] >= p[i]);
        if (!(q[i] > p[i])) continue;  // the top token's increment (~nu) underflows
        const LD kkt = (alpha - 2) * std::log(LD(q[i])) + std::log(LD(q[i]) - p[i]);
        lo = std::min(lo, kkt);
        hi = std::max(hi, kkt);
      }
      CAPTURE(alpha);
      CAPTURE(tail);
      CHECK(std::fabs(sum - 1) <= 1e-14);
      CHECK(hi - lo <= 1e-9 * std::fabs(hi));
      CHECK(std::isfinite(cost));
      CHECK(cost >= 0.0);
    }
  }
}

TEST_CASE("general primal: a multiplier below the double range is solved in log scale") {
  // nu ~ (rem / k)^{alpha-1} / (alpha-1) falls below the double range for a
  // large alpha and a small remainder (the fuzzer's row: alpha 40, 65 tokens
  // of 1e-10 beside a near-certain one, where the plain solver gave
  // sum q = 1.028). q must sum to 1, match the oracle (bisection on the
  // zero-probability gain), and meet the KKT condition: q^b - p^b = b nu,
  // the same for every token (b = alpha - 1), checked in logs as
  // b log q + log(1 - (p / q)^b).
  // Dyadic rows (tails 2^-e, remainder 2^-24): every order of summation
  // gives the same kept mass, so the oracle solves the same equation.
  struct Row {
    double alpha;
    int tail_exponent;
    size_t k;
  };
  for (const Row& row : {Row{40.0, -33, 66}, Row{40.0, -46, 32}, Row{60.0, -30, 32},
                         Row{60.0, -46, 8}, Row{12.0, -46, 32}, Row{200.0, -20, 20}}) {
    const size_t k = row.k;
    const double tail = std::ldexp(1.0, row.tail_exponent), rem = std::ldexp(1.0, -24);
    std::vector<double> p(k, tail), q(k), scratch(k), want(k);
    p[0] = 1.0 - static_cast<double>(k - 1) * tail - rem;
    REQUIRE(1.0 - bd::SupportMass(p.data(), k) == rem);
    const double cost = bd::BregmanRenormalise(bd::BregmanDivergence::kPrimal, row.alpha,
                                               p.data(), k, q.data(), scratch.data());
    const bregman_oracle::Renormalised ref = bregman_oracle::Renormalise(
        bregman_oracle::Mode::kPrimal, row.alpha, p.data(), k, want.data());
    const double b = row.alpha - 1.0;
    LD sum = 0, lo = HUGE_VAL, hi = -HUGE_VAL;
    for (size_t i = 0; i < k; ++i) {
      sum += q[i];
      CHECK(q[i] >= p[i]);
      CHECK(std::fabs(q[i] - want[i]) <= 1e-13 * want[i]);
      if (!(q[i] > p[i] * (1.0 + 1e-6))) continue;  // the increment is lost in q's rounding
      const LD kkt = b * std::log(LD(q[i])) + std::log1p(-std::pow(LD(p[i]) / q[i], LD(b)));
      lo = std::min(lo, kkt);
      hi = std::max(hi, kkt);
    }
    CAPTURE(row.alpha);
    CAPTURE(row.tail_exponent);
    CHECK(bd::bregman_detail::MultiplierBelowRange(row.alpha, rem, k) == (row.alpha >= 40.0));
    CHECK(std::fabs(sum - 1) <= 1e-14);
    CHECK(hi >= lo);  // some token's increment was checked
    CHECK(hi - lo <= 1e-9 * std::fabs(hi));
    CHECK(std::fabs(cost - ref.in_support) <= 1e-9 * ref.in_support + 1e-300);
  }
}

TEST_CASE("general dual map: the SIMD pass equals its scalar tail element by element") {
  for (double alpha : kDualGeneralAlphas) {
    const size_t k = 203;
    const std::vector<double> p = Probabilities(k, 5, true);
    std::vector<double> a(k);
    for (size_t i = 0; i < k; ++i) a[i] = bd::bregman_detail::DualPower(p[i], alpha);
    const double nu = 1e-5, root = bd::PowF64(nu, 1.0 / (alpha - 1.0));
    const bd::SupportMapSums all = bd::SumDualPowerMap(p.data(), a.data(), k, alpha, nu, root);
    double incr[8] = {0}, slope[8] = {0}, lanes[8] = {0};  // lane i % 8, tree (0+4, ...)
    std::vector<double> q(k), q_one(k);
    const double cost = bd::ApplyDualPowerMap(p.data(), a.data(), k, alpha, nu, root, q.data());
    for (size_t i = 0; i < k; ++i) {
      const bd::SupportMapSums one = bd::SumDualPowerMap(&p[i], &a[i], 1, alpha, nu, root);
      incr[i % 8] += one.increment;
      slope[i % 8] += one.slope;
      lanes[i % 8] += bd::ApplyDualPowerMap(&p[i], &a[i], 1, alpha, nu, root, &q_one[i]);
    }
    for (size_t w = 4; w >= 1; w /= 2) {
      for (size_t j = 0; j < w; ++j) {
        incr[j] = incr[j] + incr[j + w];
        slope[j] = slope[j] + slope[j + w];
        lanes[j] = lanes[j] + lanes[j + w];
      }
    }
    CHECK_MESSAGE(all.increment == incr[0], "alpha " << alpha);
    CHECK_MESSAGE(all.slope == slope[0], "alpha " << alpha);
    CHECK(std::memcmp(q.data(), q_one.data(), k * sizeof(double)) == 0);
    CHECK_MESSAGE(cost == lanes[0], "alpha " << alpha);
  }
}

TEST_CASE("general dual map: start tables where they fit, and their per-thread cache changes no bit") {
  bd::DualStartTable table;
  for (double alpha : {1.05, 1.25, 2.5, 4.0, 20.0}) {
    bd::BuildDualStartTable(alpha, &table);
    CHECK_MESSAGE(table.count > 0, "alpha " << alpha);
    CHECK(table.count <= bd::kDualStartTableMaxIntervals);
    CHECK(table.coef.size() == 4 * table.count);
  }
  for (double alpha : {1.001, 1.01, 60.0}) {  // too many nodes: Halley guesses instead
    bd::BuildDualStartTable(alpha, &table);
    CHECK_MESSAGE(table.count == 0, "alpha " << alpha);
  }
  // The maps keep the tables of the last four alphas: q for alpha 2.5 is the
  // same with its table fresh, kept, and rebuilt after five other alphas.
  const size_t k = 301;
  const std::vector<double> p = Probabilities(k, 9, true);
  auto q_for = [&](double alpha) {
    std::vector<double> a(k), q(k);
    for (size_t i = 0; i < k; ++i) a[i] = bd::bregman_detail::DualPower(p[i], alpha);
    const double nu = 1e-6, root = bd::PowF64(nu, 1.0 / (alpha - 1.0));
    const double cost = bd::ApplyDualPowerMap(p.data(), a.data(), k, alpha, nu, root, q.data());
    q.push_back(cost);
    return q;
  };
  const std::vector<double> first = q_for(2.5);
  CHECK(q_for(2.5) == first);
  for (double other : {1.25, 1.7, 3.5, 4.0, 6.0}) q_for(other);
  CHECK(q_for(2.5) == first);
}

TEST_CASE("PrimalPowers / DualPowers equal PrimalPower / DualPower element by element") {
  const std::vector<double> p = Probabilities(1001, 9, true);  // zeros and a 1e-300
  for (double alpha : {0.25, 0.5, 0.6, 1.5, 1.7, 2.5, 3.0, 4.0}) {
    std::vector<double> got(p.size());
    bd::bregman_detail::PrimalPowers(p.data(), p.size(), alpha - 1.0, got.data());
    for (size_t i = 0; i < p.size(); ++i) {
      const double want = bd::bregman_detail::PrimalPower(p[i], alpha - 1.0);
      CHECK_MESSAGE(std::memcmp(&got[i], &want, sizeof(double)) == 0, "alpha " << alpha << " i " << i);
    }
    bd::bregman_detail::DualPowers(p.data(), p.size(), alpha, got.data());
    for (size_t i = 0; i < p.size(); ++i) {
      const double want = bd::bregman_detail::DualPower(p[i], alpha);
      CHECK_MESSAGE(std::memcmp(&got[i], &want, sizeof(double)) == 0, "dual alpha " << alpha << " i " << i);
    }
  }
}

TEST_CASE("SupportMass resumed from saved lanes has the bits of the whole sum") {
  // The Bregman search saves the lanes every 512 entries and resumes from
  // them for each support's kept mass; the final solve must see the very
  // double a fixed-k decode sums from the start.
  const std::vector<double> p = Probabilities(5000, 11, true);
  constexpr size_t kStep = 64;  // a multiple of the lanes
  std::vector<double> saved((p.size() / kStep + 1) * bd::kSupportMassLanes, 0.0);
  for (size_t c = 1; c <= p.size() / kStep; ++c) {
    double* lanes = saved.data() + c * bd::kSupportMassLanes;
    std::copy(lanes - bd::kSupportMassLanes, lanes, lanes);
    bd::AccumulateMassLanes(p.data() + (c - 1) * kStep, kStep, lanes);
  }
  for (size_t k = 1; k <= p.size(); k += (k < 200 ? 1 : 37)) {
    const size_t c = k / kStep;
    const double resumed =
        bd::MassFromLanes(saved.data() + c * bd::kSupportMassLanes, p.data(), c * kStep, k);
    const double whole = bd::SupportMass(p.data(), k);
    CHECK_MESSAGE(std::memcmp(&resumed, &whole, sizeof(double)) == 0, "k " << k);
  }
}
