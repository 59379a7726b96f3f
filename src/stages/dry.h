// DRY ("Don't Repeat Yourself", by p-e-w; text-generation-webui PR #5677):
// penalises the tokens that would extend a repeat of the end of the history.
// Semantics of llama.cpp's port (llama_sampler_dry_apply, itself from
// koboldcpp), with sequence breakers given as token ids. See docs/samplers.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct DryParams {
  float multiplier = 0.0f;     // 0: off
  float base = 1.75f;          // growth per token beyond allowed_length; < 1: off
  int32_t allowed_length = 2;  // repeats shorter than this are free
  int32_t last_n = -1;         // window: the last last_n tokens; -1: the whole
                               // history; 0: off
  const int32_t* breakers = nullptr;  // sequence-breaker token ids
  size_t n_breakers = 0;
};

// Rule: let W be the window (the last min(last_n, history_len) tokens of
// ctx.history; last_n < 0: all of it), w its length. For each position j < w-1
// let L_j be the length of the longest common suffix of W[0..j] and W that
// contains no breaker token (a breaker ends every match). If
// L_j >= allowed_length, the token W[j+1] would extend that repeat; each
// candidate token t that is not a breaker gets, with L(t) the largest such
// L_j over its occurrences W[j+1] == t,
//   l -= multiplier * base^min(L(t) - allowed_length, max_exponent)
// where max_exponent = (int)(88.7228391f / logf(base)) when base > 1.000001
// (llama.cpp's float-overflow clamp; no clamp otherwise). The power is taken
// in double and the penalty rounded to float, as llama.cpp's std::pow(float,
// int) does.
// Boundary (llama.cpp): off when multiplier == 0, base < 1 (or NaN) or
// last_n == 0; nothing happens when w <= allowed_length, or when fewer than
// allowed_length tokens follow the last breaker of W. History tokens outside
// [0, vocab) still take part in matching but are never edited.
// Differences from llama.cpp: breakers are token ids (no tokenizer here), so
// llama.cpp's multi-token breaker strings and its "token contains the
// breaker text" expansion have no equivalent; last_n < -1 means the whole
// history (llama.cpp: off).
// Complexity: O(w + n_breakers * (breaker scan + edited tokens)): match
// lengths by the Z-algorithm on the reversed window (linear), storing only
// the values that later lookups can need (at most min(w, allowed_length +
// max_exponent) ints in ws.stage_i32, so a history longer than the vocabulary
// is fine); should even that exceed the scratch, a direct suffix scan,
// O(w * that bound), is used instead. Longest repeat per token in
// ws.stage_f64, indexed by token and initialised only where read. No
// allocation.
void ApplyDry(Candidates& c, const DryParams& p, Workspace& ws, const StageContext& ctx);

}  // namespace bd
