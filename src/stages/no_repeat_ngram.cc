#include "stages/no_repeat_ngram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "stages/reverse_z.h"

namespace bd {

size_t NoRepeatNgramScratch(const NoRepeatNgramParams& p, size_t history_len) {
  if (p.size <= 1) return 0;
  const size_t m = static_cast<size_t>(p.size) - 1;
  return history_len < m ? 0 : m;
}

// Calls ban(t) for the last token t of every earlier n-gram whose first n - 1
// tokens equal the history's last n - 1 (the rule in the header), once per
// such n-gram. n - 1 >= 1: the n-gram at i matches exactly when the common
// suffix of h[0..i+n-1) and h is n - 1 tokens long or longer, i.e. ReverseZ's
// length at k = L - (i + n - 1) reaches its bound n - 1; its last token is
// h[L - k]. Linear in L, with n - 1 int32 of scratch (z).
template <typename Ban>
void ForEachBannedToken(const int32_t* h, size_t len, size_t n, int32_t* z, Ban ban) {
  const size_t m = n - 1;
  if (m == 0) {
    for (size_t i = 0; i < len; ++i) ban(h[i]);
    return;
  }
  ReverseZ(h, len, m, z, [&](size_t k, size_t matched) {
    if (matched == m && k + m <= len) ban(h[len - k]);
  });
}

void ApplyNoRepeatNgram(Candidates& c, const NoRepeatNgramParams& p, Workspace& ws,
                        const StageContext& ctx) {
  if (p.size <= 0) return;
  const size_t n = static_cast<size_t>(p.size);
  const size_t len = ctx.history_len;
  if (len + 1 < n) return;  // HF: fewer than n - 1 tokens to form a prefix
  const size_t scratch = NoRepeatNgramScratch(p, len);
  if (ws.history_z.size() < scratch) ws.history_z.resize(scratch);

  // List state: mark[t] = 1 for banned t, read only at the list's ids.
  int32_t* mark = ws.stage_i32.data();
  if (c.truncated) {
    for (size_t i = 0; i < c.size; ++i) mark[c.ids[i]] = 0;
  }
  bool any = false;
  ForEachBannedToken(ctx.history, len, n, ws.history_z.data(), [&](int32_t t) {
    if (t < 0 || static_cast<size_t>(t) >= c.vocab) return;
    if (c.truncated) {
      mark[t] = 1;
      any = true;
    } else {
      EditLogit(c, t, -INFINITY);
    }
  });
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
