// XTC: the top choices are an upper set of the logits (p_i >= threshold), so
// they are found by a logit threshold and one count pass; removing all but the
// last of them needs only that last token, found by a plain scan. No sort.
#include "stages/xtc.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/det_math.h"
#include "kernels/threshold.h"
#include "rng.h"

namespace bd {

void ApplyXtc(Candidates& c, const XtcParams& p, Workspace&, const StageContext& ctx) {
  const size_t n = c.Count();
  if (!(p.probability > 0.0f) || p.threshold > 0.5f || n < 2) return;
  const double u = UniformDraw(ctx.seed ^ kXtcSalt, ctx.step);
  if (u > p.probability) return;

  const bool full = !c.truncated;
  const float* v = full ? c.row : c.logits;
  const size_t len = full ? c.vocab : c.size;
  // Q = {p_i >= threshold} = {l_i >= t}, t the smallest float at or above
  // max + T (log threshold + log Z).
  float t = -FLT_MAX;
  if (p.threshold > 0.0f) {
    const float max = CandidateMax(c);
    const double z = CandidateExpSum(c, max);
    const double cut = static_cast<double>(max) +
                       c.temperature * (LogF64(static_cast<double>(p.threshold)) + LogF64(z));
    t = static_cast<float>(cut);
    if (static_cast<double>(t) < cut) t = std::nextafter(t, INFINITY);
    t = std::max(t, -FLT_MAX);
  }
  const size_t q = CountAtLeast(v, len, t);
  if (q < 2) return;
  const size_t removed = q - 1;
  if (n - removed < p.min_keep) return;  // llama.cpp: all or nothing

  // The last of Q in candidate order: its lowest logit, among ties the
  // highest id.
  size_t last = len;
  float last_logit = INFINITY;
  int32_t last_id = -1;
  for (size_t i = 0; i < len; ++i) {
    const float l = v[i];
    if (l < t || l > last_logit) continue;
    const int32_t id = full ? static_cast<int32_t>(i) : c.ids[i];
    if (l < last_logit || id > last_id) {
      last = i;
      last_logit = l;
      last_id = id;
    }
  }

  if (full) {
    // Ban the others in place; the row stays a lazy full row. Its new max is
    // the kept top choice (everything else left is below t).
    float* row = MutableRow(c);
    for (size_t i = 0; i < len; ++i) {
      if (row[i] >= t && i != last) row[i] = -INFINITY;
    }
    c.row_max = last_logit;
    c.row_finite -= removed;
    c.size = 0;  // the sorted-prefix cache is stale
    c.sorted = 0;
    c.probs_valid = false;
    return;
  }
  // A list: Q is its head, so the survivors keep their order, and the sorted
  // prefix loses exactly the removed entries that were in it.
  CompactList(c, [&c, t, last](size_t i) { return !(c.logits[i] >= t) || i == last; });
}

}  // namespace bd
