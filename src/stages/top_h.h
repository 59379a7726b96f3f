// Top-H decoding (Baghaei Potraghloo, Azizi, Kundu, Pedram 2025, "Top-H
// Decoding: Adapting the Creativity and Coherence with Bounded Entropy in
// Text Generation", NeurIPS 2025, https://arxiv.org/abs/2509.02510): the
// greedy solution of entropy-constrained mass maximisation. Tokens are added
// most probable first while the entropy of the renormalised kept set stays
// within coefficient * H(p), H(p) the entropy of the whole distribution.
#pragma once

#include <cstddef>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct TopHParams {
  float coefficient = 0.0f;  // the paper's alpha, in (0, 1]; 0: off
  size_t min_keep = 1;       // the chain's min_keep (0 acts as 1)
};

// Keeps the longest most-probable prefix S_k (sorted: logit descending,
// lower id first) with H(q_k) <= coefficient * H(p), where p is the softmax of
// the candidates at the temperature so far and q_k = p restricted to S_k,
// renormalised; and at least max(min_keep, 1). H(q_k) grows with k (adding a
// token no more probable than any kept one raises the entropy of the
// renormalised set), so the greedy stops at the first k that breaks the
// bound, and that prefix is also the longest one within it. The first token
// always passes (H(q_1) = 0). Boundary: H(q_k) equal to the bound is kept.
// Entropies in nats; H(q_k) = log P_k - Q_k / P_k with P_k = sum e_i,
// Q_k = sum e_i x_i over the prefix, x_i = (l_i - max) / T, e_i = exp(x_i)
// (float64 per token). coefficient <= 0 or a single candidate: no-op;
// coefficient 1 keeps every candidate (the whole set's entropy is H(p)).
// Cost: one SIMD pass for H(p) (ExpMoments), then a walk over a sorted
// prefix grown 4x at a time from max(64, 2 e^bound) (a prefix within the
// bound has at least e^bound tokens: H(q_k) <= log k).
void ApplyTopH(Candidates& c, const TopHParams& p, Workspace& ws, const StageContext& ctx);

}  // namespace bd
