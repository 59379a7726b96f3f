// The stage registry: one entry per stage of the chain, the single place a
// stage is described. An entry names the stage (its `samplers` name), says
// when the options ask for it and when it can act, checks its parameters and
// applies it (llama.cpp's llama_sampler_i: name + apply, with the checks the
// JS contract needs beside them). The chain (chain.cc), validation
// (Decoder::Validate) and the bindings (the stage table the JS API and the
// WebGPU decoder read) all go through it.
#pragma once

#include <cstdarg>
#include <cstddef>

#include "candidates.h"
#include "draw_hint.h"
#include "options.h"
#include "sampler_state.h"
#include "stages/stage.h"
#include "workspace.h"

namespace bd {

struct ChainOutcome {
  double objective;  // Bregman objective, NaN when the stage did not run
  // What the last stage that left one hands the draw (top-p, typical);
  // a stage sets it only where it cuts. The chain drops it once the
  // candidates change after it (Candidates::list_version).
  DrawHint draw_hint;
  // Adaptive-p ran (its original probabilities are in
  // Workspace::adaptive_p_original, unless the call is greedy): the sampler's
  // EMA takes the drawn token's.
  bool adaptive_p_ran;
};

// One stage's call, as the chain makes it.
struct StageCall {
  Candidates& c;
  const DecodeOptions& o;
  bool greedy;  // temperature 0 (or 1/T overflows): the argmax is drawn
  const MirostatState* mirostat;  // nullptr: mu at its initial 2 tau
  const AdaptivePState* adaptive_p;  // nullptr: the EMA as its reset leaves it
  Workspace& ws;
  const StageContext& ctx;
  size_t min_keep;  // max(o.min_keep, 1)
  ChainOutcome& out;
  bool last;            // no stage follows this one in the order
  bool acting_follows;  // a stage that acts (StageSpec::acts) follows this one
};

// Where a stage's check writes its message: printf-style, returns false so a
// check reads `if (bad) return why("...", value);`.
class Complaint {
 public:
  Complaint(char* buffer, size_t size) : buffer_(buffer), size_(size) {}
  bool operator()(const char* fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 2, 3)))
#endif
      ;

 private:
  char* buffer_;
  size_t size_;
};

struct StageSpec {
  StageId id;
  // The name users give it in `samplers`, and the chain's name().
  const char* name;
  // The options set one of its parameters away from "off": a custom order
  // that leaves it out would ignore them (the JS API refuses that), and a
  // sampler's name() lists it.
  bool (*configured)(const DecodeOptions& o);
  // It can change the candidates under these options; false only where its
  // apply returns at once. The chain lets only the last acting stage leave
  // its survivors to the draw as a band of the row (DrawHint::kRowBand).
  bool (*acts)(const DecodeOptions& o, bool greedy);
  // Its parameters' ranges, checked on every call whether it runs or not.
  bool (*valid)(const DecodeOptions& o, Complaint& why);
  void (*apply)(StageCall& call);
};

// The entry of a stage; every StageId below kCount has one.
const StageSpec& Stage(StageId id);

// The name users give a stage in `samplers` (and the chain's name()).
const char* StageName(StageId id);

}  // namespace bd
