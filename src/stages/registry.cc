// The registry's entries, in StageId order: for each stage when it is asked
// for, when it acts, its parameter checks and its call. The stages' rules
// live in their own files (stages.h and the headers it includes).
#include "stages/registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "size_limits.h"
#include "stages/stages.h"

namespace bd {

bool Complaint::operator()(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer_, size_, fmt, args);
  va_end(args);
  return false;
}

namespace {

using O = const DecodeOptions&;

bool Finite(float v) { return std::isfinite(v); }

// ---- logit_bias: biases, bans and the allowed set (logit_bias.h).
bool LogitBiasSet(O o) {
  return o.logit_bias.n > 0 || o.logit_bias.n_banned > 0 || o.logit_bias.restrict_to_allowed ||
         o.logit_bias.mask_words > 0;
}
bool LogitBiasValid(O o, Complaint& why) {
  for (size_t i = 0; i < o.logit_bias.n; ++i) {
    if (std::isnan(o.logit_bias.bias[i]) || o.logit_bias.bias[i] == INFINITY)
      return why("logit_bias[%d] must be a number < +Infinity", o.logit_bias.ids[i]);
  }
  return true;
}
void LogitBiasApply(StageCall& a) { ApplyLogitBias(a.c, a.o.logit_bias, a.ws, a.ctx); }

// ---- penalties: repetition, frequency, presence (penalties.h).
bool PenaltiesSet(O o) {
  return o.penalties.repetition != 1.0f || o.penalties.frequency != 0.0f ||
         o.penalties.presence != 0.0f;
}
bool PenaltiesValid(O o, Complaint& why) {
  const PenaltyParams& p = o.penalties;
  if (!(p.repetition > 0.0f) || !Finite(p.repetition))
    return why("repetition_penalty must be a finite number > 0, got %g", p.repetition);
  if (!Finite(p.frequency)) return why("frequency_penalty must be finite, got %g", p.frequency);
  if (!Finite(p.presence)) return why("presence_penalty must be finite, got %g", p.presence);
  if (p.last_n < -1) return why("penalty_last_n must be >= -1, got %d", p.last_n);
  return true;
}
void PenaltiesApply(StageCall& a) { ApplyPenalties(a.c, a.o.penalties, a.ws, a.ctx); }

// ---- dry (dry.h).
bool DrySet(O o) { return o.dry.multiplier > 0.0f; }
bool DryValid(O o, Complaint& why) {
  const DryParams& p = o.dry;
  if (!(p.multiplier >= 0.0f) || !Finite(p.multiplier))
    return why("dry_multiplier must be a finite number >= 0, got %g", p.multiplier);
  if (!(p.base >= 1.0f) || !Finite(p.base))
    return why("dry_base must be a finite number >= 1, got %g", p.base);
  if (p.allowed_length < 0) return why("dry_allowed_length must be >= 0, got %d", p.allowed_length);
  if (p.last_n < -1) return why("dry_penalty_last_n must be >= -1, got %d", p.last_n);
  return true;
}
void DryApply(StageCall& a) { ApplyDry(a.c, a.o.dry, a.ws, a.ctx); }

// ---- no_repeat_ngram (no_repeat_ngram.h).
bool NoRepeatNgramSet(O o) { return o.no_repeat_ngram.size > 0; }
bool NoRepeatNgramValid(O o, Complaint& why) {
  if (o.no_repeat_ngram.size < 0)
    return why("no_repeat_ngram_size must be >= 0, got %d", o.no_repeat_ngram.size);
  return true;
}
void NoRepeatNgramApply(StageCall& a) {
  ApplyNoRepeatNgram(a.c, a.o.no_repeat_ngram, a.ws, a.ctx);
}

// ---- top_n_sigma (top_n_sigma.h).
bool TopNSigmaSet(O o) { return o.top_n_sigma.n > 0.0f; }
bool TopNSigmaValid(O o, Complaint& why) {
  if (!(o.top_n_sigma.n >= 0.0f) || !Finite(o.top_n_sigma.n))
    return why("top_n_sigma must be a finite number >= 0, got %g", o.top_n_sigma.n);
  return true;
}
void TopNSigmaApply(StageCall& a) { ApplyTopNSigma(a.c, a.o.top_n_sigma, a.ws, a.ctx); }

// ---- top_k (stages.h).
bool TopKSet(O o) { return o.top_k > 0; }
bool TopKValid(O o, Complaint& why) {
  if (o.top_k < 0) return why("top_k must be >= 0 (0: off), got %d", o.top_k);
  return true;
}
void TopKApply(StageCall& a) {
  if (a.o.top_k > 0) ApplyTopK(a.c, std::max(static_cast<size_t>(a.o.top_k), a.min_keep), a.ws);
}

// ---- typical_p (typical.h).
bool TypicalSet(O o) { return o.typical.p < 1.0f; }
bool TypicalValid(O o, Complaint& why) {
  if (!(o.typical.p > 0.0f && o.typical.p <= 1.0f))
    return why("typical_p must be in (0, 1], got %g", o.typical.p);
  return true;
}
void TypicalApply(StageCall& a) {
  ApplyTypical(a.c, a.o.typical, a.ws, a.ctx, &a.out.draw_hint);
}

// ---- top_p (stages.h).
bool TopPSet(O o) { return o.top_p < 1.0f; }
bool TopPValid(O o, Complaint& why) {
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) return why("top_p must be in (0, 1], got %g", o.top_p);
  return true;
}
void TopPApply(StageCall& a) {
  ApplyTopP(a.c, a.o.top_p, a.min_keep, a.ws, a.ctx.draw_follows, &a.out.draw_hint);
}

