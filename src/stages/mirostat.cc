// Mirostat v2: a probability cutoff 2^-mu (the epsilon rule with min_keep 1)
// and the scalar update of mu.
#include "stages/mirostat.h"

#include <cmath>

#include "kernels/det_math.h"
#include "stages/epsilon_eta.h"

namespace bd {

void ApplyMirostat(Candidates& c, const MirostatParams&, const MirostatState& s, Workspace& ws,
                   const StageContext&) {
  // -log2 p <= mu  <=>  p >= 2^-mu.
  KeepProbabilityAtLeast(c, Exp2F64(-static_cast<double>(s.mu)), 1, ws);
}

void MirostatUpdate(MirostatState& s, const MirostatParams& p, double p_selected) {
  const double surprise = -Log2F64(p_selected);
  s.mu = static_cast<float>(static_cast<double>(s.mu) -
                            static_cast<double>(p.eta) * (surprise - static_cast<double>(p.tau)));
}

void MirostatReset(MirostatState& s, const MirostatParams& p) { s.mu = 2.0f * p.tau; }

}  // namespace bd
