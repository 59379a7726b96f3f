// The Bregman decoder as a chain stage: hands the float64 core the candidate
// probabilities in sorted order, a prefix at a time, so an adaptive search
// that stops at a small k never sorts the vocabulary.
#include <algorithm>
#include <cmath>

#include "kernels/det_math.h"
#include "kernels/log_f64.h"
#include "kernels/scaled_exp.h"
#include "kernels/softmax.h"
#include "stages/stages.h"

namespace bd {
namespace {

// Notes a size asked of EnsureSorted in the probes (the first
// kRecordedPrefixRequests of a decode).
void RecordPrefixRequest(BregmanProbes& probes, size_t requested) {
  if (probes.prefix_request_count < BregmanProbes::kRecordedPrefixRequests) {
    probes.prefix_requests[probes.prefix_request_count++] = requested;
  }
}

// The search's first sorted prefix (then 8x up to 512, 4x up to 32768, 2x).
constexpr size_t kFirstPrefix = 64;

class CandidateProbs final : public SortedProbs {
 public:
  // (Z in the body: Normaliser() sets requested_, declared after z_.)
  CandidateProbs(Candidates& c, Workspace& ws) : c_(c), ws_(ws), max_(CandidateMax(c)) {
    z_ = Normaliser();
  }

  size_t Size() const override { return c_.Count(); }
  // The candidates' softmax: all of it (a support of every candidate drops nothing).
  bool Whole() const override { return true; }

  const double* Prefix(size_t need) override {
    need = std::min(need, c_.Count());
    if (need > converted_) {
      // The search asks for ever longer prefixes (galloping doubles them).
      // Each growth of the sorted prefix costs a gather (about a pass over
      // the row once it wants more entries than the row has blocks) and the
      // sort of what it adds, so it grows geometrically from what was last
      // asked for: 64, 512, then 4x (2048, 8192, 32768), then 2x, or to the
      // need when that is more. An 8x step past 512 would overshoot by up to
      // 8x the prefix the search needed, and sorting that costs more than
      // another gather. EnsureSorted keeps all it gathered, sorted (the
      // threshold's margin), on top. Past 32768 the sort of the added
      // entries is most of a decode, so 2x (4x there would sort the whole
      // row for any k from ~50 000 on). The measurements behind these steps:
      // notes/bregman_journal.md, "The sorted prefix".
      if (need > c_.SortedCount()) {
        // (The first prefix, kFirstPrefix, is the normaliser's.)
        const size_t next = requested_ < 512     ? 8 * requested_
                            : requested_ < 32768 ? 4 * requested_
                                                 : 2 * requested_;
        requested_ = std::min(c_.Count(), std::max(need, next));
        // Half the row or more, for a search already past a quarter of it:
        // the whole row (its keys straight from the row, EnsureSorted), as
        // a growth to half of it would most likely fall short and be
        // followed by the whole row anyway.
        if (2 * requested_ >= c_.Count() && 4 * need > c_.Count()) requested_ = c_.Count();
        RecordPrefixRequest(ws_.bregman.probes, requested_);
        EnsureSorted(c_, requested_, ws_);
      }
      double* p = PrefixBuffer(c_.SortedCount());
      // Convert only what was asked for (each entry's conversion is its
      // own, so converting in pieces gives the same bits): the sorted
      // prefix can be several times longer, and an exp per entry is a
      // noticeable part of a large-k decode. ScaledExpF64 keeps denormal p
      // at a low temperature (ExpFullF64 past |x| = 700, where ExpF64
      // alone would flush them to 0 and the solver would see other p).
      ScaledExpF64(c_.logits + converted_, need - converted_, max_, c_.temperature, z_, p + converted_);
      converted_ = need;
    }
    return ws_.prefix_p.data();
  }

  // Z, so that the candidates' p sum to 1 in float64: the search's first
  // prefix (kFirstPrefix in order) down to its last distinct logit `cut` as
  // the same float64 exps their conversion divides by Z, everything at or
  // below cut in one SIMD pass relative to it (ExpSumAtMost: each term <= 1,
  // so that part keeps float's relative precision however small it is). A
  // float sum of the whole row would leave ~1e-7 of Z as 1 - sum p, mass the
  // renormalisation spreads (q of a 3e-7 token 15 % off at k = V, the
  // objective of [0, -8] 2e-5 off, k = 1 for k = 3 at lambda 5e-18).
  double Normaliser() {
    const size_t n = c_.Count();
    const size_t head = std::min(kFirstPrefix, n);
    requested_ = head;  // the first growth, as Prefix() would ask it
    RecordPrefixRequest(ws_.bregman.probes, requested_);
    EnsureSorted(c_, head, ws_);
    double* e = PrefixBuffer(head);
    ScaledExpF64(c_.logits, head, max_, c_.temperature, 1.0, e);
    // The head above cut in float64; the ties at cut (in the head or past
    // it) in the SIMD pass, where each adds exactly 1 (nothing to take off).
    size_t above = head;
    double rest = 0.0;
    if (head < n) {
      const float cut = c_.logits[head - 1];
      while (above > 0 && c_.logits[above - 1] == cut) --above;
      const float scale = static_cast<float>(1.0 / c_.temperature);
      const double x = (static_cast<double>(cut) - static_cast<double>(max_)) / c_.temperature;
      rest = (c_.truncated ? ExpSumAtMost(c_.logits + above, c_.size - above, cut, scale)
                           : ExpSumAtMost(c_.row, c_.vocab, cut, scale)) *
             ExpFullF64(x);
    }
    double z = 0.0;
    for (size_t i = 0; i < above; ++i) z += e[i];
    z += rest;
    // The head's p: its exps over Z, the bits ScaledExpF64 gives with Z (it
    // divides the same exp), so Prefix() need not convert them again.
    for (size_t i = 0; i < head; ++i) e[i] /= z;
    converted_ = head;
    return z;
  }

