// p-less and p-less-norm sampling (Tan, Wu, Howard 2025, "p-less Sampling: A
// Robust Hyperparameter-Free Approach for LLM Decoding",
// https://arxiv.org/abs/2509.23234): keep the tokens at least as probable as
// the probability that two independent draws agree, then renormalise.
//   p-less:       keep p_i >= S,                S = sum_j p_j^2
//   p-less-norm:  keep p_i >= (V S - 1)/(V - 1)
// p is the softmax of the candidates at the temperature so far, V the size of
// the vocabulary (the row), as the paper and the authors' code
// (p_less_norm_decode: v = probs.size(-1)) define it.
#pragma once

#include <cstddef>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

enum class PLessMode : int { kOff = 0, kPLess = 1, kNorm = 2 };

struct PLessParams {
  PLessMode mode = PLessMode::kOff;  // JS p_less: false (off), true, 'norm'
  size_t min_keep = 1;               // the chain's min_keep (0 acts as 1)
};

// The threshold on p of the rule, from S = sum p^2 and the vocabulary size v:
// S (p-less) or (v S - 1)/(v - 1) (p-less-norm, <= S). The most probable
// token always passes (p_max >= S, since S = sum p_j p_j <= p_max).
double PLessThreshold(PLessMode mode, double sum_p2, size_t v);

// Keeps the candidates with p_i >= the threshold, and at least
// max(min_keep, 1) (the most probable, lower id first). Boundary: p_i equal
// to the threshold is kept; the test is done in logit space,
// l_i >= max + T (log threshold + log Z), rounded up to the next float, as
// epsilon's. A threshold <= 0 (p-less-norm of a uniform row) keeps every
// candidate. Off, or a single candidate: no-op.
// Cost: one SIMD exp pass (Z = sum e_i and sum e_i^2, ExpSquares), one count
// pass, one gather; no sort.
void ApplyPLess(Candidates& c, const PLessParams& p, Workspace& ws, const StageContext& ctx);

}  // namespace bd
