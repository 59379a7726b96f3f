// The stages of the chain, each a small function over the shared candidate
// set (the apply() of llama.cpp's llama_sampler_i). Each documents its rule
// and boundary in docs/samplers.md; the order they run in is chain.cc's
// RunStages. The truncations defined here (top-k, top-p, min-p, temperature,
// Bregman) are the original ones; the others have a header each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bregman/bregman.h"
#include "candidates.h"
#include "stages/dry.h"
#include "stages/dynamic_temperature.h"
#include "stages/epsilon_eta.h"
#include "stages/adaptive_p.h"
#include "stages/logit_bias.h"
#include "stages/mirostat.h"
#include "stages/no_repeat_ngram.h"
#include "stages/p_less.h"
#include "stages/penalties.h"
#include "stages/top_h.h"
#include "stages/top_n_sigma.h"
#include "stages/typical.h"
#include "stages/xtc.h"
#include "workspace.h"

namespace bd {

// Keeps the k most probable (ties: lower id first); k >= Count() is a no-op.
void ApplyTopK(Candidates& c, size_t k, Workspace& ws);

// Keeps the smallest most-probable prefix whose mass reaches p (llama.cpp;
// reached means >= p within 1e-6 relative, so exact prefix sums written as
// float32 logits stop where the arithmetic says), and at least min_keep.
// hint (optional): where a cut leaves the draw its exps (DrawHint::kListExps)
// or, with draw_follows (StageContext::draw_follows), a large nucleus on the
// row as a band of it (DrawHint::kRowBand); left as it was otherwise.
void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws,
               bool draw_follows = false, DrawHint* hint = nullptr);

// Keeps the candidates with logit >= t, or the top min_keep when fewer pass:
// one SIMD count pass, then one gather (or nothing when all pass). The rule
// under min-p, epsilon, eta and mirostat.
void KeepLogitAtLeast(Candidates& c, float t, size_t min_keep, Workspace& ws);

// Keeps p_i >= min_p * p_max, i.e. logit_i >= max + T log(min_p) (llama.cpp),
// and at least min_keep.
void ApplyMinP(Candidates& c, float min_p, size_t min_keep, Workspace& ws);

// Tempers the distribution: p_i proportional to exp(l_i / t) from here on
// (stored as a factor; the logits and their order are untouched).
void ApplyTemperature(Candidates& c, float t);

// Sparse Bregman decoding of p = softmax(candidate logits). Leaves the
// renormalised q in c.probs (probs_valid) and returns the objective. With
// logits_needed the list's logits become log q (temperature 1) for stages
// that follow; without (the chain's last stage: the draw and the output read
// c.probs only) they keep their values, and the pass of logs is skipped.
// Records its sorted prefix in ws.bregman.probes (BregmanProbes).
double ApplyBregman(Candidates& c, const BregmanParams& params, Workspace& ws,
                    bool want_objective = true, bool logits_needed = true);

}  // namespace bd
