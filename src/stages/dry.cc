#include "stages/dry.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/det_math.h"
#include "stages/reverse_z.h"

namespace bd {
namespace {

inline bool InVocab(int32_t id, size_t vocab) {
  return id >= 0 && static_cast<size_t>(id) < vocab;
}

inline bool IsBreaker(int32_t t, const DryParams& p) {
  return std::find(p.breakers, p.breakers + p.n_breakers, t) != p.breakers + p.n_breakers;
}

// The same lengths by direct comparison: O(w * bound), no memory.
template <typename Emit>
void DirectMatches(const int32_t* W, size_t w, size_t bound, Emit emit) {
  for (size_t k = 1; k < w; ++k) {
    size_t n = 0;
    while (n < bound && k + n < w && W[w - 1 - n] == W[w - 1 - k - n]) ++n;
    emit(k, n);
  }
}

// The window DRY reads and how far back its matches count.
struct DryScope {
  const int32_t* W;   // the latest w tokens of the history
  size_t w;
  size_t bound;       // matches are cut at this length (longer ones cost the same)
  int max_exponent;   // llama.cpp's clamp of the exponent (0: none)
};

// The scope of DRY on this history; false when no penalty can apply.
bool DryScopeOf(const DryParams& p, const StageContext& ctx, DryScope* s) {
  if (p.multiplier == 0.0f || !(p.base >= 1.0f) || p.last_n == 0) return false;
  const size_t len = ctx.history_len;
  const size_t w = p.last_n < 0 ? len : std::min(static_cast<size_t>(p.last_n), len);
  const int64_t allowed = p.allowed_length;
  if (static_cast<int64_t>(w) <= allowed) return false;
  const int32_t* W = ctx.history + (len - w);
  // No match may reach back past the last breaker (llama.cpp's rep_limit).
  size_t limit = w;
  for (size_t i = 0; i < w && p.n_breakers > 0; ++i) {
    if (IsBreaker(W[w - 1 - i], p)) {
      limit = i;
      break;
    }
  }
  if (static_cast<int64_t>(limit) < allowed) return false;
  // llama.cpp's clamp of the exponent against float overflow.
  int max_exponent = 0;
  if (p.base > 1.000001f) max_exponent = static_cast<int>(88.7228391f / static_cast<float>(LogF64(p.base)));
  // Lengths past `bound` give the same penalty as `bound` itself (the clamped
  // exponent, or base 1), so matches are cut there: this keeps the stored Z
  // values few.
  const int64_t enough = max_exponent > 0 ? allowed + max_exponent
                         : p.base == 1.0f ? allowed
                                          : static_cast<int64_t>(limit);
  *s = DryScope{W, w, std::min(limit, static_cast<size_t>(std::max<int64_t>(enough, 0))), max_exponent};
  return true;
}

// longest[t] (in ws.stage_f64): the longest repeat of at least
// allowed_length tokens that emitting t would extend, -1 if none; set for
// the candidates and the window's tokens.
double* LongestRepeats(const DryScope& s, int64_t allowed, const Candidates& c, Workspace& ws) {
  const int32_t* W = s.W;
  const size_t w = s.w, vocab = c.vocab;
  double* longest = ws.stage_f64.data();
  if (c.truncated) {
    for (size_t i = 0; i < c.size; ++i) longest[c.ids[i]] = -1.0;
  }
  for (size_t j = 1; j < w; ++j) {
    if (InVocab(W[j], vocab)) longest[W[j]] = -1.0;
  }
  // k = w-1-j: the repeat ends at W[j] and W[j+1] = W[w-k] would extend it.
  auto record = [&](size_t k, size_t n) {
    const int32_t t = W[w - k];
    if (static_cast<int64_t>(n) >= allowed && InVocab(t, vocab)) {
      longest[t] = std::max(longest[t], static_cast<double>(n));
    }
  };
  if (s.bound <= ws.stage_i32.size()) {
    ReverseZ(W, w, s.bound, ws.stage_i32.data(), record);
  } else {
    DirectMatches(W, w, s.bound, record);
  }
  return longest;
}

// The penalty of a repeat of `length` tokens: multiplier * base^(length -
// allowed_length), the exponent clamped. llama.cpp: float * std::pow(float,
// int), i.e. in double, then to float; PowIntF64 is correctly rounded here
// as pow is meant to be, on every libm.
float DryPenalty(const DryParams& p, int max_exponent, double length) {
  int64_t e = static_cast<int64_t>(length) - p.allowed_length;
  if (max_exponent > 0 && e > max_exponent) e = max_exponent;
  return static_cast<float>(static_cast<double>(p.multiplier) *
                            PowIntF64(static_cast<double>(p.base), e));
}

}  // namespace

void ApplyDry(Candidates& c, const DryParams& p, Workspace& ws, const StageContext& ctx) {
  DryScope s;
  if (!DryScopeOf(p, ctx, &s)) return;
  double* longest = LongestRepeats(s, p.allowed_length, c, ws);
  if (!c.truncated) {
    // The row: each distinct window token edited once.
    for (size_t j = 1; j < s.w; ++j) {
      const int32_t t = s.W[j];
      if (!InVocab(t, c.vocab) || longest[t] < 0.0) continue;
      const double length = longest[t];
      longest[t] = -1.0;
      if (c.row[t] == -INFINITY || IsBreaker(t, p)) continue;
      EditLogit(c, t, c.row[t] - TemperedAmount(c, DryPenalty(p, s.max_exponent, length)));
    }
    FinishEdits(c);
    return;
  }
  bool moved = false, removed = false;
  for (size_t i = 0; i < c.size; ++i) {
    const double length = longest[c.ids[i]];
    if (length < 0.0 || IsBreaker(c.ids[i], p)) continue;
    c.logits[i] -= TemperedAmount(c, DryPenalty(p, s.max_exponent, length));
    moved = true;
    removed |= c.logits[i] == -INFINITY;
  }
  if (!moved) return;
  c.sorted = 0;
  c.probs_valid = false;
  ++c.list_version;
  if (removed) KeepAtLeast(c, -FLT_MAX, ws);
}

}  // namespace bd
