// Logit bias, banned tokens and an allowed set: llama.cpp's logit_bias
// sampler (additive bias per token id) plus the ban / allow lists of the
// OpenAI-style APIs. Edits of single logits; see docs/samplers.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct LogitBiasParams {
  // bias[i] is added to the logit of token ids[i] (n pairs).
  const int32_t* ids = nullptr;
  const float* bias = nullptr;
  size_t n = 0;
  // These tokens are removed (logit -inf).
  const int32_t* banned = nullptr;
  size_t n_banned = 0;
  // With restrict_to_allowed, every token not listed here is removed
  // (allowed is ignored otherwise; an empty list then removes everything).
  const int32_t* allowed = nullptr;
  size_t n_allowed = 0;
  bool restrict_to_allowed = false;
  // A packed allowed set (XGrammar's token bitmask layout): token t is
  // allowed when bit t % 32 of mask[t / 32] is set; every other token is
  // removed. Null (mask_words == 0): no mask. The decoder checks
  // mask_words == ceil(vocab / 32); bits at t >= vocab in the last word are
  // ignored. With restrict_to_allowed too, a token must pass both (the
  // intersection).
  const uint32_t* mask = nullptr;
  size_t mask_words = 0;
};

// Rule, in this order, on the current candidates:
//  1. logit[ids[i]] += bias[i] for i = 0..n-1 in order (a repeated id
//     accumulates, as llama.cpp's loop over its bias list does). A bias of
//     -inf removes the token; a sum that overflows to +inf saturates at
//     FLT_MAX.
//  2. logit[banned[j]] = -inf.
//  3. if restrict_to_allowed: logit[t] = -inf for every t not in allowed.
//  4. if mask: logit[t] = -inf for every t whose mask bit is clear.
// Boundary: ids (in any list) outside [0, vocab) and biases that are NaN or
// +inf are ignored (the JS layer rejects them first); a token that is not a
// candidate stays out (no edit brings it back). Removing every token
// leaves c.Count() == 0, which the decoder reports. Nothing to do (all lists
// empty, no restriction): returns at once.
// Complexity: O(n + n_banned) edits on the full row (plus one SIMD pass in
// FinishEdits); the allowed restriction costs one O(vocab) pass using
// ws.stage_i32 as a mark array; the mask costs one fused SIMD pass (MaskRow:
// the masked copy of the row and its scan, which also stands for
// FinishEdits'). On a list: O(Count() + n + n_banned + n_allowed), with
// ws.stage_i32 as an id -> position index, plus one bit test per entry for
// the mask. No allocation.
void ApplyLogitBias(Candidates& c, const LogitBiasParams& p, Workspace& ws,
                    const StageContext& ctx);

}  // namespace bd
