// Exhaustive float64 ORACLE for sparse Bregman decoding, independent of the
// production code in src/ (it includes nothing from there and shares none of
// its search or solver algorithms; only the KKT maps q(nu) themselves are the
// same formulas, evaluated in a cancellation-free form):
//   * it sorts the probabilities itself (descending, lower index first);
//   * it prices EVERY support size k = 1..V, with no search;
//   * every fixed-support renormalisation is plain bisection on the
//     multiplier (200 iterations at most, stopping early only when the
//     midpoint no longer moves), with no closed forms and no Newton; the dual
//     nests a second bisection per coordinate;
//   * D(k) is priced directly as sum_i d(q_i, p_i) (primal) or d(p_i, q_i)
//     (dual) over the support, plus the zeroing cost of every dropped token,
//     not telescoped;
//   * k* is the smallest argmin of C(k) = D(k) + lambda k.
//
// Generator phi_a(x) = (x^a - x) / (a (a - 1)), phi_1 = x log x, and
// d(x, y) = phi(x) - phi(y) - phi'(y) (x - y) (spec spec/bregman.md).
//
// Range: past alpha ~64 DivergenceRel's series (|r| <= 1/2) can cancel
// catastrophically (terms of C(alpha, n) |r|^n, ~1e11 at alpha 128), and D(k)
// loses its precision where y^alpha is subnormal (checked against
// mpmath). Rows with large alphas whose gains stay off that branch (the
// "large alphas" test: tails far below the head) are fine; otherwise large
// alphas are tested against closed forms and symmetric rows
// (test_bregman_properties.cc, "primal at a large alpha").
//
// Cost: O(V^2 * iterations) per distribution for the primal, times another
// factor of iterations for the dual. Meant for V up to a few hundred (a few
// thousand for alpha in {1, 1.5, 2, 3}, whose map evaluations are cheap).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

