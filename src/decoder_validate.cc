// The checks that need the row: its size, and every token id the options or
// a sampler's state name against it. Kept apart from the chain so that a
// mismatch (a tokenizer for another model, a sampler reused with another
// vocabulary) is reported instead of silently ignored by the stages.
#include <cinttypes>

#include "decoder.h"
#include "size_limits.h"

namespace bd {
namespace {

// The first id of ids[0..n) outside [0, vocab), or n.
size_t FirstOutside(const int32_t* ids, size_t n, size_t vocab) {
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= vocab) return i;
  }
  return n;
}

}  // namespace

StatusCode Decoder::ValidateForRow(const DecodeOptions& o, size_t vocab,
                                   const SamplerState* state) {
  const StatusCode kRange = StatusCode::kRangeError;
  if (vocab == 0) return Fail(kRange, "logits must not be empty");
  if (vocab > kMaxVocab)
    return Fail(kRange, "logits: length %zu exceeds the largest vocabulary (%zu)", vocab,
                kMaxVocab);
  if (o.bregman_enabled && o.bregman.fixed_k > vocab)
    return Fail(kRange, "bregman.k (%zu) must be <= the vocabulary size %zu", o.bregman.fixed_k,
                vocab);
  struct List {
    const char* name;
    const int32_t* ids;
    size_t n;
  };
  const List lists[] = {
      {"history", o.history, o.history_len},
      {"logit_bias", o.logit_bias.ids, o.logit_bias.n},
      {"banned_tokens", o.logit_bias.banned, o.logit_bias.n_banned},
      {"allowed_tokens", o.logit_bias.allowed, o.logit_bias.n_allowed},
      {"dry_sequence_breakers", o.dry.breakers, o.dry.n_breakers},
  };
  for (const List& l : lists) {
    const size_t i = FirstOutside(l.ids, l.n, vocab);
    if (i < l.n)
      return Fail(kRange, "%s: token id %" PRId32 " is outside the vocabulary [0, %zu)", l.name,
                  l.ids[i], vocab);
  }
  const size_t mask_words = (vocab + 31) / 32;
  if (o.logit_bias.mask_words > 0 && o.logit_bias.mask_words != mask_words)
    return Fail(kRange,
                "allowed_mask: %zu words for a row of %zu tokens; it must hold ceil(%zu / 32) = %zu",
                o.logit_bias.mask_words, vocab, vocab, mask_words);
  // O(1): the state keeps the largest id it accepted.
  if (state != nullptr && state->history_len() > 0 && state->max_token() >= vocab)
    return Fail(kRange,
                "sampler: an accepted token id (%zu) is outside the vocabulary [0, %zu) "
                "(a sampler used with another vocabulary?)",
                state->max_token(), vocab);
  return StatusCode::kOk;
}

}  // namespace bd
