#include "decoder.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "chain.h"
#include "draw.h"
#include "kernels/blocks.h"
#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/order_free_sum.h"
#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "kernels/threshold.h"
#include "rng.h"
#include "size_limits.h"
#include "stages/registry.h"
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
  if (o.min_keep < 0) return Fail(kRange, "min_keep must be >= 0, got %d", o.min_keep);
  if (o.top_logprobs < 0) return Fail(kRange, "top_logprobs must be >= 0, got %d", o.top_logprobs);
  // Every stage's parameters, whether the order runs it or not.
  Complaint why(error_, sizeof(error_));
  for (size_t id = 0; id < static_cast<size_t>(StageId::kCount); ++id) {
    if (!Stage(static_cast<StageId>(id)).valid(o, why)) return kRange;
  }
  return StatusCode::kOk;
}

namespace {

// Whether the packed mask (allowed_mask) is applied in the row's first scan
// (MaskRow instead of ScanRow): the logit_bias stage that applies it is the
// first stage of the chain that acts, so no stage sees the row before it,
// and no raw log-probability is asked for (those read the unmasked row's
// maximum and head). The candidates it leaves are the stage's, bit for bit.
bool MaskInFirstScan(const DecodeOptions& o, bool greedy) {
  if (o.logit_bias.mask_words == 0 || o.logprobs || o.top_logprobs > 0) return false;
  const StageId* order = o.order_len ? o.order : kDefaultOrder;
  const size_t n = o.order_len ? o.order_len : sizeof(kDefaultOrder) / sizeof(kDefaultOrder[0]);
  for (size_t s = 0; s < n; ++s) {
    if (order[s] == StageId::kLogitBias) return true;
    if (order[s] < StageId::kCount && Stage(order[s]).acts(o, greedy)) return false;
  }
  return false;
}

// The one fused pass over the caller's row: max, NaN, finite count and the
// block maxima every later threshold pass uses to skip blocks; with a mask
// (MaskInFirstScan) also the masked copy in `copy`, whose statistics it
// returns. Returns the row's error, or null.
const char* FirstScan(const float* logits, size_t vocab, const uint32_t* mask, float* copy,
                      float* block_max, RowScan* scan) {
  bool nan, pos_inf;
  size_t finite;
  if (mask != nullptr) {
    const MaskedRowScan m = MaskRow(logits, mask, copy, vocab, block_max);
    *scan = m.masked;
    nan = m.raw_has_nan;
    pos_inf = m.raw_has_pos_inf;
    finite = m.raw_finite;
  } else {
    *scan = ScanRow(logits, vocab, block_max);
    nan = scan->has_nan;
    pos_inf = scan->max == INFINITY;
    finite = scan->finite;
  }
  if (nan) return "logits contains NaN";
  if (pos_inf) return "logits contains +Infinity";
  if (finite == 0) return "logits: every token is banned (all -Infinity)";
  return nullptr;
}

}  // namespace

namespace {

// The candidates before any stage: the whole row, either the caller's (no
// copy: the first stage that edits it, penalties, biases, bans or XTC,
// copies it into the workspace, MutableRow) or the masked copy a mask
// applied in the first scan left in the workspace.
void StartCandidates(Candidates& c, const float* logits, bool premask, size_t vocab,
                     const RowScan& scan, Workspace& ws) {
  c = Candidates{};
  c.row = premask ? ws.row.data() : const_cast<float*>(logits);
  c.own_row = ws.row.data();
  c.row_borrowed = !premask;
  c.vocab = vocab;
  c.row_max = scan.max;
  c.row_finite = scan.finite;
  c.block_max = ws.block_max.data();
  c.blocks_valid = true;
  c.ids = ws.ids.data();
  c.logits = ws.logits.data();
}

// What the stages read beside the candidates: the history (the sampler's,
// or the call's), the seed and step of random stages, and what follows the
// chain (a draw, or decode()'s objective).
StageContext ChainContext(const DecodeOptions& o, const SamplerState* state, uint64_t step,
                          bool sampling) {
  StageContext ctx;
  ctx.history = state ? state->history() : o.history;
  ctx.history_len = state ? state->history_len() : o.history_len;
  ctx.seed = o.seed;
  ctx.step = step;
  ctx.want_objective = !sampling;
  ctx.draw_follows = sampling;
  return ctx;
}

}  // namespace

StatusCode Decoder::ScanAndCheckRow(const float* logits, size_t vocab, const DecodeOptions& o,
                                    const SamplerState* state, bool premask, RowScan* scan) {
  if (const StatusCode s = Validate(o); s != StatusCode::kOk) return s;
  if (const StatusCode s = ValidateForRow(o, vocab, state); s != StatusCode::kOk) return s;
  ws_.Reserve(vocab);
  if (const char* e = FirstScan(logits, vocab, premask ? o.logit_bias.mask : nullptr,
                                ws_.row.data(), ws_.block_max.data(), scan))
    return Fail(StatusCode::kRangeError, "%s", e);
  for (size_t i = 0; i < o.logit_bias.n; ++i) {
    if (o.logit_bias.ids[i] < 0 || static_cast<size_t>(o.logit_bias.ids[i]) >= vocab)
      return Fail(StatusCode::kRangeError, "logit_bias: token id %d is outside [0, %zu)",
                  o.logit_bias.ids[i], vocab);
  }
  return StatusCode::kOk;
}

