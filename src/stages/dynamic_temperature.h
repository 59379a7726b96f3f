// Dynamic (entropy-based) temperature, "DynaTemp" (kalomaze): the
// temperature moves between min_T and max_T with the normalised entropy of
// the candidates. Semantics of llama.cpp's llama_sampler_temp_ext_apply
// (src/llama-sampling.cpp), arguments (temp, delta, exponent).
#pragma once

#include "candidates.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct DynamicTemperatureParams {
  float temperature = 1.0f;  // centre of the range (llama.cpp's temp)
  float range = 0.0f;        // <= 0: plain temperature (llama.cpp's delta)
  float exponent = 1.0f;     // shape of the entropy -> temperature map
};

// range > 0: with n = Count() candidates and H the entropy (nats) of their
// current law p_i proportional to exp((l_i - max) / c.temperature),
//   T = min_T + (max_T - min_T) * (H / log n)^exponent,
//   min_T = max(0, temperature - range), max_T = temperature + range,
// then the law becomes exp((l_i - max) / (c.temperature * T)): c.temperature
// is multiplied by T (the logits are untouched).
//   Composition: llama.cpp computes H on the logits it holds, which an earlier
// temperature stage has already divided by its T0, and then divides them by
// T again; with the temperature kept as a factor that is exactly "H of the
// current law, then c.temperature *= T". Without an earlier temperature (the
// usual chain, and llama.cpp's common sampler where temp-ext replaces temp)
// c.temperature is 1 and H is the entropy at T = 1.
//   Boundaries (as llama.cpp): n <= 1 leaves everything unchanged (H_max =
// log n would be 0); H / log n is clamped to [0, 1] against rounding; a
// resulting T <= 0 (min_T = 0 and H = 0) is greedy: only the first maximum
// (lower id) is kept, as llama.cpp's temp_impl(0) does.
// range <= 0: plain temperature `temperature` (llama.cpp's temp_ext falls back
// to temp): <= 0 is greedy as above, otherwise c.temperature *= temperature.
// llama.cpp counts -inf (banned) tokens in n; here they are not candidates.
// Cost: one SIMD pass (ExpMoments) for the entropy; no sort.
void ApplyDynamicTemperature(Candidates& c, const DynamicTemperatureParams& p, Workspace& ws,
                             const StageContext& ctx);

}  // namespace bd
