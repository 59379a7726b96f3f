// Repetition, frequency and presence penalties over a window of the history:
// llama.cpp's `penalties` sampler (llama_sampler_penalties_apply), whose
// repetition rule is CTRL's (Keskar et al. 2019, arXiv:1909.05858) with the
// usual fix for negative logits, and whose frequency / presence terms are
// OpenAI's. See docs/samplers.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct PenaltyParams {
  float repetition = 1.0f;  // > 0; 1: no repetition penalty
  float frequency = 0.0f;   // subtracted once per occurrence
  float presence = 0.0f;    // subtracted once per token present
  int32_t last_n = 64;      // window: the last last_n tokens; -1: the whole
                            // history; 0: the stage is off
};

// Rule (llama.cpp, float32 arithmetic in the same order): over the window
// (the last min(last_n, history_len) tokens of ctx.history; last_n < 0: all
// of it), for each distinct token t with count n > 0 that is a candidate:
//   l = (l <= 0) ? l * repetition : l / repetition;
//   l -= n * frequency + presence;
// Boundary: off when last_n == 0 or (repetition == 1, frequency == 0,
// presence == 0), as in llama.cpp; an empty history changes nothing; a window
// longer than the history is the whole history. History tokens outside
// [0, vocab) are not candidates and are skipped. A result of -inf removes the
// token; one that overflows to +inf saturates at FLT_MAX (parameters are
// validated by the JS layer: repetition > 0, all finite).
// Complexity: O(window) on the full row (counts in ws.stage_i32, indexed by
// token and initialised only where read), O(window + Count()) on a list. No
// sort, no allocation.
void ApplyPenalties(Candidates& c, const PenaltyParams& p, Workspace& ws,
                    const StageContext& ctx);

}  // namespace bd