void Decoder::ReadRawDistribution(const float* logits, size_t vocab, const DecodeOptions& o,
                                  float row_max, Candidates& c) {
  raw_max_ = row_max;  // the raw row's: premask never runs with logprobs
  // softmax(logits)'s normaliser costs a SIMD pass: only when asked for.
  raw_log_z_ = (o.logprobs || o.top_logprobs > 0)
                   ? LogF64(ExpSum(logits, vocab, row_max, 1.0f))
                   : NAN;
  if (o.top_logprobs <= 0) return;
  top_count_ = std::min(static_cast<size_t>(o.top_logprobs), c.row_finite);
  // Sized by the largest top_logprobs asked for (usually a handful), not by
  // the vocabulary: grown once, then reused.
  if (ws_.top_ids.size() < top_count_) {
    ws_.top_ids.resize(top_count_);
    ws_.top_logprobs.resize(top_count_);
  }
  EnsureSorted(c, top_count_, ws_);
  for (size_t i = 0; i < top_count_; ++i) {
    ws_.top_ids[i] = c.ids[i];
    ws_.top_logprobs[i] = static_cast<float>(c.logits[i] - raw_max_ - raw_log_z_);
  }
}

StatusCode Decoder::RunChain(bool sampling, const float* logits, size_t vocab,
                             const DecodeOptions& o,
                             const SamplerState* state, uint64_t step, Candidates& c,
                             DrawHint* draw_hint) {
  error_[0] = '\0';
  objective_ = NAN;
  top_count_ = 0;
  // Greedy at 0, and where 1/T would overflow float (the limit is greedy).
  const bool greedy = o.temperature == 0.0f || !std::isfinite(1.0f / o.temperature);
  const bool premask = MaskInFirstScan(o, greedy);
  RowScan scan;
  if (const StatusCode s = ScanAndCheckRow(logits, vocab, o, state, premask, &scan);
      s != StatusCode::kOk) {
    return s;
  }
  StartCandidates(c, logits, premask, vocab, scan, ws_);
  ReadRawDistribution(logits, vocab, o, scan.max, c);
  // The raw head's sort reordered the lists: the stages start afresh.
  if (o.top_logprobs > 0) StartCandidates(c, logits, premask, vocab, scan, ws_);

  // The mask applied in the first scan is not applied again.
  DecodeOptions unmasked;
  if (premask) {
    unmasked = o;
    unmasked.logit_bias.mask = nullptr;
    unmasked.logit_bias.mask_words = 0;
  }
  const ChainOutcome outcome =
      RunStages(c, premask ? unmasked : o, greedy, state ? &state->mirostat() : nullptr, ws_,
                ChainContext(o, state, step, sampling), state ? &state->adaptive_p() : nullptr);
  objective_ = outcome.objective;
  adaptive_p_ran_ = outcome.adaptive_p_ran;
  if (draw_hint) *draw_hint = outcome.draw_hint;
  if (outcome.refused != nullptr) return Fail(StatusCode::kRangeError, "%s", outcome.refused);
  if (c.Count() == 0) {
    return Fail(StatusCode::kRangeError,
                "every token was removed (logit_bias / banned_tokens / allowed_tokens / allowed_mask / "
                "no_repeat_ngram_size left no candidate, or penalties / DRY took every "
                "remaining logit to -Infinity)");
  }
  greedy_token_ = -1;
  if (greedy) {
    // The first maximum of what survived the chain.
    if (!c.truncated) {
      greedy_token_ = static_cast<int32_t>(FindFirstEqual(c.row, vocab, c.row_max, RowBlocks(c)));
    } else {
      EnsureSorted(c, 1, ws_);
      greedy_token_ = c.ids[0];
    }
  }
  return StatusCode::kOk;
}

void Decoder::ListProbs(Candidates& c) {
  if (c.probs_valid) return;
  const float max = CandidateMax(c);
  // Z's bits are the set's, not the list order's: decode() sorted and
  // unsorted give each id the same probability (OrderFreeSum).
  OrderFreeSum z;
  for (size_t i = 0; i < c.size; ++i) {
    // ExpF64, not std::exp: libm may differ in the last bit across platforms.
    ws_.probs[i] = ExpF64((static_cast<double>(c.logits[i]) - max) / c.temperature);
    z.Add(ws_.probs[i]);
  }
  const double total = z.Sum();
  for (size_t i = 0; i < c.size; ++i) ws_.probs[i] /= total;
  c.probs = ws_.probs.data();
  c.probs_valid = true;
}

StatusCode Decoder::Decode(const float* logits, size_t vocab, const DecodeOptions& o,
                           const SamplerState* state) {
  Candidates c;
  const uint64_t step = state ? state->step() : o.step;
  if (const StatusCode s = RunChain(false, logits, vocab, o, state, step, c);
      s != StatusCode::kOk) {
    return s;
  }
  if (greedy_token_ >= 0) {
    k_ = 1;
    ws_.out_ids[0] = greedy_token_;
    ws_.out_probs[0] = 1.0f;
    return StatusCode::kOk;
  }
  WriteDistribution(c, o.sorted);
  return StatusCode::kOk;
}

