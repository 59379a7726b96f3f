#include "bregman/alpha_family.h"

#include <cmath>

#include "kernels/det_math.h"

namespace bd {
namespace bregman_detail {

double ScaledDivergence(double alpha, double log_ratio) {
  const double L = log_ratio;
  if (L == 0.0) return 0.0;
  // Series g = sum_{n>=2} S_{n-1} L^n / n!, S_m = 1 + a + ... + a^{m-1}:
  // the term ratio is below (a + 1)|L| / (n + 1) <= 1 / (n + 1) here, and for
  // L > 0 (primal) every term is positive, so there is no cancellation.
  if (std::fabs(L) * (alpha + 1.0) <= 1.0) {
    double power = L * L / 2.0;  // L^n / n!
    double s = 1.0;              // S_{n-1}
    double sum = power;
    for (int n = 3; n < 48; ++n) {
      power *= L / n;
      s = 1.0 + alpha * s;
      const double term = s * power;
      sum += term;
      if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
    }
    return sum;
  }
  // Direct form g = [e^L E - expm1(L)] / a with E = expm1((a-1)L)/(a-1): both
  // parts stay O(L) apart here, and E has no cancellation even as a -> 1.
  const double am1 = alpha - 1.0;
  const double e = am1 == 0.0 ? L : Expm1F64(am1 * L) / am1;
  return (ExpFullF64(L) * e - Expm1F64(L)) / alpha;
}

}  // namespace bregman_detail
}  // namespace bd
