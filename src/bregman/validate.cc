// Parameter validation: the binding rules of spec section 0 / 5.4, with
// messages that name the offending field (they surface as RangeError).

#include <cmath>

#include "bregman/bregman.h"

namespace bd {

const char* ValidateBregmanParams(const BregmanParams& params) {
  const bool dual = params.divergence == BregmanDivergence::kDual;
  if (!dual && params.divergence != BregmanDivergence::kPrimal) {
    return "bregman.divergence must be 'primal' or 'dual'";
  }
  if (!(std::isfinite(params.alpha) && params.alpha > 0.0)) {
    return "bregman.alpha must be a finite number > 0";
  }
  // Adaptive first: the spec asks the reason (alpha <= 1 never truncates),
  // below alpha 1 too.
  if (dual && params.fixed_k == 0 && params.alpha <= 1.0) {
    return "bregman.alpha must be > 1 for adaptive dual decoding: with alpha <= 1 every "
           "truncation costs +infinity, so it never truncates (use a fixed k, with alpha >= 1)";
  }
  if (dual && params.alpha < 1.0) {
    // phi'(0) = -inf: the dual map is not even monotone there.
    return "bregman.alpha must be >= 1 for the dual divergence";
  }
  // Checked in fixed-k mode too, where they are unused: a NaN or negative
  // value is a caller bug either way.
  if (!(std::isfinite(params.lambda) && params.lambda >= 0.0)) {
    return "bregman.lambda must be a finite number >= 0";
  }
  if (params.k_min < 1) return "bregman.k_min must be >= 1";
  if (params.k_min > params.k_max) return "bregman.k_min must be <= bregman.k_max";
  return nullptr;
}

}  // namespace bd