// ---- min_p (stages.h).
bool MinPSet(O o) { return o.min_p > 0.0f; }
bool MinPValid(O o, Complaint& why) {
  if (!(o.min_p >= 0.0f && o.min_p <= 1.0f)) return why("min_p must be in [0, 1], got %g", o.min_p);
  return true;
}
void MinPApply(StageCall& a) { ApplyMinP(a.c, a.o.min_p, a.min_keep, a.ws); }

// ---- xtc (xtc.h).
bool XtcSet(O o) { return o.xtc.probability > 0.0f; }
bool XtcValid(O o, Complaint& why) {
  if (!(o.xtc.probability >= 0.0f && o.xtc.probability <= 1.0f))
    return why("xtc_probability must be in [0, 1], got %g", o.xtc.probability);
  if (!(o.xtc.threshold >= 0.0f && o.xtc.threshold <= 1.0f))
    return why("xtc_threshold must be in [0, 1], got %g", o.xtc.threshold);
  return true;
}
void XtcApply(StageCall& a) { ApplyXtc(a.c, a.o.xtc, a.ws, a.ctx); }

// ---- epsilon_cutoff and eta_cutoff (epsilon_eta.h).
bool EpsilonSet(O o) { return o.epsilon.epsilon > 0.0f; }
bool EpsilonValid(O o, Complaint& why) {
  if (!(o.epsilon.epsilon >= 0.0f && o.epsilon.epsilon < 1.0f))
    return why("epsilon_cutoff must be in [0, 1), got %g", o.epsilon.epsilon);
  return true;
}
void EpsilonApply(StageCall& a) { ApplyEpsilon(a.c, a.o.epsilon, a.ws, a.ctx); }
bool EtaSet(O o) { return o.eta.eta > 0.0f; }
bool EtaValid(O o, Complaint& why) {
  if (!(o.eta.eta >= 0.0f && o.eta.eta < 1.0f))
    return why("eta_cutoff must be in [0, 1), got %g", o.eta.eta);
  return true;
}
void EtaApply(StageCall& a) { ApplyEta(a.c, a.o.eta, a.ws, a.ctx); }

// ---- p_less and p_less_norm (p_less.h).
bool PLessSet(O o) { return o.p_less.mode != PLessMode::kOff; }
bool PLessValid(O, Complaint&) { return true; }  // the JS API checks its type
void PLessApply(StageCall& a) { ApplyPLess(a.c, a.o.p_less, a.ws, a.ctx); }

// ---- top_h (top_h.h).
bool TopHSet(O o) { return o.top_h.coefficient > 0.0f; }
bool TopHValid(O o, Complaint& why) {
  if (!(o.top_h.coefficient >= 0.0f && o.top_h.coefficient <= 1.0f))
    return why("top_h must be in [0, 1] (0: off), got %g", o.top_h.coefficient);
  return true;
}
void TopHApply(StageCall& a) { ApplyTopH(a.c, a.o.top_h, a.ws, a.ctx); }

