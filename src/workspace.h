// All scratch memory of a decoder, reused across calls: buffers grow to the
// largest vocabulary seen and are never freed or reallocated afterwards, so a
// steady-state decode performs no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bregman/bregman.h"
#include "candidates.h"

namespace bd {

// Switches between a stage's fast path and the plain path it stands in for.
// Each fast path gives the plain path's result, bit for bit (the tests run
// both and compare); the defaults are the library's behaviour. Only tests
// change them (src/test_hooks.h).
struct StageTuning {
  // top-p's row prefilter: a large row's nucleus cut from a histogram of
  // the row's top alone, where a sample says the top holds the boundary
  // (TopPPrefilter, and its top gathered by the exp pass). Off: the row's
  // histogram.
  bool top_p_prefilter = true;
  // top-p's ring: a large nucleus bracketed by a ring of buckets around a
  // sampled boundary (TopPRing, and the ring gathered by the exp pass).
  // Off: the row's histogram.
  bool top_p_ring = true;
  // typical's row cut in SIMD band passes (KeepRowBand). Off: the general
  // walk, which gathers and classifies every candidate in the bracket.
  bool typical_row_bands = true;
  // typical's first bracket from a histogram of a sampled distance band or
  // ring (SampleBand). Off: from a histogram of every candidate.
  bool typical_histogram_bands = true;
  // With typical_histogram_bands: a fixed ring of buckets [first, limit)
  // (first 0: a band from the centre) instead of the sampled one; limit 0
  // takes the sampled band or ring. Exercises the bands and rings that miss.
  uint32_t typical_forced_ring_first = 0;
  uint32_t typical_forced_ring_limit = 0;
  // The draw weighs a stage's kept list (or band) by the exps the stage
  // computed (DrawHint::exps). Off: recomputes them.
  bool reuse_list_exps = true;
};

// Counts of the paths the stages took, accumulated over the workspace's
// life: which fast path decided a cut and which fell back. The library only
// increments them; tests read them (src/test_hooks.h).
struct StageProbes {
  size_t top_p_prefilter_hits = 0;    // cuts the prefilter's top decided
  size_t top_p_ring_hits = 0;         // rings that held the boundary
  size_t top_p_ring_misses = 0;       // rings that did not (the row's histogram then)
  size_t top_p_rings_before_exps = 0;         // rings gathered by the exp pass
  size_t top_p_rings_before_exps_missed = 0;  // ... of which missed the boundary
  size_t top_p_prefilters_before_exps = 0;         // prefilter tops gathered by the exp pass
  size_t top_p_prefilters_before_exps_missed = 0;  // ... of which missed the boundary
  size_t typical_row_band_hits = 0;           // row cuts decided by KeepRowBand
  size_t typical_histogram_band_hits = 0;     // band or ring histograms that held the stop
  size_t typical_histogram_band_misses = 0;   // bands that fell short (completed by every bucket)
  size_t typical_histogram_reach_misses = 0;  // sampled reaches short of the stop (full reach again)
  size_t typical_histogram_rings = 0;         // histograms over a ring
  size_t typical_histogram_ring_misses = 0;   // rings with the stop in their hole (every bucket then)
  size_t typical_band_list_cuts = 0;          // row cuts taken from the band's gathered tokens
};

struct Workspace {
  std::vector<float> row;        // working copy of the logits row (made on the first edit)
  std::vector<float> block_max;  // the row's per-block maxima (ScanRow)
  std::vector<float> block_sums; // the exp pass's per-block sums (the draw)
  std::vector<float> block_scratch;  // selection over block maxima
  std::vector<float> row_exp;    // the row's exps when a stage computed them (Candidates::row_exp)
  std::vector<double> hist_mass;     // top-p's mass histogram (kMassBuckets)
  std::vector<uint32_t> hist_count;
  std::vector<int32_t> ids;      // candidate ids (list or sorted prefix)
  std::vector<float> logits;     // candidate logits
  std::vector<int32_t> tmp_ids;  // selection scratch
  std::vector<float> tmp_logits;
  std::vector<uint64_t> keys;    // (logit, id) sort keys of survivors
  std::vector<uint64_t> sort_scratch;  // the radix sort's second buffer
  std::vector<uint32_t> radix_counts;  // its 16-bit digits' counts (vocab >= kWideRadixMin)
  std::vector<double> probs;     // explicit candidate probabilities
  std::vector<double> prefix_p;  // sorted probabilities handed to Bregman
  BregmanWorkspace bregman;
  // General scratch for stages (each sized vocab + slack by Reserve): a stage
  // may use them freely within its Apply, never across stages.
  std::vector<int32_t> stage_i32;
  std::vector<float> stage_f32;
  std::vector<double> stage_f64;
  // Adaptive-p's original probabilities, by token id (ApplyAdaptiveP writes
  // them, the decoder's EMA update reads the drawn token's); grown to the
  // vocabulary on adaptive-p's first use only.
  std::vector<double> adaptive_p_original;
  // Output of the last call.
  std::vector<int32_t> out_ids;
  std::vector<float> out_probs;
  std::vector<int32_t> top_ids;      // top_logprobs of the raw distribution (grown to the
                                     // largest top_logprobs asked, not to the vocabulary)
  std::vector<float> top_logprobs;
  // The stages' path switches and counters: per decoder, nothing shared.
  StageTuning tuning;
  StageProbes probes;

  // Makes room for a row of `vocab` tokens (no-op when already large enough).
  void Reserve(size_t vocab);
};

}  // namespace bd
