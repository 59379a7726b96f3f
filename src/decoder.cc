#include "decoder.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "chain.h"
#include "kernels/blocks.h"
#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/moments.h"
#include "kernels/order_free_sum.h"
#include "kernels/row_scan.h"
#include "kernels/softmax.h"
#include "kernels/threshold.h"
#include "rng.h"
#include "size_limits.h"
#include "walk_probs.h"
#include "stages/stages.h"

namespace bd {
namespace {

struct DrawPick {
  size_t index;
  float e;  // its unnormalised probability exp((v - max) * scale)
};

// The block holding target: the first whose block sum takes the running sum
// (block by block, in double) past it, or at the end (target within rounding
// of Z) the last with a positive sum. *cum: the sum of the blocks before it.
size_t BlockHolding(const float* block_sums, size_t nb, double target, double* cum) {
  double sum = 0.0, sum_before_last = 0.0;
  size_t b = 0, last = nb;
  for (; b < nb; ++b) {
    if (!(block_sums[b] > 0.0f)) continue;
    if (sum + block_sums[b] > target) break;
    last = b;
    sum_before_last = sum;
    sum += block_sums[b];
  }
  if (b == nb) {
    b = last;
    sum = sum_before_last;
  }
  *cum = sum;
  return b;
}

// The first index whose running sum of e (in id order; blocks by their block
// sums, then one block element by element, in double) exceeds target; at the
// end (target within rounding of Z), the last index with e > 0.
DrawPick WalkBlocks(const float* row, size_t n, float max, float scale,
                    const float* block_sums, double target, float* e) {
  double cum;
  const size_t begin = BlockHolding(block_sums, NumBlocks(n), target, &cum) * kBlock;
  const size_t len = std::min(kBlock, n - begin);
  ExpWrite(row + begin, len, max, scale, e);
  size_t pick = 0;
  for (size_t i = 0; i < len; ++i) {
    if (!(e[i] > 0.0f)) continue;
    pick = i;
    cum += e[i];
    if (cum > target) break;
  }
  return DrawPick{begin + pick, e[pick]};
}

// WalkBlocks over a band of the row: the entries with lo <= row[i] <= hi,
// weighed by e[i] (the others 0), block_sums from SumBandBlocks.
DrawPick WalkBand(const float* row, const float* e, size_t n, float lo, float hi,
                  const float* block_sums, double target) {
  double cum;
  const size_t begin = BlockHolding(block_sums, NumBlocks(n), target, &cum) * kBlock;
  const size_t end = std::min(begin + kBlock, n);
  size_t pick = begin;
  for (size_t i = begin; i < end; ++i) {
    if (!(row[i] >= lo && row[i] <= hi && e[i] > 0.0f)) continue;
    pick = i;
    cum += e[i];
    if (cum > target) break;
  }
  return DrawPick{pick, e[pick]};
}

}  // namespace

StatusCode Decoder::Fail(StatusCode code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(error_, sizeof(error_), fmt, args);
  va_end(args);
  return code;
}

StatusCode Decoder::Validate(const DecodeOptions& o) {
  const StatusCode kRange = StatusCode::kRangeError;
  if (!(o.temperature >= 0.0f && o.temperature <= kMaxTemperature))
    return Fail(kRange, "temperature must be a number in [0, 1e30], got %g", o.temperature);
  if (o.top_k < 0) return Fail(kRange, "top_k must be >= 0 (0: off), got %d", o.top_k);
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
    return Fail(kRange, "top_p must be in (0, 1], got %g", o.top_p);
  if (!(o.min_p >= 0.0f && o.min_p <= 1.0f))
    return Fail(kRange, "min_p must be in [0, 1], got %g", o.min_p);
  if (o.min_keep < 0) return Fail(kRange, "min_keep must be >= 0, got %d", o.min_keep);
  if (!(o.typical.p > 0.0f && o.typical.p <= 1.0f))
    return Fail(kRange, "typical_p must be in (0, 1], got %g", o.typical.p);
  if (!(o.epsilon.epsilon >= 0.0f && o.epsilon.epsilon < 1.0f))
    return Fail(kRange, "epsilon_cutoff must be in [0, 1), got %g", o.epsilon.epsilon);
  if (!(o.eta.eta >= 0.0f && o.eta.eta < 1.0f))
    return Fail(kRange, "eta_cutoff must be in [0, 1), got %g", o.eta.eta);
  if (!(o.top_n_sigma.n >= 0.0f) || !std::isfinite(o.top_n_sigma.n))
    return Fail(kRange, "top_n_sigma must be a finite number >= 0, got %g", o.top_n_sigma.n);
  if (!(o.xtc.probability >= 0.0f && o.xtc.probability <= 1.0f))
    return Fail(kRange, "xtc_probability must be in [0, 1], got %g", o.xtc.probability);
  if (!(o.xtc.threshold >= 0.0f && o.xtc.threshold <= 1.0f))
    return Fail(kRange, "xtc_threshold must be in [0, 1], got %g", o.xtc.threshold);
  if (!(o.dynatemp.range >= 0.0f && o.dynatemp.range <= kMaxTemperature))
    return Fail(kRange, "dynatemp_range must be a number in [0, 1e30], got %g", o.dynatemp.range);
  if (!(o.dynatemp.exponent > 0.0f) || !std::isfinite(o.dynatemp.exponent))
    return Fail(kRange, "dynatemp_exponent must be a finite number > 0, got %g", o.dynatemp.exponent);
  if (!(o.penalties.repetition > 0.0f) || !std::isfinite(o.penalties.repetition))
    return Fail(kRange, "repetition_penalty must be a finite number > 0, got %g", o.penalties.repetition);
  if (!std::isfinite(o.penalties.frequency))
    return Fail(kRange, "frequency_penalty must be finite, got %g", o.penalties.frequency);
  if (!std::isfinite(o.penalties.presence))
    return Fail(kRange, "presence_penalty must be finite, got %g", o.penalties.presence);
  if (o.penalties.last_n < -1) return Fail(kRange, "penalty_last_n must be >= -1, got %d", o.penalties.last_n);
  if (!(o.dry.multiplier >= 0.0f) || !std::isfinite(o.dry.multiplier))
    return Fail(kRange, "dry_multiplier must be a finite number >= 0, got %g", o.dry.multiplier);
  if (!(o.dry.base >= 1.0f) || !std::isfinite(o.dry.base))
    return Fail(kRange, "dry_base must be a finite number >= 1, got %g", o.dry.base);
  if (o.dry.allowed_length < 0)
    return Fail(kRange, "dry_allowed_length must be >= 0, got %d", o.dry.allowed_length);
  if (o.dry.last_n < -1) return Fail(kRange, "dry_penalty_last_n must be >= -1, got %d", o.dry.last_n);
  if (o.no_repeat_ngram.size < 0)
    return Fail(kRange, "no_repeat_ngram_size must be >= 0, got %d", o.no_repeat_ngram.size);
  // Checked with mirostat off too, as every other stage's parameters are
  // (a review found mirostat_tau: -1 accepted without mirostat: 2).
  if (!(o.mirostat.tau > 0.0f) || !std::isfinite(o.mirostat.tau))
    return Fail(kRange, "mirostat_tau must be a finite number > 0, got %g", o.mirostat.tau);
  if (!(o.mirostat.eta > 0.0f) || !std::isfinite(o.mirostat.eta))
    return Fail(kRange, "mirostat_eta must be a finite number > 0, got %g", o.mirostat.eta);
  for (size_t i = 0; i < o.logit_bias.n; ++i) {
    if (std::isnan(o.logit_bias.bias[i]) || o.logit_bias.bias[i] == INFINITY)
      return Fail(kRange, "logit_bias[%d] must be a number < +Infinity", o.logit_bias.ids[i]);
  }
  if (o.top_logprobs < 0) return Fail(kRange, "top_logprobs must be >= 0, got %d", o.top_logprobs);
  if (o.bregman_enabled) {
    if (const char* msg = ValidateBregmanParams(o.bregman)) return Fail(kRange, "%s", msg);
  }
  return StatusCode::kOk;
}

StatusCode Decoder::RunChain(bool sampling, const float* logits, size_t vocab,
                             const DecodeOptions& o,
                             const SamplerState* state, uint64_t step, Candidates& c) {
  error_[0] = '\0';
  objective_ = NAN;
  top_count_ = 0;
  if (const StatusCode s = Validate(o); s != StatusCode::kOk) return s;
  if (const StatusCode s = ValidateForRow(o, vocab, state); s != StatusCode::kOk) return s;
  ws_.Reserve(vocab);
  // The one fused pass over the caller's row: max, NaN, finite count and the
  // block maxima every later threshold pass uses to skip blocks.
  const RowScan scan = ScanRow(logits, vocab, ws_.block_max.data());
  if (scan.has_nan) return Fail(StatusCode::kRangeError, "logits contains NaN");
  if (scan.max == INFINITY)
    return Fail(StatusCode::kRangeError, "logits contains +Infinity");
  if (scan.max == -INFINITY)
    return Fail(StatusCode::kRangeError,
                "logits: every token is banned (all -Infinity)");
  for (size_t i = 0; i < o.logit_bias.n; ++i) {
    if (o.logit_bias.ids[i] < 0 || static_cast<size_t>(o.logit_bias.ids[i]) >= vocab)
      return Fail(StatusCode::kRangeError, "logit_bias: token id %d is outside [0, %zu)",
                  o.logit_bias.ids[i], vocab);
  }

  // No copy: the stages read the caller's row; the first stage that edits it
  // (penalties, biases, bans, XTC) copies it into the workspace (MutableRow).
  auto fresh = [&]() {
    c = Candidates{};
    c.row = const_cast<float*>(logits);
    c.own_row = ws_.row.data();
    c.row_borrowed = true;
    c.vocab = vocab;
    c.row_max = scan.max;
    c.row_finite = scan.finite;
    c.block_max = ws_.block_max.data();
    c.blocks_valid = true;
    c.ids = ws_.ids.data();
    c.logits = ws_.logits.data();
  };
  fresh();
  raw_max_ = scan.max;
  // softmax(logits)'s normaliser costs a SIMD pass: only when asked for.
  raw_log_z_ = (o.logprobs || o.top_logprobs > 0)
                   ? LogF64(ExpSum(logits, vocab, scan.max, 1.0f))
                   : NAN;
  if (o.top_logprobs > 0) {
    // The raw distribution's head, before any stage edits the row.
    top_count_ = std::min(static_cast<size_t>(o.top_logprobs), c.row_finite);
    // Sized by the largest top_logprobs asked for (usually a handful), not
    // by the vocabulary: grown once, then reused.
    if (ws_.top_ids.size() < top_count_) {
      ws_.top_ids.resize(top_count_);
      ws_.top_logprobs.resize(top_count_);
    }
    EnsureSorted(c, top_count_, ws_);
    for (size_t i = 0; i < top_count_; ++i) {
      ws_.top_ids[i] = c.ids[i];
      ws_.top_logprobs[i] = static_cast<float>(c.logits[i] - raw_max_ - raw_log_z_);
    }
    fresh();
  }

  // Greedy at 0, and where 1/T would overflow float (the limit is greedy).
  const bool greedy = o.temperature == 0.0f || !std::isfinite(1.0f / o.temperature);
  StageContext ctx;
  ctx.history = state ? state->history() : o.history;
  ctx.history_len = state ? state->history_len() : o.history_len;
  ctx.seed = o.seed;
  ctx.step = step;
  ctx.want_objective = !sampling;
  ctx.draw_follows = sampling;
  const ChainOutcome outcome =
      RunStages(c, o, greedy, state ? &state->mirostat() : nullptr, ws_, ctx);
  objective_ = outcome.objective;
  if (c.Count() == 0) {
    return Fail(StatusCode::kRangeError,
                "every token was removed (logit_bias / banned_tokens / allowed_tokens / "
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
  if (const StatusCode s = RunChain(true, logits, vocab, o, state, step, c);
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
  } else if (c.row_band) {
    // A band of the row left by its stage (top-p, typical): the row's draw
    // with every entry outside the band weighing 0, i.e. the band's sums per
    // row block (one pass over the row and the stage's exps), then one block.
    const double u = UniformDraw(o.seed, step);
    const float* e = c.band_exp;
    if (!ws_.tuning.reuse_list_exps) {
      // The same exps recomputed (the tests' decoder that never reuses them).
      ExpWrite(c.row, vocab, c.list_exp_max, c.list_exp_scale, ws_.row_exp.data());
      e = ws_.row_exp.data();
    } else {
      draw_reused_exps_ = true;
    }
    float* block_sums = ws_.block_sums.data();
    const double z = SumBandBlocks(c.row, e, vocab, c.band_lo, c.band_hi, block_sums);
    const DrawPick d = WalkBand(c.row, e, vocab, c.band_lo, c.band_hi, block_sums, u * z);
    drew_row_band_ = true;
    k_ = c.band_count;
    token_ = static_cast<int32_t>(d.index);
    p_token = static_cast<double>(d.e) / z;
    logprob_ = LogF64(static_cast<double>(d.e)) - LogF64(z);
  } else if (!c.truncated) {
    // Inverse CDF over the row in id order, no sort: one exp pass leaves
    // the block sums; walk them to the block holding u * Z, then walk that
    // block's exps (recomputed bit-identically). The sums are order-fixed
    // (virtual lanes), so every target draws the same token.
    const double u = UniformDraw(o.seed, step);
    const float scale = static_cast<float>(1.0 / c.temperature);
    float* block_sums = ws_.block_sums.data();
    const double z = ExpBlockSums(c.row, vocab, c.row_max, scale, block_sums);
    const DrawPick d = WalkBlocks(c.row, vocab, c.row_max, scale, block_sums, u * z,
                                  ws_.tmp_logits.data());
    k_ = c.row_finite;
    token_ = static_cast<int32_t>(d.index);
    p_token = static_cast<double>(d.e) / z;
    logprob_ = LogF64(static_cast<double>(d.e)) - LogF64(z);
  } else {
    // A truncated list: walk it in a canonical order, so every platform
    // (whatever its nth_element) draws the same token.
    const double u = UniformDraw(o.seed, step);
    // Canonical orders: sorted, or ascending ids (a gathered list); anything
    // else (a partially sorted list) is sorted first.
    const float scale = static_cast<float>(1.0 / c.temperature);
    // A stage's exps of this very list (ascending ids) at this scale are
    // its weights, measured from the max the stage measured them from
    // (Candidates::list_exp); summed as they are, or recomputed (the same
    // bits) when reuse is switched off for testing.
    const bool measured = c.list_exp != nullptr && !c.probs_valid && c.list_exp_scale == scale;
    const bool reuse = ws_.tuning.reuse_list_exps && measured;
    // A sorted list (Bregman's q) needs no scan: it is canonical already.
    const bool sorted = c.sorted >= c.size;
    const ListScan scan = measured ? ListScan{true, c.list_exp_max}
                          : sorted ? ListScan{false, 0.0f}
                                   : ScanList(c.ids, c.logits, c.size);
    if (!scan.ids_ascending) EnsureSorted(c, c.size, ws_);
    if (!c.probs_valid) {
      // softmax of the list: the row's draw (one SIMD exp pass with block
      // sums, then one block), bit-identical on every target.
      const float max = scan.ids_ascending ? scan.max : CandidateMax(c);
      float* block_sums = ws_.block_sums.data();
      const double z = reuse ? SumBlocks(c.list_exp, c.size, block_sums)
                             : ExpBlockSums(c.logits, c.size, max, scale, block_sums);
      draw_reused_exps_ = reuse;
      const DrawPick d = WalkBlocks(c.logits, c.size, max, scale, block_sums, u * z,
                                    ws_.tmp_logits.data());
      k_ = c.size;
      token_ = c.ids[d.index];
      p_token = static_cast<double>(d.e) / z;
    } else {
      // Explicit probabilities (Bregman's q): walked in float64.
      const size_t pick = WalkProbs(c.probs, c.size, u);
      k_ = c.size;
      token_ = c.ids[pick];
      p_token = c.probs[pick];
    }
    logprob_ = LogF64(p_token);
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
      if (c.row_band) GatherRowBand(c, ws_);
      WriteDistribution(c, o.sorted);
    }
    k_ = drawn_from;
  }
  if (state != nullptr) {
    if (o.mirostat_enabled && greedy_token_ < 0) {
      MirostatUpdate(state->mirostat(), o.mirostat, p_token);
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
         ws_.stage_f64.capacity() * sizeof(double) + ws_.top_ids.capacity() * sizeof(int32_t) +
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
