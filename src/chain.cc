#include "chain.h"

#include <algorithm>
#include <cmath>

#include "stages/stages.h"

namespace bd {

const char* StageName(StageId id) {
  switch (id) {
    case StageId::kLogitBias: return "logit_bias";
    case StageId::kPenalties: return "penalties";
    case StageId::kDry: return "dry";
    case StageId::kNoRepeatNgram: return "no_repeat_ngram";
    case StageId::kTopNSigma: return "top_n_sigma";
    case StageId::kTopK: return "top_k";
    case StageId::kTypical: return "typical_p";
    case StageId::kTopP: return "top_p";
    case StageId::kMinP: return "min_p";
    case StageId::kXtc: return "xtc";
    case StageId::kEpsilon: return "epsilon_cutoff";
    case StageId::kEta: return "eta_cutoff";
    case StageId::kTemperature: return "temperature";
    case StageId::kMirostat: return "mirostat";
    case StageId::kBregman: return "bregman";
    case StageId::kCount: break;
  }
  return "?";
}

namespace {

// One stage's apply, as the chain calls it (llama.cpp's llama_sampler_i
// apply): each stage a separate function reached through this table, so the
// compiler keeps them apart (a wasm engine optimises small functions better
// than one that inlines the whole chain).
struct StageCall {
  Candidates& c;
  const DecodeOptions& o;
  bool greedy;
  const MirostatState* mirostat;
  Workspace& ws;
  const StageContext& ctx;
  size_t min_keep;
  ChainOutcome& out;
  bool last;  // no stage follows this one in the order
  bool acting_follows;  // a stage acting after this one (StageActs)
};
using StageFn = void (*)(StageCall&);

void CallLogitBias(StageCall& a) { ApplyLogitBias(a.c, a.o.logit_bias, a.ws, a.ctx); }
void CallPenalties(StageCall& a) { ApplyPenalties(a.c, a.o.penalties, a.ws, a.ctx); }
void CallDry(StageCall& a) { ApplyDry(a.c, a.o.dry, a.ws, a.ctx); }
void CallNoRepeatNgram(StageCall& a) { ApplyNoRepeatNgram(a.c, a.o.no_repeat_ngram, a.ws, a.ctx); }
void CallTopNSigma(StageCall& a) { ApplyTopNSigma(a.c, a.o.top_n_sigma, a.ws, a.ctx); }
void CallTopK(StageCall& a) {
  if (a.o.top_k > 0) ApplyTopK(a.c, std::max(static_cast<size_t>(a.o.top_k), a.min_keep), a.ws);
}
void CallTypical(StageCall& a) { ApplyTypical(a.c, a.o.typical, a.ws, a.ctx); }
void CallTopP(StageCall& a) {
  ApplyTopP(a.c, a.o.top_p, a.min_keep, a.ws, a.ctx.draw_follows);
}
void CallMinP(StageCall& a) { ApplyMinP(a.c, a.o.min_p, a.min_keep, a.ws); }
void CallXtc(StageCall& a) { ApplyXtc(a.c, a.o.xtc, a.ws, a.ctx); }
void CallEpsilon(StageCall& a) { ApplyEpsilon(a.c, a.o.epsilon, a.ws, a.ctx); }
void CallEta(StageCall& a) { ApplyEta(a.c, a.o.eta, a.ws, a.ctx); }
void CallTemperature(StageCall& a) {
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
void CallMirostat(StageCall& a) {
  if (a.greedy || !a.o.mirostat_enabled) return;
  if (a.mirostat != nullptr) {
    ApplyMirostat(a.c, a.o.mirostat, *a.mirostat, a.ws, a.ctx);
  } else {
    MirostatState initial;
    MirostatReset(initial, a.o.mirostat);
    ApplyMirostat(a.c, a.o.mirostat, initial, a.ws, a.ctx);
  }
}
void CallBregman(StageCall& a) {
  if (!a.greedy && a.o.bregman_enabled) {
    a.out.objective = ApplyBregman(a.c, a.o.bregman, a.ws, a.ctx.want_objective,
                                   /*logits_needed=*/!a.last);
  }
}

// Indexed by StageId.
constexpr StageFn kStageFns[] = {
    CallLogitBias, CallPenalties, CallDry,     CallNoRepeatNgram, CallTopNSigma,
    CallTopK,      CallTypical,   CallTopP,    CallMinP,          CallXtc,
    CallEpsilon,   CallEta,       CallTemperature, CallMirostat,  CallBregman};
static_assert(sizeof(kStageFns) / sizeof(kStageFns[0]) == static_cast<size_t>(StageId::kCount),
              "one entry per StageId, in its order");

// Whether a stage can change the candidates under these options: false only
// where its Call above (or its Apply's first line) returns at once. A stage
// not listed here counts as acting.
bool StageActs(StageId id, const DecodeOptions& o, bool greedy) {
  switch (id) {
    case StageId::kLogitBias:
      return o.logit_bias.n > 0 || o.logit_bias.n_banned > 0 || o.logit_bias.restrict_to_allowed;
    case StageId::kPenalties:
      return o.penalties.repetition != 1.0f || o.penalties.frequency != 0.0f ||
             o.penalties.presence != 0.0f;
    case StageId::kDry: return o.dry.multiplier > 0.0f;
    case StageId::kNoRepeatNgram: return o.no_repeat_ngram.size > 0;
    case StageId::kTopNSigma: return o.top_n_sigma.n > 0.0f;
    case StageId::kTopK: return o.top_k > 0;
    case StageId::kTypical: return o.typical.p < 1.0f;
    case StageId::kTopP: return o.top_p < 1.0f;
    case StageId::kMinP: return o.min_p > 0.0f;
    case StageId::kXtc: return o.xtc.probability > 0.0f;
    case StageId::kEpsilon: return o.epsilon.epsilon > 0.0f;
    case StageId::kEta: return o.eta.eta > 0.0f;
    case StageId::kTemperature:
      return !greedy && (o.temperature != 1.0f || o.dynatemp.range > 0.0f);
    case StageId::kMirostat: return !greedy && o.mirostat_enabled;
    case StageId::kBregman: return !greedy && o.bregman_enabled;
    case StageId::kCount: break;
  }
  return true;
}

}  // namespace

ChainOutcome RunStages(Candidates& c, const DecodeOptions& o, bool greedy,
                       const MirostatState* mirostat, Workspace& ws,
                       const StageContext& ctx) {
  ChainOutcome out{NAN};
  const StageId* order = o.order_len ? o.order : kDefaultOrder;
  const size_t n = o.order_len ? o.order_len : sizeof(kDefaultOrder) / sizeof(kDefaultOrder[0]);
  const size_t min_keep = static_cast<size_t>(o.min_keep > 1 ? o.min_keep : 1);
  // Only the last stage that acts may leave its survivors to the draw as a
  // band of the row (StageContext::draw_follows).
  size_t acting_end = 0;  // one past it
  for (size_t s = n; s-- > 0;) {
    if (StageActs(order[s], o, greedy)) {
      acting_end = s + 1;
      break;
    }
  }
  StageContext here = ctx;
  StageCall call{c, o, greedy, mirostat, ws, here, min_keep, out, false, false};
  for (size_t s = 0; s < n && c.Count() > 0; ++s) {
    const size_t id = static_cast<size_t>(order[s]);
    call.last = s + 1 == n;
    call.acting_follows = s + 1 < acting_end;
    here.draw_follows = ctx.draw_follows && !greedy && s + 1 == acting_end;
    if (id < sizeof(kStageFns) / sizeof(kStageFns[0])) kStageFns[id](call);
  }
  return out;
}

}  // namespace bd
