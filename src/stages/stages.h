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
#include "stages/logit_bias.h"
#include "stages/mirostat.h"
#include "stages/no_repeat_ngram.h"
#include "stages/penalties.h"
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
// draw_follows (StageContext::draw_follows): a large nucleus on the row may
// stay a band of it (Candidates::row_band).
void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws,
               bool draw_follows = false);

// Keeps the candidates with logit >= t, or the top min_keep when fewer pass:
// one SIMD count pass, then one gather (or nothing when all pass). The rule
// under min-p, epsilon, eta and mirostat.
void KeepLogitAtLeast(Candidates& c, float t, size_t min_keep, Workspace& ws);

// Tests only: switch off top-p's row prefilter (the result must not change;
// tests/native/test_decoder.cc compares), and how often it decided a cut.
void SetTopPPrefilterForTesting(bool on);
size_t TopPPrefilterHitsForTesting();
// Tests only: switch off top-p's ring (a large nucleus the prefilter
// refused: the first bracket from a ring of buckets around a sampled
// boundary instead of the row's histogram), and how often its ring held the
// boundary (hits) or not (misses: the row's histogram then).
void SetTopPRingForTesting(bool on);
size_t TopPRingHitsForTesting();
size_t TopPRingMissesForTesting();
// How often a ring was placed before the exp pass and gathered by it
// (ExpWriteGatherRing: a flat row's), and (missed) how often such a ring
// missed the boundary.
size_t TopPRingsBeforeExpsForTesting(size_t* missed = nullptr);
// The same for the prefilter's top gathered by the exp pass (peaked rows).
size_t TopPPrefiltersBeforeExpsForTesting(size_t* missed = nullptr);
// Typical's row cut by bands (SIMD passes) or by the general walk (gather
// and classify every candidate); the hits count the band path's successes.
void SetTypicalRowBandsForTesting(bool on);
size_t TypicalRowBandsHitsForTesting();
// Typical's first bracket from a histogram of a sampled distance band
// (default on; off: of every candidate), and how often the band held the
// walk's stop (hits) or fell short (misses: completed by the full histogram).
void SetTypicalHistogramBandsForTesting(bool on);
size_t TypicalHistogramBandHitsForTesting();
size_t TypicalHistogramBandMissesForTesting();
// A fixed band limit bucket instead of the sampled one (0: sampled), to
// exercise the bands that fall short.
void SetTypicalHistogramBandLimitForTesting(uint32_t limit);
// Row cuts that took their annulus and survivors from that band's tokens.
size_t TypicalBandListCutsForTesting();
// Histograms whose sampled reach fell short of the stop (then redone with
// the full reach).
size_t TypicalHistogramReachMissesForTesting();
// Histograms over a ring around the sampled stop (flat rows), and those
// whose stop lay inside the ring's hole (then redone over every bucket).
size_t TypicalHistogramRingsForTesting();
size_t TypicalHistogramRingMissesForTesting();
// A fixed ring [first, limit) instead of the sampled band or ring (limit 0:
// sampled), to exercise the rings whose stop lies in the hole or beyond.
void SetTypicalHistogramRingForTesting(uint32_t first, uint32_t limit);

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
