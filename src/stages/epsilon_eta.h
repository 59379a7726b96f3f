// Epsilon and eta sampling (Hewitt, Manning, Liang 2022, "Truncation Sampling
// as Language Model Desmoothing", https://arxiv.org/abs/2210.15191): remove
// the tokens whose probability is below an absolute cutoff (epsilon) or an
// entropy-dependent one (eta). Semantics of Hugging Face transformers'
// EpsilonLogitsWarper / EtaLogitsWarper (generation/logits_process.py);
// llama.cpp has neither.
#pragma once

#include <cstddef>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct EpsilonParams {
  float epsilon = 0.0f;  // <= 0: off (HF's epsilon_cutoff)
  size_t min_keep = 1;   // HF's min_tokens_to_keep (0 acts as 1)
};

struct EtaParams {
  float eta = 0.0f;     // <= 0: off (HF's eta_cutoff, its `epsilon` argument)
  size_t min_keep = 1;  // HF's min_tokens_to_keep (0 acts as 1)
};

// Keeps the candidates with p_i >= threshold, p = softmax of the candidates at
// the current temperature (p_i proportional to exp((l_i - max)/T)); when fewer
// than max(min_keep, 1) pass, keeps the max(min_keep, 1) most probable instead
// (ties: lower id first). threshold <= 0 (or NaN) or a single candidate: no-op.
// The test is done exactly in logit space: l_i >= max + T (log threshold +
// log Z), rounded up to the next float, so p_i == threshold is kept.
// Cost: one SIMD exp-sum pass, one count pass, one gather (KeepAtLeast) or a
// top-k threshold selection; no sort. The shared rule of epsilon, eta and
// mirostat.
void KeepProbabilityAtLeast(Candidates& c, double threshold, size_t min_keep, Workspace& ws);

// Epsilon sampling (HF EpsilonLogitsWarper): removes p_i < epsilon, keeping
// at least min_keep most probable. epsilon <= 0: no-op; epsilon > p_max keeps
// exactly max(min_keep, 1) tokens. Boundary: p_i == epsilon is kept.
// Deviation from HF: HF keeps every token tied with the min_keep-th logit
// (`scores < topk(scores, min_keep)[-1]` removes only strictly lower ones);
// here exactly min_keep are kept, lower id first, like every truncation of
// this library. Cost: see KeepProbabilityAtLeast.
void ApplyEpsilon(Candidates& c, const EpsilonParams& p, Workspace& ws, const StageContext& ctx);

// Eta sampling (HF EtaLogitsWarper): cutoff eta* = min(eta, sqrt(eta) *
// exp(-H)), H the entropy in nats of the candidates at the current
// temperature; removes p_i < eta*, keeping at least min_keep most probable
// (same boundary and min_keep rule as ApplyEpsilon). eta <= 0: no-op.
// Cost: one SIMD pass for the entropy (ExpMoments) plus KeepProbabilityAtLeast.
void ApplyEta(Candidates& c, const EtaParams& p, Workspace& ws, const StageContext& ctx);

}  // namespace bd
