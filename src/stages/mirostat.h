// Mirostat 2.0 (Basu et al. 2021, "Mirostat: A Neural Text Decoding
// Algorithm that Directly Controls Perplexity", https://arxiv.org/abs/2007.14966):
// truncate to the tokens whose surprise is at most mu, then steer mu so the
// observed surprise tracks the target tau. Semantics of llama.cpp's
// llama_sampler_mirostat_v2_apply (src/llama-sampling.cpp).
//
// Mapping onto llama.cpp, whose apply() also samples and updates mu:
//   llama.cpp apply()                      here
//   softmax, drop surprise > mu (>= 1 left) ApplyMirostat (truncation only)
//   softmax again, sample with its rng      the decoder's final draw from the
//                                           renormalised survivors
//   mu -= eta * (-log2 p_sel - tau)         MirostatUpdate(state, params, p_sel)
//   reset(): mu = 2 tau                     MirostatReset
// p_sel is the selected token's probability in the truncated, renormalised
// distribution (the decoder's exp(logprob)), as llama.cpp's cur_p->data[idx].p
// after its second softmax. Stages between mirostat and the draw (none in the
// default order) would make the two differ.
#pragma once

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct MirostatParams {
  float tau = 5.0f;  // target surprise (bits)
  float eta = 0.1f;  // learning rate of mu
};

struct MirostatState {
  float mu = 10.0f;  // 2 * tau at reset
};

// Keeps the candidates with surprise -log2 p_i <= mu, i.e. p_i >= 2^-mu, p the
// softmax at the current temperature (llama.cpp runs it after `temp`, on the
// tempered logits); when none passes, keeps the most probable one (first
// maximum, lower id), as llama.cpp's `if (cur_p->size == 0) cur_p->size = 1`.
// Boundary: surprise == mu is kept (llama.cpp drops only `> mu`). A mu large
// enough that 2^-mu underflows keeps everything. Cost: one SIMD exp-sum pass,
// one count pass, one gather; no sort (see KeepProbabilityAtLeast).
void ApplyMirostat(Candidates& c, const MirostatParams& p, const MirostatState& s, Workspace& ws,
                   const StageContext& ctx);

// mu -= eta * (-log2(p_selected) - tau), p_selected in (0, 1] the selected
// token's probability in the truncated, renormalised distribution.
void MirostatUpdate(MirostatState& s, const MirostatParams& p, double p_selected);

// llama.cpp's reset: mu = 2 tau.
void MirostatReset(MirostatState& s, const MirostatParams& p);

}  // namespace bd
