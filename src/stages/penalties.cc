#include "stages/penalties.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace bd {
namespace {

inline bool InVocab(int32_t id, size_t vocab) {
  return id >= 0 && static_cast<size_t>(id) < vocab;
}

// llama.cpp's edit of one logit seen n > 0 times, in its float operations:
// the repetition penalty multiplies a non-positive logit and divides a
// positive one, so both move away from being chosen.
inline float Penalise(float l, int32_t n, const PenaltyParams& p) {
  float r = l <= 0.0f ? l * p.repetition : l / p.repetition;
  r -= static_cast<float>(n) * p.frequency + p.presence;
  if (std::isnan(r)) {
    // An overflow of the repetition step met an infinite frequency term of
    // the same sign (inf - inf): the exact value, in double (the float64
    // twin's), saturated as a float overflow would be.
    double d = l <= 0.0f ? static_cast<double>(l) * p.repetition
                         : static_cast<double>(l) / p.repetition;
    d -= static_cast<double>(n) * p.frequency + p.presence;
    r = d < -static_cast<double>(FLT_MAX) ? -INFINITY
                                          : static_cast<float>(std::min(d, static_cast<double>(FLT_MAX)));
  }
  return std::min(r, FLT_MAX);
}

}  // namespace

void ApplyPenalties(Candidates& c, const PenaltyParams& params, Workspace& ws,
                    const StageContext& ctx) {
  if (params.last_n == 0 ||
      (params.repetition == 1.0f && params.frequency == 0.0f && params.presence == 0.0f)) {
    return;
  }
  // The additive terms in the units of the law this stage sees (after a
  // temperature: llama.cpp subtracts them from logits already divided by T).
  PenaltyParams p = params;
  p.frequency = TemperedAmount(c, params.frequency);
  p.presence = TemperedAmount(c, params.presence);
  const size_t w = p.last_n < 0 ? ctx.history_len
                                : std::min(static_cast<size_t>(p.last_n), ctx.history_len);
  if (w == 0) return;
  const int32_t* window = ctx.history + (ctx.history_len - w);
  const size_t vocab = c.vocab;

  // count[t] for every token read below: zero those entries, then count.
  int32_t* count = ws.stage_i32.data();
  if (c.truncated) {
    for (size_t i = 0; i < c.size; ++i) count[c.ids[i]] = 0;
  }
  for (size_t i = 0; i < w; ++i) {
    if (InVocab(window[i], vocab)) count[window[i]] = 0;
  }
  for (size_t i = 0; i < w; ++i) {
    if (InVocab(window[i], vocab)) ++count[window[i]];
  }

  if (!c.truncated) {
    for (size_t i = 0; i < w; ++i) {
      const int32_t t = window[i];
      if (!InVocab(t, vocab) || count[t] == 0) continue;
      const int32_t n = count[t];
      count[t] = 0;  // each distinct token is edited once
      if (c.row[t] != -INFINITY) EditLogit(c, t, Penalise(c.row[t], n, p));
    }
    FinishEdits(c);
    return;
  }

  bool moved = false, removed = false;
  for (size_t i = 0; i < c.size; ++i) {
    const int32_t n = count[c.ids[i]];
    if (n == 0) continue;
    c.logits[i] = Penalise(c.logits[i], n, p);
    moved = true;
    removed |= c.logits[i] == -INFINITY;
  }
  if (!moved) return;
  c.sorted = 0;  // an edited logit may belong anywhere in the order
  c.probs_valid = false;
  ++c.list_version;
  if (removed) KeepAtLeast(c, -FLT_MAX, ws);
}

}  // namespace bd