  // ws.prefix_p with room for n (grown geometrically, never shrunk).
  double* PrefixBuffer(size_t n) {
    if (ws_.prefix_p.size() < n) ws_.prefix_p.resize(std::max(n, 2 * ws_.prefix_p.size()));
    return ws_.prefix_p.data();
  }

  double TailPow(size_t k, double alpha) override {
    const size_t n = c_.Count();
    if (k >= n) return 0.0;
    // Rows of up to kFirstPrefix candidates: every p is float64 already (the
    // normaliser converted them all), so the tail is their own sum, smallest
    // first: float64 precision, as q and k (the float exps below would put
    // these objectives 1e-8..3e-7 relative off).
    if (n <= kFirstPrefix) {
      const double* p = Prefix(n);
      double sum = 0.0;
      for (size_t i = n; i-- > k;) sum += alpha == 1.0 ? p[i] : PowF64(p[i], alpha);
      return sum;
    }
    // p_i^alpha = p_ref^alpha e^{alpha (l_i - ref) / T}: the dropped entries'
    // exps relative to a reference logit `ref` (float exps, each within ~1e-7
    // where it matters: the terms near ref), p_ref^alpha in float64. ref is the
    // largest dropped logit, so the largest term is 1 and the sum keeps its
    // relative precision however far the tail lies below the kept tokens (the
    // last kept logit as ref would flush a tail 87 / alpha nats below it to
    // 0). Where the largest dropped logit equals the last kept
    // one (a tie split by ids), ref is that logit and its kept copies are
    // taken off the count. (The ties are counted apart: taking the kept ones
    // off a float sum of 1 + a tiny tail would lose the tail.)
    Prefix(k + 1);  // (sorted past k: the first dropped entry is the largest)
    const float cut = c_.logits[k - 1];
    const float ref = c_.logits[k];
    const float scale = static_cast<float>(alpha / c_.temperature);
    double sum;
    if (ref < cut) {
      // Every entry at or below ref is dropped, and every dropped one is.
      sum = c_.truncated ? ExpSumAtMost(c_.logits + k, c_.size - k, ref, scale)
                         : ExpSumAtMost(c_.row, c_.vocab, ref, scale);
    } else {
      double equal = 0.0;
      const double below = c_.truncated
                               ? ExpSumBelow(c_.logits + k, c_.size - k, cut, scale, &equal)
                               : ExpSumBelow(c_.row, c_.vocab, cut, scale, &equal);
      if (!c_.truncated) {
        for (size_t j = k; j-- > 0 && c_.logits[j] == cut;) equal -= 1.0;  // kept
      }
      sum = below + equal;
    }
    const double x = alpha * (static_cast<double>(ref) - static_cast<double>(max_)) / c_.temperature;
    return sum * (ExpFullF64(x) / PowF64(z_, alpha));
  }

 private:
  Candidates& c_;
  Workspace& ws_;
  float max_;
  double z_ = 0.0;
  size_t converted_ = 0;
  size_t requested_ = 0;  // the longest prefix asked of EnsureSorted
};

}  // namespace

double ApplyBregman(Candidates& c, const BregmanParams& params, Workspace& ws,
                    bool want_objective, bool logits_needed, const char** refused) {
  ws.bregman.probes.prefix_request_count = 0;
  CandidateProbs probs(c, ws);
  const BregmanResult r = DecodeBregman(params, probs, ws.bregman, want_objective);
  if (r.refused != nullptr) {
    if (refused != nullptr) *refused = r.refused;
    return NAN;
  }
  ws.bregman.probes.sorted_prefix = c.SortedCount();
  EnsureSorted(c, r.k, ws);
  TruncateToSorted(c, r.k);
  // q stays where the solver left it (ws.bregman.q, untouched until the next
  // decode): no copy.
  c.probs = ws.bregman.q.data();
  c.probs_valid = true;
  ++c.list_version;
  if (logits_needed) {
    // Keep the logits consistent with q for the stages that run later.
    LogF64ToFloat(ws.bregman.q.data(), r.k, c.logits);
    c.temperature = 1.0;  // the logits are now log q itself
  }
  return r.objective;
}

}  // namespace bd
