// Embind registration only: the raw, pointer-based API that web/ wraps.
// Logits enter through one HEAPF32.set into inputPtr(); options through one
// HEAPF64.set into optionsPtr(); results leave as heap offsets read by JS.
#include <emscripten/bind.h>

#include <string>
#include <vector>

#include "decoder.h"
#include "kernels/target_name.h"
#include "option_slots.h"

namespace {

class WasmDecoder {
 public:
  WasmDecoder() : options_(bd::kNumOptionSlots, 0.0) {}

  uintptr_t inputPtr(size_t vocab) {
    if (input_.size() < vocab) input_.resize(vocab);
    return reinterpret_cast<uintptr_t>(input_.data());
  }
  uintptr_t optionsPtr() { return reinterpret_cast<uintptr_t>(options_.data()); }

  int decode(size_t vocab) { return Run(vocab, /*sample=*/false); }
  int sample(size_t vocab) { return Run(vocab, /*sample=*/true); }

  std::string error() const { return decoder_.error(); }
  size_t k() const { return decoder_.k(); }
  int token() const { return decoder_.token(); }
  double logprob() const { return decoder_.logprob(); }
  double objective() const { return decoder_.objective(); }
  uintptr_t idsPtr() const { return reinterpret_cast<uintptr_t>(decoder_.ids()); }
  uintptr_t probsPtr() const { return reinterpret_cast<uintptr_t>(decoder_.probs()); }
  size_t workspaceBytes() const { return decoder_.WorkspaceBytes(); }

 private:
  int Run(size_t vocab, bool sample) {
    if (vocab > input_.size()) return static_cast<int>(bd::StatusCode::kRangeError);
    const bd::DecodeOptions o = bd::OptionsFromSlots(options_.data());
    const bd::StatusCode s = sample ? decoder_.Sample(input_.data(), vocab, o)
                                    : decoder_.Decode(input_.data(), vocab, o);
    return static_cast<int>(s);
  }

  bd::Decoder decoder_;
  std::vector<float> input_;
  std::vector<double> options_;
};

std::string TargetName() { return bd::KernelTargetName(); }

}  // namespace

EMSCRIPTEN_BINDINGS(bregman_decoders) {
  using namespace emscripten;
  class_<WasmDecoder>("WasmDecoder")
      .constructor<>()
      .function("inputPtr", &WasmDecoder::inputPtr)
      .function("optionsPtr", &WasmDecoder::optionsPtr)
      .function("decode", &WasmDecoder::decode)
      .function("sample", &WasmDecoder::sample)
      .function("error", &WasmDecoder::error)
      .function("k", &WasmDecoder::k)
      .function("token", &WasmDecoder::token)
      .function("logprob", &WasmDecoder::logprob)
      .function("objective", &WasmDecoder::objective)
      .function("idsPtr", &WasmDecoder::idsPtr)
      .function("probsPtr", &WasmDecoder::probsPtr)
      .function("workspaceBytes", &WasmDecoder::workspaceBytes);
  function("targetName", &TargetName);
  // The option block's layout, by name (single source: option_slots.h).
  constant("SLOT_TEMPERATURE", static_cast<int>(bd::kSlotTemperature));
  constant("SLOT_TOP_K", static_cast<int>(bd::kSlotTopK));
  constant("SLOT_TOP_P", static_cast<int>(bd::kSlotTopP));
  constant("SLOT_MIN_P", static_cast<int>(bd::kSlotMinP));
  constant("SLOT_MIN_KEEP", static_cast<int>(bd::kSlotMinKeep));
  constant("SLOT_BREGMAN", static_cast<int>(bd::kSlotBregman));
  constant("SLOT_BREGMAN_ALPHA", static_cast<int>(bd::kSlotBregmanAlpha));
  constant("SLOT_BREGMAN_LAMBDA", static_cast<int>(bd::kSlotBregmanLambda));
  constant("SLOT_BREGMAN_K", static_cast<int>(bd::kSlotBregmanK));
  constant("SLOT_BREGMAN_K_MIN", static_cast<int>(bd::kSlotBregmanKMin));
  constant("SLOT_BREGMAN_K_MAX", static_cast<int>(bd::kSlotBregmanKMax));
  constant("SLOT_SEED_HI", static_cast<int>(bd::kSlotSeedHi));
  constant("SLOT_SEED_LO", static_cast<int>(bd::kSlotSeedLo));
  constant("SLOT_STEP_HI", static_cast<int>(bd::kSlotStepHi));
  constant("SLOT_STEP_LO", static_cast<int>(bd::kSlotStepLo));
  constant("NUM_OPTION_SLOTS", static_cast<int>(bd::kNumOptionSlots));
}
