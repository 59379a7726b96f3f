// A decoder: one reusable workspace plus the chain. Decode() returns the
// processed sparse distribution, Sample() one seeded draw from it. No
// allocation once the workspace has grown to the vocabulary size; bad input
// returns a StatusCode and a message naming the offending option.
#pragma once

#include <cstddef>
#include <cstdint>

#include "options.h"
#include "sampler_state.h"
#include "status.h"
#include "workspace.h"

namespace bd {

struct Candidates;
struct DrawHint;
struct RowScan;

class Decoder {
 public:
  // Writes the surviving distribution: k ids (most probable first, ties lower
  // id first) and their probabilities (sum 1 within 1e-6). With a state, its
  // history and mirostat mu are read (not changed).
  StatusCode Decode(const float* logits, size_t vocab, const DecodeOptions& o,
                    const SamplerState* state = nullptr);
  // Draws one token with UniformDraw(o.seed, step), step = o.step, or the
  // state's counter. With a state, the token is accepted into it (history,
  // mirostat's mu) and the counter advances. With o.return_distribution,
  // ids()/probs() hold the distribution drawn from (k() of them).
  StatusCode Sample(const float* logits, size_t vocab, const DecodeOptions& o,
                    SamplerState* state = nullptr);

  // Validates options alone (as every call does first); sets error().
  StatusCode Check(const DecodeOptions& o) {
    error_[0] = '\0';
    return Validate(o);
  }
  // Validates options for a row of `vocab` tokens without the row: every
  // check a stateless call makes before it reads the row (the same error
  // first); sets error(). The WebGPU decoder asks it before any GPU work.
  StatusCode CheckForRow(const DecodeOptions& o, size_t vocab) {
    error_[0] = '\0';
    if (const StatusCode s = Validate(o); s != StatusCode::kOk) return s;
    return ValidateForRow(o, vocab, nullptr);
  }

  const char* error() const { return error_; }
  size_t k() const { return k_; }
  const int32_t* ids() const { return ws_.out_ids.data(); }
  const float* probs() const { return ws_.out_probs.data(); }
  int32_t token() const { return token_; }
  // log p(token) under the processed distribution, and under softmax(logits)
  // (the latter only with o.logprobs or o.top_logprobs; NaN otherwise).
  double logprob() const { return logprob_; }
  double raw_logprob() const { return raw_logprob_; }
  // The top_logprobs most probable tokens of softmax(logits) and their
  // log-probabilities (OpenAI's top_logprobs), most probable first.
  size_t top_count() const { return top_count_; }
  const int32_t* top_ids() const { return ws_.top_ids.data(); }
  const float* top_logprobs() const { return ws_.top_logprobs.data(); }
  // Bregman objective D(k) + lambda k of the last Decode (NaN without
  // Bregman, and after Sample, which skips the pass that prices the tail).
  double objective() const { return objective_; }

  // Whether the last Sample summed a stage's exps of the kept list instead
  // of recomputing them (a diagnostic: the tests check that both draw the
  // same token; StageTuning::reuse_list_exps turns the reuse off).
  bool draw_reused_exps() const { return draw_reused_exps_; }
  // Whether the last Sample drew from a band of the row, never gathered
  // (DrawHint::kRowBand; a diagnostic for the tests).
  bool drew_row_band() const { return drew_row_band_; }

  // Bytes held by the workspace (for the flat-heap tests).
  size_t WorkspaceBytes() const;

 private:
  StatusCode Fail(StatusCode code, const char* fmt, ...);
  StatusCode Validate(const DecodeOptions& o);
  // The checks that need the row's size: its bounds (size_limits.h) and every token
  // id in the options or the sampler's state (decoder_validate.cc).
  StatusCode ValidateForRow(const DecodeOptions& o, size_t vocab, const SamplerState* state);
  // Validates the options for the row, then its first scan (with the mask
  // when premask: MaskInFirstScan) into *scan; checks logit_bias's ids.
  StatusCode ScanAndCheckRow(const float* logits, size_t vocab, const DecodeOptions& o,
                             const SamplerState* state, bool premask, RowScan* scan);
  // softmax(logits)'s normaliser (raw_log_z_, with logprobs or top_logprobs)
  // and, with top_logprobs, its head, read before any stage edits the row
  // (it sorts c's lists: the chain starts afresh after it).
  void ReadRawDistribution(const float* logits, size_t vocab, const DecodeOptions& o,
                           float row_max, Candidates& c);
  // Checks the row, copies it in and runs every stage; leaves the survivors
  // in c (for greedy: the chosen token in greedy_token_).
  // sampling: Sample (the survivors go straight to a draw, StageContext::
  // draw_follows; no objective), else Decode. draw_hint (optional): what
  // the chain leaves the draw (ChainOutcome::draw_hint).
  StatusCode RunChain(bool sampling, const float* logits, size_t vocab,
                      const DecodeOptions& o, const SamplerState* state, uint64_t step,
                      Candidates& c, DrawHint* draw_hint = nullptr);
  void ListProbs(Candidates& c);
  // Writes the survivors to ids()/probs() (k() = their count), sorted most
  // probable first unless !sorted (then in the list's own order).
  void WriteDistribution(Candidates& c, bool sorted);

  // The tests' access to ws_'s tuning and probes (src/test_hooks.h).
  friend struct TestHooks;

  Workspace ws_;
  char error_[256] = {0};
  size_t k_ = 0;
  int32_t token_ = -1;
  double logprob_ = 0.0;
  double raw_logprob_ = 0.0;
  size_t top_count_ = 0;
  double objective_ = 0.0;
  int32_t greedy_token_ = -1;
  bool draw_reused_exps_ = false;
  bool drew_row_band_ = false;
  bool adaptive_p_ran_ = false;  // the last chain ran adaptive-p (its EMA updates)
  float raw_max_ = 0.0f;
  double raw_log_z_ = 0.0;
};

}  // namespace bd
