// Locally typical sampling (Meister et al. 2022, "Locally Typical Sampling",
// https://arxiv.org/abs/2202.00666): keep the tokens whose surprise is closest
// to the expected surprise (the entropy) until they hold mass p. Semantics of
// llama.cpp's llama_sampler_typical_apply (src/llama-sampling.cpp).
#pragma once

#include <cstddef>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct TypicalParams {
  float p = 1.0f;       // >= 1: off (llama.cpp's typical_p)
  size_t min_keep = 1;  // 0 acts as 1
};

// Rule (llama.cpp): p_i = softmax of the candidates at the current
// temperature, H = -sum p_i log p_i (nats), distance d_i = |-log p_i - H|;
// order the candidates by d_i ascending (ties: lower id first) and keep the
// shortest prefix whose cumulative mass exceeds p and that has at least
// min_keep tokens (all of them when none does).
//   Boundary: llama.cpp stops at `cum_sum > p`, strictly. "Exceeds" here means
// cum > p (1 + 1e-6): a prefix whose mass equals p in exact arithmetic does
// not stop (so {0.4, 0.2, 0.2, 0.2} with p = 0.4 keeps the three 0.2 tokens),
// whatever float rounding does to it. (HF's TypicalLogitsWarper stops at
// cum >= p instead; llama.cpp is followed.)
//   p >= 1 (or NaN) or a single candidate: no-op. p <= 0 keeps the min_keep
// most typical tokens. The survivors are left as a list: from a full row in
// ascending ids (the draw's canonical order: no sort before it), from a list
// in the list's own order (what is left of its sorted prefix stays its
// head); llama.cpp leaves them unsorted too.
// Method (no sort of the vocabulary): -log p_i - H = c* - x_i with x_i =
// (l_i - max) / T and c* = E_p[x], so d_i = |l_i - L| / T for the logit
// L = max + T c*, and every prefix of the distance order is a logit band
// [L - r, L + r]. One SIMD pass gives Z, c* and the weights e_i = exp(x_i);
// bisection on the radius r, with a SIMD pass per probe counting the band and
// summing its weights (kernels/moments.h BandSum), brackets the stopping
// point between a radius certainly short of it and one certainly past it
// (margins of 1e-6 Z around the float sums). The tokens inside the inner
// radius are kept unsorted; only the annulus between the two radii (about
// 1024 tokens) is sorted by double distance and walked. On the full row the
// inner tokens are not even gathered: their count and mass come from one
// BandSum, and the survivors (every token within the stop's distance, ties
// at it up to the stopping id) from one gather with their exps. If rounding
// defeats the margins, the walk continues outward with wider ones (at worst
// over the whole remaining tail), so the result is always a prefix of the
// distance order, cut where its mass (over Z) first exceeds p (1 + 1e-6).
// Precision: Z, c* and the inner band's mass on the row come from float-lane
// sums (~1e-7 relative; a list's are summed in double), so cuts within ~1e-7
// of a tie follow that arithmetic.
// Cost: one exp pass, ~15-30 cheap SIMD passes (compare + masked add), one
// gather, and a sort of the boundary annulus: about a tenth of a std::sort
// of the row. When p is within
// ~1e-5 of 1 the far tail itself is the boundary and must be ordered, so the
// sort grows to that tail.
// hint (optional): where a cut of the row leaves the draw its exps
// (DrawHint::kListExps) or, with ctx.draw_follows, a large cut as a band of
// the row (DrawHint::kRowBand); left as it was otherwise.
void ApplyTypical(Candidates& c, const TypicalParams& p, Workspace& ws, const StageContext& ctx,
                  DrawHint* hint = nullptr);

}  // namespace bd
