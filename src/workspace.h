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
  // Output of the last call.
  std::vector<int32_t> out_ids;
  std::vector<float> out_probs;
  std::vector<int32_t> top_ids;      // top_logprobs of the raw distribution (grown to the
                                     // largest top_logprobs asked, not to the vocabulary)
  std::vector<float> top_logprobs;

  // Makes room for a row of `vocab` tokens (no-op when already large enough).
  void Reserve(size_t vocab);
};

}  // namespace bd
