// No repeated n-grams: Hugging Face's NoRepeatNGramLogitsProcessor
// (transformers generation/logits_process.py, _get_ngrams /
// _calc_banned_ngram_tokens, itself copied from fairseq's beam search).
// See docs/samplers.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct NoRepeatNgramParams {
  int32_t size = 0;  // n: every n-gram may occur once; 0 (or less): off
};

// Rule (HF): with h = ctx.history (length L) and n = size, let the prefix be
// the last n - 1 tokens of h. Every earlier n-gram h[i..i+n) (0 <= i <= L-n)
// whose first n - 1 tokens equal the prefix bans its last token h[i+n-1]
// (logit -inf), since emitting it would repeat that n-gram.
// Boundary: nothing is banned while L + 1 < n (HF's cur_len + 1 <
// ngram_size), nor when L + 1 == n (no complete n-gram yet); n == 1 bans
// every token of the history. Banned tokens outside [0, vocab) are skipped.
// Banning every candidate leaves c.Count() == 0, which the decoder reports.
// Complexity: O(L) for any n (the Z-algorithm over the reversed history,
// stages/reverse_z.h), plus O(Count()) on a list (ws.stage_i32 as a mark
// array over the list's ids). Scratch: ws.history_z of
// NoRepeatNgramScratch(p, L) int32, grown only when a call needs more than
// any before (no allocation in steady state), no map of n-grams.
void ApplyNoRepeatNgram(Candidates& c, const NoRepeatNgramParams& p, Workspace& ws,
                        const StageContext& ctx);

// The int32 scratch ApplyNoRepeatNgram needs for a history of history_len
// tokens: n - 1 when n >= 2 and the history holds a prefix, else 0.
size_t NoRepeatNgramScratch(const NoRepeatNgramParams& p, size_t history_len);

}  // namespace bd
