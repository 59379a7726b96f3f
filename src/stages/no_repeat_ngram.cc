#include "stages/no_repeat_ngram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace bd {

void ApplyNoRepeatNgram(Candidates& c, const NoRepeatNgramParams& p, Workspace& ws,
                        const StageContext& ctx) {
  if (p.size <= 0) return;
  const size_t n = static_cast<size_t>(p.size);
  const size_t len = ctx.history_len;
  if (len + 1 < n) return;  // HF: fewer than n - 1 tokens to form a prefix
  const int32_t* h = ctx.history;
  const size_t m = n - 1;                // prefix length
  const int32_t* prefix = h + (len - m);  // the last n - 1 tokens

  // List state: mark[t] = 1 for banned t, read only at the list's ids.
  int32_t* mark = ws.stage_i32.data();
  if (c.truncated) {
    for (size_t i = 0; i < c.size; ++i) mark[c.ids[i]] = 0;
  }
  bool any = false;
  for (size_t i = 0; i + n <= len; ++i) {
    if (!std::equal(h + i, h + i + m, prefix)) continue;
    const int32_t t = h[i + m];
    if (t < 0 || static_cast<size_t>(t) >= c.vocab) continue;
    if (c.truncated) {
      mark[t] = 1;
      any = true;
    } else {
      EditLogit(c, t, -INFINITY);
    }
  }
  if (!c.truncated) {
    FinishEdits(c);
    return;
  }
  if (!any) return;
  bool removed = false;
  for (size_t i = 0; i < c.size; ++i) {
    if (mark[c.ids[i]] != 0) {
      c.logits[i] = -INFINITY;
      removed = true;
    }
  }
  if (removed) KeepAtLeast(c, -FLT_MAX, ws);  // keeps the sorted prefix sorted
}

}  // namespace bd
