// Top-n-sigma (Tang et al. 2024, "Top-nσ: Not All Logits Are You Need",
// https://arxiv.org/abs/2411.07641): keep the logits within n standard
// deviations of the maximum. Semantics of llama.cpp's
// llama_sampler_top_n_sigma_apply (src/llama-sampling.cpp).
#pragma once

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct TopNSigmaParams {
  float n = 0.0f;  // <= 0: off (llama.cpp: n <= 0 is a no-op since PR #13345)
};

// Keeps the candidates with logit l_i >= max - n * sigma, where max and sigma
// are the maximum and the population standard deviation (divide by the count)
// of the candidate logits; -inf (banned) tokens are not candidates and take no
// part, as in llama.cpp. No min_keep (llama.cpp has none): the maximum always
// survives, and all-equal logits (sigma = 0) keep every candidate.
// Temperature: llama.cpp computes this on the logits it holds, which are
// divided by T when a temperature stage ran before; max - n sigma scales by
// the same 1/T, so the survivors do not depend on T and this stage reads the
// untempered logits (c.temperature is left alone).
// n <= 0 (or NaN) or a single candidate: no-op. Boundary: l_i equal to the
// threshold (computed in double, compared exactly) is kept.
// Cost: two SIMD moment passes (mean, then centred variance), one count pass,
// one gather; no sort.
void ApplyTopNSigma(Candidates& c, const TopNSigmaParams& p, Workspace& ws,
                    const StageContext& ctx);

}  // namespace bd
