// XTC, "exclude top choices" (p-e-w, text-generation-webui PR #6335): with
// some probability, remove every sufficiently probable token but the least
// probable of them, steering away from the most predictable continuations.
// Semantics of llama.cpp's llama_sample_xtc_apply (src/llama-sampling.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct XtcParams {
  float probability = 0.0f;  // chance of acting at a step; <= 0: off
  float threshold = 0.1f;    // p >= threshold marks a "top choice"; > 0.5: off
  size_t min_keep = 1;
};

// XTC's own random stream: its uniform for a step is
// UniformDraw(ctx.seed ^ kXtcSalt, ctx.step), independent of the final draw.
constexpr uint64_t kXtcSalt = 0x7854C3A5D1E92F0Bull;

// With u = UniformDraw(ctx.seed ^ kXtcSalt, ctx.step): when u <= probability
// (llama.cpp skips when its draw is > probability), let Q = {candidates with
// p_i >= threshold}, p = softmax at the current temperature. If |Q| >= 2,
// removes every token of Q except its least probable one (the last of Q in
// candidate order: lowest logit, ties the highest id), provided at least
// min_keep candidates remain; otherwise nothing is removed (llama.cpp: `size -
// pos_last >= min_keep`, all or nothing). No-op when probability <= 0,
// threshold > 0.5 (at most one token can reach it; llama.cpp's documented
// switch-off) or fewer than two candidates. threshold <= 0 puts every
// candidate in Q. Boundary: p_i == threshold is in Q (tested exactly in logit
// space). Cost: one SIMD exp-sum pass, one count pass and two plain passes
// (find the last of Q, drop the rest); no sort.
void ApplyXtc(Candidates& c, const XtcParams& p, Workspace& ws, const StageContext& ctx);

}  // namespace bd
