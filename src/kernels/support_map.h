// The Bregman fixed-support maps that have algebraic forms, as float64 SIMD
// passes over the support (src/bregman/renormalise_*.cc solve for the
// multiplier nu with them). For one nu every kept token gets
//   primal: q_i = (a_i + s)^{1/b},  a_i = p_i^b, b = alpha - 1, s = b nu;
//   dual:   q_i^{alpha-2} (q_i - p_i) = nu.
// The forms below need no log, exp or pow per coordinate, and every
// quantity is written without cancellation (differences of powers factored
// as s times a positive polynomial), so the increments q_i - p_i and the
// divergences keep full relative precision however close q_i is to p_i.
// Sums are order-fixed (8 virtual float64 lanes, f64_vec-inl.h): the same
// bits natively on every SIMD target and in wasm.
#pragma once

#include <cstddef>
#include <vector>

namespace bd {

enum class SupportMap {
  kPrimalInverse2,  // 1/b = -2: alpha = 1/2
  kPrimalInverse3,  // 1/b = -3: alpha = 2/3
  kPrimalInverse4,  // 1/b = -4: alpha = 3/4
  kPrimalPower3,    // 1/b = 3:  alpha = 4/3
  kPrimalPower4,    // 1/b = 4:  alpha = 5/4
  kPrimalRoot,      // b = 2:    alpha = 3
  kDualSqrt,        // dual alpha = 3/2
  kDualCubic,       // dual alpha = 3: q (q - p) = nu
};

struct SupportMapSums {
  double increment;  // sum_i (q_i - p_i)
  double slope;      // sum_i dq_i / dnu (> 0)
};

// The map for (primal, alpha) when it has one of the forms above (b times
// the form's 1/b is exactly +-1, or b == 2; dual: alpha == 1.5 or 3).
bool FindSupportMap(bool primal, double alpha, SupportMap* map);

// a[0..k): the solver's per-coordinate powers, p^b (primal; +inf for p = 0
// when b < 0, 0 when b > 0) or sqrt(p) (dual). shift: s = b nu (primal) or nu
// (dual; > 0). Tokens with p = 0 get q = 0 when alpha < 1 and the gaining
// mass otherwise, as in the scalar solvers.
// weight (every Sum* below): null, or each token's terms are multiplied by
// weight[i] (the quadrature weights of a SupportSketch's nodes).
SupportMapSums SumSupportMap(SupportMap map, const double* p, const double* a, size_t k,
                             double shift, const double* weight = nullptr);

// Writes q[0..k) for the multiplier and returns the in-support divergence
// sum_i d(q_i, p_i) (primal) or d(p_i, q_i) (dual).
// cost_weight (every Apply* below): null, or each token's divergence is
// multiplied by cost_weight[i] in the returned sum (a SupportSketch's node
// weights: a support priced on its nodes); q is written as without it.
double ApplySupportMap(SupportMap map, const double* p, const double* a, size_t k,
                       double shift, double* q, const double* cost_weight = nullptr);

// Every other primal alpha (b = alpha - 1): q_i / p_i - 1 =
// expm1(log1p(s / a_i) / b) on float64 lanes (one log1p and one expm1 per
// coordinate, ~1 ulp each, the increments with full relative precision).
// a_i = 0 (alpha > 1: p^b underflowed, or p = 0), and any a_i below s 2^-1000,
// gains zero_gain = s^{1/b} (to 2^-1000 / b relative), with d/dnu zero_slope;
// a_i = +inf (alpha < 1, p = 0) gets q = 0.
SupportMapSums SumPrimalPowerMap(const double* p, const double* a, size_t k, double b,
                                 double shift, double zero_gain, double zero_slope,
                                 const double* weight = nullptr);

// Writes q[0..k) of that map and returns sum_i d(q_i, p_i) (a_i = 0 or below
// s 2^-1000: q_i = zero_mass, at zero_cost each). Without price it returns
// NaN and skips the divergences (most of the pass); q has the same bits.
double ApplyPrimalPowerMap(const double* p, const double* a, size_t k, double alpha,
                           double shift, double zero_mass, double zero_cost, double* q,
                           bool price = true, const double* cost_weight = nullptr);

// Every other dual alpha > 1 (not 3/2, 2 or 3): q_i - p_i = p_i t_i with
// t (1 + t)^{alpha-2} = nu p_pow_i / p_i, p_pow_i = p_i^{2-alpha} (0 for
// p = 0), by Halley steps on float64 lanes (a few log1p and exp per
// coordinate; q - p within a few ulp). Tokens with p = 0, and those whose
// t would exceed e^40, gain nu_root = nu^{1/(alpha-1)}.
// rough: each t from the map's start alone (the start table's cubic, or
// Halley's guesses; about half the work), q - p within kDualRoughError of
// the exact increment (relative), for a Newton evaluation far from its root.
constexpr double kDualRoughError = 1e-7;
SupportMapSums SumDualPowerMap(const double* p, const double* p_pow, size_t k, double alpha,
                               double nu, double nu_root, const double* weight = nullptr,
                               bool rough = false);

// Writes q[0..k) of that map and returns sum_i d(p_i, q_i) (without price:
// NaN, as above).
double ApplyDualPowerMap(const double* p, const double* p_pow, size_t k, double alpha, double nu,
                         double nu_root, double* q, bool price = true,
                         const double* cost_weight = nullptr);

// Terms of a block's Chebyshev series (SupportSketch's nodes per block): a
// narrow block takes kChebyshevTerms, a wide one kChebyshevWideTerms.
constexpr size_t kChebyshevTerms = 8;
constexpr size_t kChebyshevWideTerms = 16;

// q[i] = p[i] + sum_{j<terms} coef[j] T_j(u_i), u_i = (p[i] - centre) inv_half
// clamped to [-1, 1] (Clenshaw's recurrence; IEEE arithmetic only, the same
// bits on every target): a block's increments from the Chebyshev series
// of the map through its nodes (SupportSketch::InterpolateQ). terms is one
// of the two above.
void ChebyshevIncrements(const double* p, size_t n, double centre, double inv_half,
                         const double* coef, size_t terms, double* q);

// moments[j] = sum_i T_j(u_i), j < terms, u_i = (p[i] - centre) inv_half
// clamped to [-1, 1]: a block's Chebyshev moments (SupportSketch's weights),
// summed in SumF64Lanes' fixed order (the same bits on every target).
void ChebyshevMoments(const double* p, size_t n, double centre, double inv_half, size_t terms,
                      double* moments);

// The general dual map's start for one alpha: log t as a function of
// log c (support_map.cc), one cubic per interval [l0 + j h, l0 + (j+1) h),
// j < count, coefficients of f^0..f^3 in f = (log c - l0) / h - j. The maps
// build one per alpha and keep the last few per thread; count = 0: none
// (alphas within ~0.03 of 1 or above ~25, which start from the asymptotes
// and take a few more steps).
constexpr size_t kDualStartTableMaxIntervals = 4096;
struct DualStartTable {
  double alpha = 0.0;
  size_t count = 0;
  double l0 = 0.0, l1 = 0.0, inv_h = 0.0;
  std::vector<double> coef;  // 4 count
};
void BuildDualStartTable(double alpha, DualStartTable* table);

// sum_i p_i over [0, k) in the same order-fixed lanes (the kept mass of a
// support), and min_i a_i (exact in any order).
double SupportMass(const double* p, size_t k);

// SupportMass resumed: its kSupportMassLanes order-fixed lanes can be saved
// at a multiple of their count and carried on, so that the mass of any k
// costs the elements past the last saved point only, with the same bits.
// AccumulateMassLanes adds p[0..n) (n a multiple of kSupportMassLanes) to
// lanes; MassFromLanes returns the mass of p[0..to) from the lanes of
// p[0..from) (from a multiple of kSupportMassLanes, from <= to).
constexpr size_t kSupportMassLanes = 8;
void AccumulateMassLanes(const double* p, size_t n, double* lanes);
double MassFromLanes(const double* lanes, const double* p, size_t from, size_t to);
double SupportMin(const double* a, size_t k);

// out[i] = sqrt(p[i]) for i < n (correctly rounded: the scalar's bits).
void SqrtMany(const double* p, size_t n, double* out);

// The primal alpha = 3/2 closed form (spec 3.1) for its shift c:
// q_i = (sqrt(p_i) + c)^2 written without cancellation, p_i + c (2 sqrt(p_i)
// + c), for i < k: the scalar formula's bits on every target.
void ApplySqrtShift(const double* p, size_t k, double c, double* q);

}  // namespace bd
