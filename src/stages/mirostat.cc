// Mirostat v2: a probability cutoff 2^-mu (the epsilon rule with min_keep 1);
// v1: a top-k from the head's Zipf exponent; the scalar update of mu.
#include "stages/mirostat.h"

#include <algorithm>
#include <cmath>

#include "kernels/det_math.h"
#include "stages/epsilon_eta.h"
#include "stages/stages.h"

namespace bd {

void ApplyMirostat(Candidates& c, const MirostatParams&, const MirostatState& s, Workspace& ws,
                   const StageContext&) {
  // -log2 p <= mu  <=>  p >= 2^-mu.
  KeepProbabilityAtLeast(c, Exp2F64(-static_cast<double>(s.mu)), 1, ws);
}

double MirostatV1K(double s, double mu, size_t vocab) {
  const double e = s - 1.0;
  const double ln_v = LogF64(static_cast<double>(vocab));
  // e / (1 - V^-e) = e / -expm1(-e ln V), 1 / ln V at e = 0.
  const double ratio = e == 0.0 ? 1.0 / ln_v : e / -Expm1F64(-e * ln_v);
  return PowF64(ratio * Exp2F64(mu), 1.0 / s);
}

void ApplyMirostatV1(Candidates& c, const MirostatParams&, const MirostatState& s, Workspace& ws,
                     const StageContext&) {
  const size_t n = c.Count();
  if (n <= 1) return;
  const size_t head = std::min(kMirostatHead, n);
  // Explicit probabilities (Bregman's, on its sorted list) give the ratios;
  // a reorder leaves them behind, as everywhere (WriteDistribution).
  if (c.probs_valid && c.SortedCount() < head) c.probs_valid = false;
  EnsureSorted(c, head, ws);
  // b_i = ln(p_i / p_{i+1}): from the explicit probabilities where a stage
  // (Bregman) set them, else the tempered logits' differences.
  const double inv_t = 1.0 / c.temperature;
  double sum_tb = 0.0, sum_tt = 0.0;
  for (size_t i = 0; i + 1 < head; ++i) {
    const double t = LogF64(static_cast<double>(i + 2) / static_cast<double>(i + 1));
    const double b = c.probs_valid ? LogF64(c.probs[i] / c.probs[i + 1])
                                   : (static_cast<double>(c.logits[i]) - c.logits[i + 1]) * inv_t;
    sum_tb += t * b;
    sum_tt += t * t;
  }
  const double k = MirostatV1K(sum_tb / sum_tt, static_cast<double>(s.mu), c.vocab);
  if (!(k < static_cast<double>(n))) return;
  ApplyTopK(c, std::max<size_t>(1, static_cast<size_t>(k)), ws);
}

void MirostatUpdate(MirostatState& s, const MirostatParams& p, double p_selected) {
  const double surprise = -Log2F64(p_selected);
  s.mu = static_cast<float>(static_cast<double>(s.mu) -
                            static_cast<double>(p.eta) * (surprise - static_cast<double>(p.tau)));
}

void MirostatReset(MirostatState& s, const MirostatParams& p) { s.mu = 2.0f * p.tau; }

}  // namespace bd
