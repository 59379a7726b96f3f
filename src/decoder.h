// A decoder: one reusable workspace plus the default chain. Decode() returns
// the processed sparse distribution, Sample() one seeded draw from it. No
// allocation once the workspace has grown to the vocabulary size; bad input
// returns a StatusCode and a message naming the offending option.
#pragma once

#include <cstddef>
#include <cstdint>

#include "options.h"
#include "status.h"
#include "workspace.h"

namespace bd {

class Decoder {
 public:
  // Writes the surviving distribution: k ids (most probable first, ties lower
  // id first) and their probabilities (sum 1 within 1e-6).
  StatusCode Decode(const float* logits, size_t vocab, const DecodeOptions& o);
  // Draws one token with UniformDraw(o.seed, o.step).
  StatusCode Sample(const float* logits, size_t vocab, const DecodeOptions& o);

  const char* error() const { return error_; }
  size_t k() const { return k_; }
  const int32_t* ids() const { return ws_.out_ids.data(); }
  const float* probs() const { return ws_.out_probs.data(); }
  int32_t token() const { return token_; }
  double logprob() const { return logprob_; }
  // Bregman objective D(k) + lambda k of the last call (NaN without Bregman).
  double objective() const { return objective_; }

  // Bytes held by the workspace (for the flat-heap tests).
  size_t WorkspaceBytes() const;

 private:
  StatusCode Fail(StatusCode code, const char* fmt, ...);
  StatusCode Validate(const DecodeOptions& o);
  // Copies the row in, checks it and runs every stage except the final draw.
  StatusCode RunChain(const float* logits, size_t vocab, const DecodeOptions& o,
                      Candidates& c);
  // Probability of the i-th candidate of a truncated list (double).
  void ListProbs(Candidates& c);

  Workspace ws_;
  char error_[256] = {0};
  size_t k_ = 0;
  int32_t token_ = -1;
  double logprob_ = 0.0;
  double objective_ = 0.0;
  int32_t greedy_token_ = -1;
};

}  // namespace bd
