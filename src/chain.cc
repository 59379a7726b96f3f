#include "chain.h"

#include <cmath>

#include "stages/registry.h"

namespace bd {

ChainOutcome RunStages(Candidates& c, const DecodeOptions& o, bool greedy,
                       const MirostatState* mirostat, Workspace& ws,
                       const StageContext& ctx, const AdaptivePState* adaptive_p) {
  ChainOutcome out{NAN, DrawHint{}, false};
  const StageId* order = o.order_len ? o.order : kDefaultOrder;
  const size_t n = o.order_len ? o.order_len : sizeof(kDefaultOrder) / sizeof(kDefaultOrder[0]);
  const size_t min_keep = static_cast<size_t>(o.min_keep > 1 ? o.min_keep : 1);
  // Only the last stage that acts may leave its survivors to the draw as a
  // band of the row (StageContext::draw_follows, DrawHint::kRowBand). An id
  // past the registry (a malformed option block) is skipped.
  const auto known = [](StageId id) { return id < StageId::kCount; };
  size_t acting_end = 0;  // one past it
  for (size_t s = n; s-- > 0;) {
    if (!known(order[s]) || Stage(order[s]).acts(o, greedy)) {
      acting_end = s + 1;
      break;
    }
  }
  StageContext here = ctx;
  StageCall call{c, o, greedy, mirostat, adaptive_p, ws, here, min_keep, out, false, false};
  for (size_t s = 0; s < n && c.Count() > 0; ++s) {
    call.last = s + 1 == n;
    call.acting_follows = s + 1 < acting_end;
    here.draw_follows = ctx.draw_follows && !greedy && s + 1 == acting_end;
    if (known(order[s])) Stage(order[s]).apply(call);
    // A hint describes the candidates its stage left; any change after
    // that (this stage's own, or a later stage's) makes it stale.
    if (out.draw_hint.list_version != c.list_version) out.draw_hint = DrawHint{};
  }
  return out;
}

}  // namespace bd
