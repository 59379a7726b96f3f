#include "decoder.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "kernels/threshold.h"
#include "rng.h"
#include "stages/stages.h"

namespace bd {

StatusCode Decoder::Fail(StatusCode code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(error_, sizeof(error_), fmt, args);
  va_end(args);
  return code;
}

StatusCode Decoder::Validate(const DecodeOptions& o) {
  const StatusCode kRange = StatusCode::kRangeError;
  if (!(o.temperature >= 0.0f) || !std::isfinite(o.temperature))
    return Fail(kRange, "temperature must be a finite number >= 0, got %g", o.temperature);
  if (o.top_k < 0) return Fail(kRange, "top_k must be >= 0 (0: off), got %d", o.top_k);
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
    return Fail(kRange, "top_p must be in (0, 1], got %g", o.top_p);
  if (!(o.min_p >= 0.0f && o.min_p <= 1.0f))
    return Fail(kRange, "min_p must be in [0, 1], got %g", o.min_p);
  if (o.min_keep < 0) return Fail(kRange, "min_keep must be >= 0, got %d", o.min_keep);
  if (o.bregman_enabled) {
    if (const char* msg = ValidateBregmanParams(o.bregman)) return Fail(kRange, "%s", msg);
  }
  return StatusCode::kOk;
}

StatusCode Decoder::RunChain(const float* logits, size_t vocab,
                             const DecodeOptions& o, Candidates& c) {
  error_[0] = '\0';
  objective_ = NAN;
  if (const StatusCode s = Validate(o); s != StatusCode::kOk) return s;
  if (vocab == 0) return Fail(StatusCode::kRangeError, "logits must not be empty");
  const RowScan scan = ScanRow(logits, vocab);
  if (scan.has_nan) return Fail(StatusCode::kRangeError, "logits contains NaN");
  if (scan.max == INFINITY)
    return Fail(StatusCode::kRangeError, "logits contains +Infinity");
  if (scan.max == -INFINITY)
    return Fail(StatusCode::kRangeError,
                "logits: every token is banned (all -Infinity)");

  // Greedy at 0, and where 1/T would overflow float (the limit is greedy).
  if (o.temperature == 0.0f || !std::isfinite(1.0f / o.temperature)) {
    // Greedy: the first maximum, whatever the truncations (all keep it).
    greedy_token_ = static_cast<int32_t>(FindFirstEqual(logits, vocab, scan.max));
    return StatusCode::kOk;
  }
  greedy_token_ = -1;

  ws_.Reserve(vocab);
  std::memcpy(ws_.row.data(), logits, vocab * sizeof(float));
  c = Candidates{};
  c.row = ws_.row.data();
  c.vocab = vocab;
  c.row_max = scan.max;
  c.row_finite = CountAtLeast(c.row, vocab, -FLT_MAX);
  c.ids = ws_.ids.data();
  c.logits = ws_.logits.data();

  // The default order (docs/samplers.md): llama.cpp's truncations, then
  // temperature, then the Bregman decoder on softmax(logits / T).
  const size_t min_keep = static_cast<size_t>(std::max<int32_t>(o.min_keep, 1));
  if (o.top_k > 0) ApplyTopK(c, std::max<size_t>(static_cast<size_t>(o.top_k), min_keep), ws_);
  if (o.top_p < 1.0f) ApplyTopP(c, o.top_p, min_keep, ws_);
  if (o.min_p > 0.0f) ApplyMinP(c, o.min_p, min_keep, ws_);
  ApplyTemperature(c, o.temperature);
  if (o.bregman_enabled) objective_ = ApplyBregman(c, o.bregman, ws_);
  return StatusCode::kOk;
}

void Decoder::ListProbs(Candidates& c) {
  if (c.probs_valid) return;
  const float max = CandidateMax(c);
  double z = 0.0;
  for (size_t i = 0; i < c.size; ++i) {
    ws_.probs[i] = std::exp((static_cast<double>(c.logits[i]) - max) / c.temperature);
    z += ws_.probs[i];
  }
  for (size_t i = 0; i < c.size; ++i) ws_.probs[i] /= z;
  c.probs = ws_.probs.data();
  c.probs_valid = true;
}

StatusCode Decoder::Decode(const float* logits, size_t vocab, const DecodeOptions& o) {
  Candidates c;
  if (const StatusCode s = RunChain(logits, vocab, o, c); s != StatusCode::kOk) return s;
  if (greedy_token_ >= 0) {
    ws_.Reserve(1);
    k_ = 1;
    ws_.out_ids[0] = greedy_token_;
    ws_.out_probs[0] = 1.0f;
    return StatusCode::kOk;
  }
  // The full distribution was asked for: the only path that sorts everything.
  EnsureSorted(c, c.Count(), ws_);
  TruncateToSorted(c, c.Count());
  ListProbs(c);
  k_ = c.size;
  for (size_t i = 0; i < k_; ++i) {
    ws_.out_ids[i] = c.ids[i];
    ws_.out_probs[i] = static_cast<float>(c.probs[i]);
  }
  return StatusCode::kOk;
}

StatusCode Decoder::Sample(const float* logits, size_t vocab, const DecodeOptions& o) {
  Candidates c;
  if (const StatusCode s = RunChain(logits, vocab, o, c); s != StatusCode::kOk) return s;
  if (greedy_token_ >= 0) {
    k_ = 1;
    token_ = greedy_token_;
    logprob_ = 0.0;
    return StatusCode::kOk;
  }
  const double u = UniformDraw(o.seed, o.step);
  if (!c.truncated) {
    // Inverse CDF over the row in id order: one exp pass, no sort.
    float* e = ws_.tmp_logits.data();
    const double z =
        ExpWrite(c.row, vocab, c.row_max, static_cast<float>(1.0 / c.temperature), e);
    const double target = u * z;
    double cum = 0.0;
    size_t pick = vocab;
    for (size_t i = 0; i < vocab; ++i) {
      if (e[i] <= 0.0f) continue;
      pick = i;
      cum += e[i];
      if (cum > target) break;
    }
    k_ = c.row_finite;
    token_ = static_cast<int32_t>(pick);
    logprob_ = std::log(static_cast<double>(e[pick])) - std::log(z);
    return StatusCode::kOk;
  }
  // A truncated list: walk it in the canonical sorted order, so every platform
  // (whatever its nth_element) draws the same token.
  EnsureSorted(c, c.size, ws_);
  ListProbs(c);
  double cum = 0.0;
  size_t pick = 0;
  for (size_t i = 0; i < c.size; ++i) {
    pick = i;
    cum += c.probs[i];
    if (cum > u) break;
  }
  k_ = c.size;
  token_ = c.ids[pick];
  logprob_ = std::log(c.probs[pick]);
  return StatusCode::kOk;
}

size_t Decoder::WorkspaceBytes() const {
  return ws_.row.capacity() * sizeof(float) + ws_.ids.capacity() * sizeof(int32_t) +
         ws_.logits.capacity() * sizeof(float) + ws_.tmp_ids.capacity() * sizeof(int32_t) +
         ws_.tmp_logits.capacity() * sizeof(float) + ws_.keys.capacity() * sizeof(uint64_t) +
         ws_.probs.capacity() * sizeof(double) + ws_.prefix_p.capacity() * sizeof(double) +
         ws_.stage_i32.capacity() * sizeof(int32_t) + ws_.stage_f32.capacity() * sizeof(float) +
         ws_.stage_f64.capacity() * sizeof(double) +
         ws_.out_ids.capacity() * sizeof(int32_t) + ws_.out_probs.capacity() * sizeof(float);
}

}  // namespace bd