// ---- temperature, fixed or dynamic (dynamic_temperature.h).
bool TemperatureSet(O o) { return o.temperature != 1.0f || o.dynatemp.range != 0.0f; }
bool TemperatureActs(O o, bool greedy) {
  return !greedy && (o.temperature != 1.0f || o.dynatemp.range > 0.0f);
}
bool TemperatureValid(O o, Complaint& why) {
  if (!(o.temperature >= 0.0f && o.temperature <= kMaxTemperature))
    return why("temperature must be a number in [0, 1e30], got %g", o.temperature);
  if (!(o.dynatemp.range >= 0.0f && o.dynatemp.range <= kMaxTemperature))
    return why("dynatemp_range must be a number in [0, 1e30], got %g", o.dynatemp.range);
  if (!(o.dynatemp.exponent > 0.0f) || !Finite(o.dynatemp.exponent))
    return why("dynatemp_exponent must be a finite number > 0, got %g", o.dynatemp.exponent);
  return true;
}
void TemperatureApply(StageCall& a) {
  if (a.greedy) {
    // llama.cpp's temp at 0 (llama_sampler_temp_impl) leaves only the first
    // maximum for the stages after it: where one acts (a custom order), they
    // see that token alone. Otherwise nothing to do: the decoder takes the
    // first maximum of what survived.
    if (a.acting_follows) ApplyTopK(a.c, 1, a.ws);
    return;
  }
  if (a.o.dynatemp.range > 0.0f) {
    ApplyDynamicTemperature(a.c, a.o.dynatemp, a.ws, a.ctx);
  } else {
    ApplyTemperature(a.c, a.o.temperature);
  }
}

// ---- mirostat 2.0 and 1.0 (mirostat.h): its mu is the sampler's state.
bool MirostatSet(O o) { return o.mirostat_enabled; }
bool MirostatActs(O o, bool greedy) { return !greedy && o.mirostat_enabled; }
bool MirostatValid(O o, Complaint& why) {
  if (!(o.mirostat.tau > 0.0f) || !Finite(o.mirostat.tau))
    return why("mirostat_tau must be a finite number > 0, got %g", o.mirostat.tau);
  if (!(o.mirostat.eta > 0.0f) || !Finite(o.mirostat.eta))
    return why("mirostat_eta must be a finite number > 0, got %g", o.mirostat.eta);
  if (o.mirostat.version != 1 && o.mirostat.version != 2)
    return why("mirostat must be 1 or 2 (its version), got %d", o.mirostat.version);
  return true;
}
void MirostatApply(StageCall& a) {
  if (a.greedy || !a.o.mirostat_enabled) return;
  MirostatState initial;
  if (a.mirostat == nullptr) MirostatReset(initial, a.o.mirostat);
  const MirostatState& s = a.mirostat != nullptr ? *a.mirostat : initial;
  if (a.o.mirostat.version == 1) {
    ApplyMirostatV1(a.c, a.o.mirostat, s, a.ws, a.ctx);
  } else {
    ApplyMirostat(a.c, a.o.mirostat, s, a.ws, a.ctx);
  }
}

// ---- bregman (bregman/bregman.h).
bool BregmanSet(O o) { return o.bregman_enabled; }
bool BregmanActs(O o, bool greedy) { return !greedy && o.bregman_enabled; }
bool BregmanValid(O o, Complaint& why) {
  if (!o.bregman_enabled) return true;
  if (const char* msg = ValidateBregmanParams(o.bregman)) return why("%s", msg);
  return true;
}
void BregmanApply(StageCall& a) {
  if (!a.greedy && a.o.bregman_enabled) {
    a.out.objective = ApplyBregman(a.c, a.o.bregman, a.ws, a.ctx.want_objective,
                                   /*logits_needed=*/a.acting_follows, &a.out.refused);
  }
}