namespace bregman_oracle {

enum class Mode { kPrimal, kDual };

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// Per-coordinate divergence.

// d(x, y) for y > 0 from r = x / y - 1 (r >= -1), which callers form from an
// increment they know to full relative precision. With a = alpha:
//  * |r| <= 1/2: binomial series d / y^a = sum_{n>=2} c_n r^n, c_2 = 1/2,
//    c_{n+1} = c_n (a - n) / (n + 1) (the direct form cancels there);
//  * otherwise ((1+r)^a - 1 - a r) / (a (a-1)), written as
//    [(1+r) expm1((a-1) log1p(r)) / (a-1) - r] / a so that it does not
//    cancel as a -> 1 (the limit is the KL form (1+r) log1p(r) - r).
inline double DivergenceRel(double alpha, double y, double r) {
  double scaled;
  if (r == 0.0) return 0.0;
  if (std::fabs(r) <= 0.5) {
    double c = 0.5, rn = r * r, sum = 0.0;
    for (int n = 2; n < 200; ++n) {
      const double term = c * rn;
      sum += term;
      if (std::fabs(term) <= 1e-18 * std::fabs(sum)) break;
      c *= (alpha - n) / (n + 1);
      rn *= r;
    }
    scaled = sum;
  } else if (r == -1.0) {  // x = 0: d(0, y) = y^a / a
    scaled = 1.0 / alpha;
  } else {
    const double b = alpha - 1.0;
    const double l = std::log1p(r);
    const double e = b == 0.0 ? l : std::expm1(b * l) / b;
    scaled = ((1.0 + r) * e - r) / alpha;
  }
  const double y_pow = alpha == 1.0 ? y : std::pow(y, alpha);
  const double d = y_pow * scaled;
  // A large alpha and x >> y: y^a underflows (or the scaled form overflows)
  // while d is not negligible. In terms of x = y (1 + r) instead,
  // d = x^a [1 - (1 + r)^{-a} (1 + a r)] / (a (a - 1)), which for such
  // alphas does not cancel.
  if (r > 0.5 && alpha > 1.0 && (!(y_pow > 0.0) || !std::isfinite(scaled))) {
    const double x = y * (1.0 + r);
    return std::pow(x, alpha) * (1.0 - std::pow(1.0 + r, -alpha) * (1.0 + alpha * r)) /
           (alpha * (alpha - 1.0));
  }
  return d;
}

// d(x, 0): phi'(0) is finite only for a > 1.
inline double DivergenceFromZero(double alpha, double x) {
  if (x == 0.0) return 0.0;
  if (alpha <= 1.0) return kInf;
  return std::pow(x, alpha) / (alpha * (alpha - 1.0));
}

// Cost of dropping a token of probability p: d(0, p) primal, d(p, 0) dual.
inline double ZeroCost(Mode mode, double alpha, double p) {
  if (p == 0.0) return 0.0;
  if (mode == Mode::kPrimal) return DivergenceRel(alpha, p, -1.0);
  return DivergenceFromZero(alpha, p);
}

// ---------------------------------------------------------------------------
// Fixed-support renormalisation by bisection.

namespace internal {

// x^e with exact shortcuts for the exponents the common alphas produce
// (speed only: the oracle evaluates these maps V^2 * 100 times).
inline double Pow(double x, double e) {
  if (e == 0.0) return 1.0;
  if (e == 1.0) return x;
  if (e == 2.0) return x * x;
  if (e == 0.5) return std::sqrt(x);
  if (e == -0.5) return 1.0 / std::sqrt(x);
  if (e == -1.0) return 1.0 / x;
  return std::pow(x, e);
}

// Smallest x in [lo, hi] with f(x) >= target for increasing f, by plain
// bisection: 200 halvings, stopping once the midpoint no longer moves.
template <class F>
double Bisect(const F& f, double target, double lo, double hi) {
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (!(mid > lo && mid < hi)) break;
    if (f(mid) >= target) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

// Primal increment q - p at multiplier nu: phi'(q) = phi'(p) + nu gives
// q = (p^b + b nu)^{1/b}, b = a - 1 (q = p e^nu for b = 0). pb = p^b.
// Written as p * expm1(log1p(b nu / p^b) / b) so that it keeps its relative
// precision when nu is small or b is near 0.
inline double PrimalIncrement(double alpha, double p, double pb, double nu,
                              double expm1_nu) {
  const double b = alpha - 1.0;
  if (nu == 0.0) return 0.0;  // (also where p^b underflowed to 0)
  if (p == 0.0) return b > 0.0 ? Pow(b * nu, 1.0 / b) : 0.0;
  if (b == 0.0) return p * expm1_nu;
  if (b == 1.0) return nu;                                     // q = p + nu
  if (b == 2.0) return 2.0 * nu / (std::sqrt(p * p + 2.0 * nu) + p);  // sqrt(p^2 + 2nu)
  const double t = b * nu / pb;
  if (t <= -1.0) return kInf;  // alpha < 1: past the pole of the largest q
  return p * std::expm1(std::log1p(t) / b);
}

// Dual increment delta = q - p solving (p + delta)^{a-2} delta = nu, by
// bisection on delta (bracket found by doubling).
inline double DualIncrement(double alpha, double p, double nu) {
  if (nu == 0.0) return 0.0;
  const double e = alpha - 2.0;
  auto h = [&](double d) { return d == 0.0 ? 0.0 : Pow(p + d, e) * d; };
  double hi = p > 0.0 ? p : 1.0;
  for (int it = 0; it < 2100 && h(hi) < nu; ++it) hi *= 2.0;
  return Bisect(h, nu, 0.0, hi);
}

// The same increments parametrised by r, the gain of a zero-probability
// token (primal r = (b nu)^{1/b}, dual r = nu^{1/(a-1)}), for roots whose nu
// lies below the double range while r does not (a large alpha with a tiny
// remainder). Primal: q^b = p^b + r^b, written as max(p, r) (1 + t)^{1/b},
// t = (min / max)^b. Dual: (a-2) log(p + d) + log d = (a-1) log r by
// bisection on d.
inline double PrimalIncrementAtGain(double alpha, double p, double r) {
  const double b = alpha - 1.0;
  if (p == 0.0) return r;
  if (p >= r) return p * std::expm1(std::log1p(std::pow(r / p, b)) / b);
  return (r - p) + r * std::expm1(std::log1p(std::pow(p / r, b)) / b);
}

inline double DualIncrementAtGain(double alpha, double p, double r) {
  if (p == 0.0) return r;
  const double target = (alpha - 1.0) * std::log(r);
  auto h = [&](double d) { return d == 0.0 ? -kInf : (alpha - 2.0) * std::log(p + d) + std::log(d); };
  double hi = 1.0;
  for (int it = 0; it < 2100 && h(hi) < target; ++it) hi *= 2.0;
  // Bisect in log d: the increments span hundreds of decades.
  const double log_d = Bisect([&](double x) { return h(std::exp(x)); }, target, -745.0,
                              std::log(hi));
  return std::exp(log_d);
}

}  // namespace internal

struct Renormalised {
  double in_support = 0.0;  // sum over the support of the divergence
  double nu = 0.0;          // the multiplier
};

// Renormalises kept probabilities p[0..k) (any order, sum <= 1) into q[0..k).
inline Renormalised Renormalise(Mode mode, double alpha, const double* p,
                                size_t k, double* q) {
  using internal::Bisect;
  Renormalised out;
  if (k == 0) return out;
  double kept = 0.0;
  for (size_t i = 0; i < k; ++i) kept += p[i];
  const double rem = std::max(1.0 - kept, 0.0);
  const double b = alpha - 1.0;

  std::vector<double> pb(k);
  for (size_t i = 0; i < k; ++i) pb[i] = p[i] > 0.0 ? std::pow(p[i], b) : 0.0;

  // Sum of increments at multiplier nu; increasing in nu.
  auto added = [&](double nu) {
    double sum = 0.0;
    if (mode == Mode::kPrimal) {
      const double em1 = std::expm1(nu);
      for (size_t i = 0; i < k; ++i) {
        sum += internal::PrimalIncrement(alpha, p[i], pb[i], nu, em1);
      }
    } else {
      for (size_t i = 0; i < k; ++i) sum += internal::DualIncrement(alpha, p[i], nu);
    }
    return sum;
  };

  double nu = 0.0;
  if (rem > 0.0) {
    double hi = 1.0;
    for (int it = 0; it < 2100 && !(added(hi) >= rem); ++it) hi *= 2.0;
    nu = Bisect(added, rem, 0.0, hi);
  }
  out.nu = nu;
  // A nu below 1e-40 is not resolved by that bisection (200 halvings of
  // [0, hi]: ~1e-60 absolute), and a large alpha's can lie below the double
  // range: solve for r instead (internal::PrimalIncrementAtGain).
  const bool at_gain = rem > 0.0 && b >= 1.0 && nu < 1e-40;
  auto increment_at = [&](size_t i, double x) {
    return mode == Mode::kPrimal ? internal::PrimalIncrementAtGain(alpha, p[i], x)
                                 : internal::DualIncrementAtGain(alpha, p[i], x);
  };
  double r = 0.0;
  if (at_gain) {
    auto added_at = [&](double x) {
      double sum = 0.0;
      for (size_t i = 0; i < k; ++i) sum += increment_at(i, x);
      return sum;
    };
    r = Bisect(added_at, rem, 0.0, 1.0);
    out.nu = mode == Mode::kPrimal ? std::pow(r, b) / b : std::pow(r, b);
  }

  const double em1 = std::expm1(nu);
  for (size_t i = 0; i < k; ++i) {
    double delta;
    if (at_gain) {
      delta = increment_at(i, r);
    } else if (mode == Mode::kPrimal) {
      delta = internal::PrimalIncrement(alpha, p[i], pb[i], nu, em1);
    } else {
      delta = internal::DualIncrement(alpha, p[i], nu);
    }
    q[i] = p[i] + delta;
    double d;
    if (mode == Mode::kPrimal) {  // d(q, p)
      d = p[i] > 0.0 ? DivergenceRel(alpha, p[i], delta / p[i])
                     : DivergenceFromZero(alpha, q[i]);
    } else {  // d(p, q)
      d = q[i] > 0.0 ? DivergenceRel(alpha, q[i], -delta / q[i]) : 0.0;
    }
    out.in_support += d;
  }
  return out;
}

// Cost of an arbitrary support (mask[i] != 0 keeps token i), for brute force
// over all supports: R(S) + sum of zeroing costs outside S. q receives the
// renormalised distribution in original order (zeros off the support).
inline double SupportCost(Mode mode, double alpha, const std::vector<double>& p,
                          const std::vector<char>& mask, std::vector<double>* q) {
  std::vector<double> kept, kept_q;
  double dropped = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (mask[i]) {
      kept.push_back(p[i]);
    } else {
      dropped += ZeroCost(mode, alpha, p[i]);
    }
  }
  kept_q.resize(kept.size());
  const Renormalised r = Renormalise(mode, alpha, kept.data(), kept.size(), kept_q.data());
  if (q) {
    q->assign(p.size(), 0.0);
    for (size_t i = 0, j = 0; i < p.size(); ++i) {
      if (mask[i]) (*q)[i] = kept_q[j++];
    }
  }
  return r.in_support + dropped;
}

// ---------------------------------------------------------------------------
// All-k table and the lambda decision.

// Token ids sorted by descending probability, lower id first on ties.
inline std::vector<size_t> SortedOrder(const std::vector<double>& p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p[a] > p[b]; });
  return order;
}

