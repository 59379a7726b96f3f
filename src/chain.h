// Runs the configured stages, in order, over one candidate set: the apply() of
// a llama.cpp sampler chain, each stage reached through its registry entry
// (stages/registry.h), with the stages' parameters in DecodeOptions.
#pragma once

#include "candidates.h"
#include "options.h"
#include "sampler_state.h"
#include "stages/registry.h"
#include "workspace.h"

namespace bd {

// `greedy`: temperature 0, so the temperature, mirostat and Bregman stages
// (which cannot change the argmax) are skipped. `mirostat` is the state the
// mirostat stage reads (nullptr: mu at its initial 2 tau); `adaptive_p` the
// EMA adaptive-p reads (nullptr: as its reset leaves it).
ChainOutcome RunStages(Candidates& c, const DecodeOptions& o, bool greedy,
                       const MirostatState* mirostat, Workspace& ws,
                       const StageContext& ctx, const AdaptivePState* adaptive_p = nullptr);

}  // namespace bd
