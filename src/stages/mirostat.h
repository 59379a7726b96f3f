// Mirostat (Basu et al. 2021, "Mirostat: A Neural Text Decoding Algorithm
// that Directly Controls Perplexity", https://arxiv.org/abs/2007.14966), both
// versions llama.cpp offers: 2.0 truncates to the tokens whose surprise is at
// most mu; 1.0 (the paper's Algorithm 1) to the top k, k from mu and Zipf's
// exponent estimated on the head. Either then steers mu so the observed
// surprise tracks the target tau. Semantics of llama.cpp's
// llama_sampler_mirostat_v2_apply and llama_sampler_mirostat_apply
// (src/llama-sampling.cpp).
//
// Mapping onto llama.cpp, whose apply() also samples and updates mu:
//   llama.cpp apply()                      here
//   softmax, drop surprise > mu (>= 1 left) ApplyMirostat (truncation only)
//   (1.0: softmax, top max(int(k), 1))      ApplyMirostatV1
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
  int version = 2;   // 2: Mirostat 2.0, 1: Mirostat 1.0
};

// Mirostat 1.0's head: Zipf's exponent is estimated on the m most probable
// tokens (llama.cpp's common sampler passes m = 100, the paper's value).
constexpr size_t kMirostatHead = 100;

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

// Mirostat 1.0: with p the softmax at the current temperature, sorted, and
// h = min(kMirostatHead, count) its head, Zipf's exponent by least squares
//   s = sum t_i b_i / sum t_i^2,  t_i = ln((i+2)/(i+1)),  b_i = ln(p_i / p_{i+1}),
// over i < h - 1, then, with e = s - 1 and V the vocabulary (the row's size),
//   k = (e 2^mu / (1 - V^-e))^(1/s)
// (at e = 0 its limit, (2^mu / ln V)^(1/s)); keeps the top max(floor(k), 1)
// (ties lower id first), all of them when k is not below the count (or is
// NaN). In float64 from the logits (b_i = (l_i - l_{i+1}) / T); llama.cpp
// computes in float from the probabilities, so a k within float rounding of
// an integer may floor the other way there.
void ApplyMirostatV1(Candidates& c, const MirostatParams& p, const MirostatState& s, Workspace& ws,
                     const StageContext& ctx);

// Mirostat 1.0's k from the estimated exponent s, mu and the vocabulary size.
double MirostatV1K(double s, double mu, size_t vocab);

// mu -= eta * (-log2(p_selected) - tau), p_selected in (0, 1] the selected
// token's probability in the truncated, renormalised distribution.
void MirostatUpdate(MirostatState& s, const MirostatParams& p, double p_selected);

// llama.cpp's reset: mu = 2 tau.
void MirostatReset(MirostatState& s, const MirostatParams& p);

}  // namespace bd
