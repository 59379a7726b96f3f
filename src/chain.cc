#include "chain.h"

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

ChainOutcome RunStages(Candidates& c, const DecodeOptions& o, bool greedy,
                       const MirostatState* mirostat, Workspace& ws,
                       const StageContext& ctx) {
  ChainOutcome out{NAN};
  const StageId* order = o.order_len ? o.order : kDefaultOrder;
  const size_t n = o.order_len ? o.order_len : sizeof(kDefaultOrder) / sizeof(kDefaultOrder[0]);
  const size_t min_keep = static_cast<size_t>(o.min_keep > 1 ? o.min_keep : 1);
  for (size_t s = 0; s < n && c.Count() > 0; ++s) {
    switch (order[s]) {
      case StageId::kLogitBias: ApplyLogitBias(c, o.logit_bias, ws, ctx); break;
      case StageId::kPenalties: ApplyPenalties(c, o.penalties, ws, ctx); break;
      case StageId::kDry: ApplyDry(c, o.dry, ws, ctx); break;
      case StageId::kNoRepeatNgram: ApplyNoRepeatNgram(c, o.no_repeat_ngram, ws, ctx); break;
      case StageId::kTopNSigma: ApplyTopNSigma(c, o.top_n_sigma, ws, ctx); break;
      case StageId::kTopK:
        if (o.top_k > 0) ApplyTopK(c, std::max(static_cast<size_t>(o.top_k), min_keep), ws);
        break;
      case StageId::kTypical: ApplyTypical(c, o.typical, ws, ctx); break;
      case StageId::kTopP: ApplyTopP(c, o.top_p, min_keep, ws); break;
      case StageId::kMinP: ApplyMinP(c, o.min_p, min_keep, ws); break;
      case StageId::kXtc: ApplyXtc(c, o.xtc, ws, ctx); break;
      case StageId::kEpsilon: ApplyEpsilon(c, o.epsilon, ws, ctx); break;
      case StageId::kEta: ApplyEta(c, o.eta, ws, ctx); break;
      case StageId::kTemperature:
        if (greedy) break;
        if (o.dynatemp.range > 0.0f) {
          ApplyDynamicTemperature(c, o.dynatemp, ws, ctx);
        } else {
          ApplyTemperature(c, o.temperature);
        }
        break;
      case StageId::kMirostat:
        if (greedy || !o.mirostat_enabled) break;
        if (mirostat != nullptr) {
          ApplyMirostat(c, o.mirostat, *mirostat, ws, ctx);
        } else {
          MirostatState initial;
          MirostatReset(initial, o.mirostat);
          ApplyMirostat(c, o.mirostat, initial, ws, ctx);
        }
        break;
      case StageId::kBregman:
        if (!greedy && o.bregman_enabled) {
          out.objective = ApplyBregman(c, o.bregman, ws, ctx.want_objective);
        }
        break;
      case StageId::kCount: break;
    }
  }
  return out;
}

}  // namespace bd