void Decoder::WriteDistribution(Candidates& c, bool sorted) {
  if (!sorted) {
    // No sort: the list as it stands (a full row is gathered in id order).
    if (!c.truncated) KeepAtLeast(c, -FLT_MAX, ws_);
    ListProbs(c);
  } else {
    // Sorts the survivors (all of them when nothing truncated). Explicit
    // probs stay valid only on an already sorted list (Bregman's output).
    if (c.truncated && c.sorted < c.size) c.probs_valid = false;
    EnsureSorted(c, c.Count(), ws_);
    TruncateToSorted(c, c.Count());
    ListProbs(c);
  }
  k_ = c.size;
  for (size_t i = 0; i < k_; ++i) {
    ws_.out_ids[i] = c.ids[i];
    ws_.out_probs[i] = static_cast<float>(c.probs[i]);
  }
}

StatusCode Decoder::Sample(const float* logits, size_t vocab, const DecodeOptions& o,
                           SamplerState* state) {
  Candidates c;
  const uint64_t step = state ? state->step() : o.step;
  DrawHint hint;
  if (const StatusCode s = RunChain(true, logits, vocab, o, state, step, c, &hint);
      s != StatusCode::kOk) {
    return s;
  }
  double p_token = 1.0;
  draw_reused_exps_ = false;
  drew_row_band_ = false;
  if (greedy_token_ >= 0) {
    k_ = 1;
    token_ = greedy_token_;
    logprob_ = 0.0;
  } else {
    const Drawn d =
        DrawToken(c, hint, UniformDraw(o.seed, step), ws_, ws_.tuning.reuse_list_exps);
    k_ = d.k;
    token_ = d.token;
    p_token = d.p;
    logprob_ = d.logprob;
    draw_reused_exps_ = d.reused_exps;
    drew_row_band_ = d.from_row_band;
  }
  raw_logprob_ = static_cast<double>(logits[token_]) - raw_max_ - raw_log_z_;  // NaN unless asked
  if (o.return_distribution) {
    const size_t drawn_from = k_;
    if (greedy_token_ >= 0) {
      ws_.out_ids[0] = greedy_token_;
      ws_.out_probs[0] = 1.0f;
    } else {
      // (A band of the row was drawn as one: the same token as without the
      // distribution; the distribution is its list, as decode() gives it.)
      if (hint.kind == DrawHint::Kind::kRowBand) GatherRowBand(c, hint, ws_);
      WriteDistribution(c, o.sorted);
    }
    k_ = drawn_from;
  }
  if (state != nullptr) {
    if (o.mirostat_enabled && greedy_token_ < 0) {
      MirostatUpdate(state->mirostat(), o.mirostat, p_token);
    }
    if (adaptive_p_ran_) {
      AdaptivePUpdate(state->adaptive_p(), o.adaptive_p,
                      greedy_token_ >= 0 ? 1.0 : ws_.adaptive_p_original[token_]);
    }
    state->Accept(token_);
    state->AdvanceStep();
  }
  return StatusCode::kOk;
}

size_t Decoder::WorkspaceBytes() const {
  return ws_.row.capacity() * sizeof(float) + ws_.ids.capacity() * sizeof(int32_t) +
         ws_.logits.capacity() * sizeof(float) + ws_.tmp_ids.capacity() * sizeof(int32_t) +
         ws_.tmp_logits.capacity() * sizeof(float) +
         (ws_.keys.capacity() + ws_.sort_scratch.capacity()) * sizeof(uint64_t) +
         ws_.probs.capacity() * sizeof(double) + ws_.prefix_p.capacity() * sizeof(double) +
         ws_.stage_i32.capacity() * sizeof(int32_t) + ws_.stage_f32.capacity() * sizeof(float) +
         (ws_.stage_f64.capacity() + ws_.adaptive_p_original.capacity()) * sizeof(double) +
         ws_.history_z.capacity() * sizeof(int32_t) +
         ws_.top_ids.capacity() * sizeof(int32_t) +
         ws_.top_logprobs.capacity() * sizeof(float) +
         ws_.out_ids.capacity() * sizeof(int32_t) + ws_.out_probs.capacity() * sizeof(float) +
         (ws_.block_max.capacity() + ws_.block_sums.capacity() + ws_.block_scratch.capacity() +
          ws_.row_exp.capacity()) *
             sizeof(float) +
         ws_.hist_mass.capacity() * sizeof(double) + ws_.hist_count.capacity() * sizeof(uint32_t) +
         (ws_.bregman.q.capacity() + ws_.bregman.scratch.capacity() +
          ws_.bregman.powers.capacity() + ws_.bregman.mass_lanes.capacity()) *
             sizeof(double) +
         ws_.bregman.powered_to.capacity() * sizeof(size_t) +
         ws_.bregman.sketch.CapacityBytes();
}

}  // namespace bd