struct Table {
  Mode mode = Mode::kPrimal;
  double alpha = 1.0;
  std::vector<double> p;       // original order
  std::vector<size_t> order;   // order[j] = token id of the j-th largest
  std::vector<double> sorted;  // p in sorted order
  std::vector<double> d;       // d[k-1] = D(k), k = 1..V
  std::vector<double> nu;      // nu[k-1] = multiplier of the top-k renormalisation
};

// D(k) for every k (lambda-independent; price once, decide many lambdas).
inline Table MakeTable(Mode mode, double alpha, const std::vector<double>& p) {
  Table t;
  t.mode = mode;
  t.alpha = alpha;
  t.p = p;
  t.order = SortedOrder(p);
  const size_t v = p.size();
  t.sorted.resize(v);
  for (size_t j = 0; j < v; ++j) t.sorted[j] = p[t.order[j]];
  // Zeroing costs of the tail, summed from the smallest up.
  std::vector<double> tail(v + 1, 0.0);
  for (size_t j = v; j-- > 0;) tail[j] = tail[j + 1] + ZeroCost(mode, alpha, t.sorted[j]);
  t.d.resize(v);
  t.nu.assign(v, 0.0);
  std::vector<double> q(v);
  for (size_t k = 1; k <= v; ++k) {
    if (tail[k] == kInf) {
      t.d[k - 1] = kInf;  // a positive probability would be dropped at infinite cost
      continue;
    }
    const Renormalised r = Renormalise(mode, alpha, t.sorted.data(), k, q.data());
    t.d[k - 1] = r.in_support + tail[k];
    t.nu[k - 1] = r.nu;
  }
  return t;
}