// ---- adaptive-p (adaptive_p.h): its EMA is the sampler's state.
bool AdaptivePSet(O o) { return o.adaptive_p.target >= 0.0f; }
bool AdaptivePActs(O o, bool greedy) { return !greedy && o.adaptive_p.target >= 0.0f; }
bool AdaptivePValid(O o, Complaint& why) {
  const AdaptivePParams& p = o.adaptive_p;
  if (std::isnan(p.target) || p.target > 1.0f)
    return why("adaptive_target must be a number <= 1 (negative: off), got %g", p.target);
  if (!(p.decay >= 0.0f && p.decay <= 0.99f))
    return why("adaptive_decay must be in [0, 0.99], got %g", p.decay);
  if (p.target >= 0.0f && o.mirostat_enabled)
    return why("adaptive_target cannot be combined with mirostat: both select the token");
  return true;
}
void AdaptivePApply(StageCall& a) {
  if (!(a.o.adaptive_p.target >= 0.0f)) return;
  a.out.adaptive_p_ran = true;
  // Greedy: the decoder takes the first maximum, as llama.cpp's temp 0
  // leaves adaptive-p that one token (its original p then counts as 1).
  if (a.greedy) return;
  std::vector<double>& original = a.ws.adaptive_p_original;
  if (original.size() < a.c.vocab) original.resize(a.c.vocab);
  AdaptivePState reset;
  if (a.adaptive_p == nullptr) AdaptivePReset(reset, a.o.adaptive_p);
  ApplyAdaptiveP(a.c, a.o.adaptive_p, a.adaptive_p ? *a.adaptive_p : reset, original.data(),
                 a.ws, a.ctx);
}

// A stage whose apply acts exactly when its options ask for it.
template <bool (*kSet)(O)>
bool ActsWhenSet(O o, bool) {
  return kSet(o);
}

constexpr StageSpec kStages[] = {
    {StageId::kLogitBias, "logit_bias", LogitBiasSet, ActsWhenSet<LogitBiasSet>, LogitBiasValid,
     LogitBiasApply},
    {StageId::kPenalties, "penalties", PenaltiesSet, ActsWhenSet<PenaltiesSet>, PenaltiesValid,
     PenaltiesApply},
    {StageId::kDry, "dry", DrySet, ActsWhenSet<DrySet>, DryValid, DryApply},
    {StageId::kNoRepeatNgram, "no_repeat_ngram", NoRepeatNgramSet,
     ActsWhenSet<NoRepeatNgramSet>, NoRepeatNgramValid, NoRepeatNgramApply},
    {StageId::kTopNSigma, "top_n_sigma", TopNSigmaSet, ActsWhenSet<TopNSigmaSet>,
     TopNSigmaValid, TopNSigmaApply},
    {StageId::kTopK, "top_k", TopKSet, ActsWhenSet<TopKSet>, TopKValid, TopKApply},
    {StageId::kTypical, "typical_p", TypicalSet, ActsWhenSet<TypicalSet>, TypicalValid,
     TypicalApply},
    {StageId::kTopP, "top_p", TopPSet, ActsWhenSet<TopPSet>, TopPValid, TopPApply},
    {StageId::kMinP, "min_p", MinPSet, ActsWhenSet<MinPSet>, MinPValid, MinPApply},
    {StageId::kXtc, "xtc", XtcSet, ActsWhenSet<XtcSet>, XtcValid, XtcApply},
    {StageId::kEpsilon, "epsilon_cutoff", EpsilonSet, ActsWhenSet<EpsilonSet>, EpsilonValid,
     EpsilonApply},
    {StageId::kEta, "eta_cutoff", EtaSet, ActsWhenSet<EtaSet>, EtaValid, EtaApply},
    {StageId::kPLess, "p_less", PLessSet, ActsWhenSet<PLessSet>, PLessValid, PLessApply},
    {StageId::kTopH, "top_h", TopHSet, ActsWhenSet<TopHSet>, TopHValid, TopHApply},
    {StageId::kTemperature, "temperature", TemperatureSet, TemperatureActs, TemperatureValid,
     TemperatureApply},
    {StageId::kMirostat, "mirostat", MirostatSet, MirostatActs, MirostatValid, MirostatApply},
    {StageId::kBregman, "bregman", BregmanSet, BregmanActs, BregmanValid, BregmanApply},
    {StageId::kAdaptiveP, "adaptive_p", AdaptivePSet, AdaptivePActs, AdaptivePValid,
     AdaptivePApply},
};

constexpr bool InIdOrder() {
  size_t i = 0;
  for (const StageSpec& s : kStages) {
    if (static_cast<size_t>(s.id) != i++) return false;
  }
  return i == static_cast<size_t>(StageId::kCount);
}
static_assert(InIdOrder(), "one registry entry per StageId, in its order");

}  // namespace

const StageSpec& Stage(StageId id) { return kStages[static_cast<size_t>(id)]; }

const char* StageName(StageId id) {
  return id < StageId::kCount ? kStages[static_cast<size_t>(id)].name : "?";
}

}  // namespace bd
