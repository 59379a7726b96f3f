// The draw: one token from what the chain left, by the inverse CDF of a
// uniform u in [0, 1) (llama.cpp's `dist`, the last link of its chain). Every
// path walks its weights in an order fixed by the candidates themselves (ids
// ascending, or sorted), with sums in a fixed association (virtual lanes, then
// blocks in double), so every target draws the same token for the same u.
#pragma once

#include <cstddef>
#include <cstdint>

#include "candidates.h"
#include "draw_hint.h"
#include "workspace.h"

namespace bd {

struct Drawn {
  int32_t token;
  size_t k;        // how many tokens it was drawn from
  double p;        // its probability under the distribution drawn from
  double logprob;  // log p, from the same terms
  bool reused_exps;   // summed a stage's exps instead of recomputing them
  bool from_row_band; // drew from a band of the row, never gathered
};

// Draws from the candidates (not greedy: the chain left at least one, and
// c.temperature is the scale). May sort the list (a partially sorted one).
// hint: what the chain's last cut left for the candidates as they are
// (ChainOutcome::draw_hint): a band of the row is drawn as one; a list's
// exps are summed instead of recomputed where reuse_stage_exps (the same
// bits either way: the tests compare both).
Drawn DrawToken(Candidates& c, const DrawHint& hint, double u, Workspace& ws,
                bool reuse_stage_exps = true);

}  // namespace bd
