// Adaptive-p (llama.cpp's llama_sampler_init_adaptive_p(target, decay, seed),
// https://github.com/ggml-org/llama.cpp/pull/17927): a final selector that
// favours the tokens whose probability lies near a target, steering the
// target with an exponential moving average (EMA) of the original
// probabilities of the tokens it drew, so that their average tracks it.
//
// Mapping onto llama.cpp, whose apply() also samples:
//   llama.cpp                                   here
//   softmax, original_probs = p                 ApplyAdaptiveP (p at the
//   adapted = clamp(2 t - ws/tw, 0, 1)            temperature so far)
//   logit_i = 5 - 10 d^2 / (1 + d),
//     d = |p_i - adapted| / 0.3
//   softmax, sample with its rng                the decoder's draw
//   accept(): ws = p_orig + decay ws,           AdaptivePUpdate(state, params,
//             tw = 1 + decay tw                   p_orig of the drawn token)
//   init / reset(): ws = t/(1-decay),           AdaptivePReset
//             tw = 1/(1-decay)
// The state is a sampler's (SamplerState); a stateless decode() or sample()
// reads the state as reset() leaves it, where the adapted target is the
// target itself.
#pragma once

#include <cstddef>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct AdaptivePParams {
  float target = -1.0f;  // < 0: off (llama.cpp); in [0, 1] otherwise
  float decay = 0.9f;    // EMA decay in [0, 0.99] (llama.cpp's default 0.90)
};

// The EMA, in float64 (llama.cpp keeps it in float).
struct AdaptivePState {
  double weighted_sum = 0.0;  // sum_i decay^i p_i, drawn tokens' original p
  double total_weight = 0.0;  // sum_i decay^i
};

// llama.cpp's init and reset: the EMA at its converged value at the target,
// ws = target / (1 - decay), tw = 1 / (1 - decay).
void AdaptivePReset(AdaptivePState& s, const AdaptivePParams& p);

// The target of this step: clamp(2 t - ws / tw, 0, 1), t = clamp(target, 0, 1)
// (t itself while tw == 0).
double AdaptivePTarget(const AdaptivePState& s, const AdaptivePParams& p);

// The transformed logit of a token of probability prob, for the adapted
// target: 5 - 10 d^2 / (1 + d), d = |prob - adapted| / 0.3 (quadratic near
// the target, linear in the tails).
double AdaptivePLogit(double prob, double adapted);

// Replaces the candidates' law: the candidates become a list (the whole row
// gathered when nothing truncated it) whose logits are AdaptivePLogit(p_i,
// adapted) at temperature 1, p the softmax of the candidates at the
// temperature so far (or their explicit probabilities, after Bregman).
// Leaves each candidate's p in original[id] (a row-aligned buffer of at
// least vocab entries) for AdaptivePUpdate. Off (target < 0): no-op.
// Cost: one gather of the row (when untruncated), one SIMD exp pass, one
// pass of the transform.
void ApplyAdaptiveP(Candidates& c, const AdaptivePParams& p, const AdaptivePState& s,
                    double* original, Workspace& ws, const StageContext& ctx);

// The EMA update with the drawn token's original probability.
void AdaptivePUpdate(AdaptivePState& s, const AdaptivePParams& p, double p_original);

}  // namespace bd