// q for the top-k support, in original token order.
inline std::vector<double> TopKQ(const Table& t, size_t k) {
  std::vector<double> qs(k), q(t.p.size(), 0.0);
  Renormalise(t.mode, t.alpha, t.sorted.data(), k, qs.data());
  for (size_t j = 0; j < k; ++j) q[t.order[j]] = qs[j];
  return q;
}

struct Decision {
  size_t k = 0;            // smallest argmin of C(k) = D(k) + lambda k
  double objective = 0.0;  // C(k)
  // min over k != k* of C(k) - C(k*): for convex C this is the distance from
  // lambda to the nearer threshold, min(tau_{k*-1} - lambda, lambda - tau_{k*}).
  double margin = kInf;
  // Numerical resolution of that gap: 1e-9 relative to lambda plus
  // Noise(k) + Noise(k*) (below).
  double tolerance = 0.0;
  // Some k != k* has C(k) - C(k*) within its resolution: either k may be
  // the right answer, and a test should not insist on k*. Exact ties
  // (lambda = 0 with zero probabilities) are ambiguous in this sense too,
  // although the smallest-k convention settles them.
  bool ambiguous = false;
  std::vector<double> q;   // original token order
};

// Resolution of D(k) in float64, two parts:
//  * 1e-11 relative: D is a sum of up to V terms with a relative error of a
//    few ulp each, so 1e-11 leaves a wide safety factor for V <= 4096;
//  * nu_k (k+1) eps, times 8: the kept mass s_k is a sum of k doubles, and
//    dD/ds = -nu. The input's own normalisation error counts here: with
//    sum p = 1 exactly, D(k) = 0 for every k >= #positive; in float64 the
//    residual 1 - s lets a zero-probability token (alpha > 1) lower D by
//    about nu * 1e-16, which decides nothing real.
inline double Noise(const Table& t, size_t k) {
  if (k < 1 || k > t.d.size() || !std::isfinite(t.d[k - 1])) return 0.0;
  const double eps = std::numeric_limits<double>::epsilon();
  return 1e-11 * std::fabs(t.d[k - 1]) +
         8.0 * static_cast<double>(k + 1) * eps * std::fabs(t.nu[k - 1]);
}

inline Decision Decide(const Table& t, double lambda) {
  Decision out;
  const size_t v = t.d.size();
  double best = kInf;
  for (size_t k = 1; k <= v; ++k) {
    const double c = t.d[k - 1] + lambda * static_cast<double>(k);
    if (c < best) {
      best = c;
      out.k = k;
    }
  }
  if (out.k == 0) out.k = v;  // every C infinite (not reachable for valid p)
  out.objective = best;
  // Ambiguous when some other k is within the combined resolution of the
  // two costs: then the float64 evidence cannot tell which is smaller.
  for (size_t k = 1; k <= v; ++k) {
    if (k == out.k) continue;
    const double gap = t.d[k - 1] + lambda * static_cast<double>(k) - best;
    const double tol = 1e-9 * lambda + Noise(t, k) + Noise(t, out.k);
    if (gap < out.margin) {
      out.margin = gap;
      out.tolerance = tol;
    }
    if (!(gap > tol)) out.ambiguous = true;
  }
  out.q = TopKQ(t, out.k);
  return out;
}

// tau_k = D(k) - D(k+1) for k = 1..V-1 (infinite where D(k) is).
inline std::vector<double> Taus(const Table& t) {
  std::vector<double> tau;
  for (size_t k = 1; k < t.d.size(); ++k) tau.push_back(t.d[k - 1] - t.d[k]);
  return tau;
}

}  // namespace bregman_oracle
