// Embind registration only: the raw, pointer-based API that web/ wraps.
// Logits enter through one HEAPF32.set into inputPtr(); options through one
// HEAPF64.set into optionsPtr() (+ the aux arrays); results leave as heap
// offsets read by JS.
#include <emscripten/bind.h>

#include <cstdio>
#include <string>
#include <vector>

#include "decoder.h"
#include "kernels/target_name.h"
#include "option_slots.h"
#include "sampler_state.h"
#include "size_limits.h"
#include "stages/registry.h"

namespace {

// Option block + aux arrays, as written by JS.
struct OptionBlock {
  std::vector<double> slots = std::vector<double>(bd::kNumOptionSlots, 0.0);
  std::vector<int32_t> aux_i32;
  std::vector<float> aux_f32;

  bd::DecodeOptions Read() const {
    return bd::OptionsFromSlots(slots.data(), aux_i32.data(), aux_i32.size(), aux_f32.data(),
                                aux_f32.size());
  }
};

// A stateful sampler: options fixed at creation (copied, arrays included) and
// the state a chain carries between steps. Decoding goes through a decoder's
// workspace, so a batch of samplers shares one.
// The stages the options ask for (StageSpec::configured), bit i for StageId i.
int ConfiguredStages(const bd::DecodeOptions& o) {
  int mask = 0;
  for (int id = 0; id < static_cast<int>(bd::StageId::kCount); ++id) {
    if (bd::Stage(static_cast<bd::StageId>(id)).configured(o)) mask |= 1 << id;
  }
  return mask;
}

class WasmSampler {
 public:
  explicit WasmSampler(const OptionBlock& block) : block_(block) {
    const bd::DecodeOptions o = block_.Read();
    state_.Reset(o.mirostat, o.adaptive_p);
  }
  void accept(int32_t token) { state_.Accept(token); }
  void reset() {
    const bd::DecodeOptions o = block_.Read();
    state_.Reset(o.mirostat, o.adaptive_p);
  }
  WasmSampler* clone() const { return new WasmSampler(*this); }
  size_t historyLength() const { return state_.history_len(); }
  double step() const { return static_cast<double>(state_.step()); }
  int configuredStages() const { return ConfiguredStages(block_.Read()); }

  const OptionBlock& block() const { return block_; }
  bd::SamplerState& state() { return state_; }

 private:
  OptionBlock block_;
  bd::SamplerState state_;
};

class WasmDecoder {
 public:
  uintptr_t inputPtr(size_t vocab) {
    // JS checks MAX_VOCAB first; refusing here too means no path can ask
    // for an allocation that would abort the module (Run then reports it).
    if (vocab > bd::kMaxVocab) return 0;
    if (input_.size() < vocab) input_.resize(vocab);
    return reinterpret_cast<uintptr_t>(input_.data());
  }
  uintptr_t optionsPtr() { return reinterpret_cast<uintptr_t>(block_.slots.data()); }
  // Sizes the aux arrays (grow-only capacity) and returns their addresses.
  uintptr_t auxI32Ptr(size_t n) {
    block_.aux_i32.resize(n);
    return reinterpret_cast<uintptr_t>(block_.aux_i32.data());
  }
  uintptr_t auxF32Ptr(size_t n) {
    block_.aux_f32.resize(n);
    return reinterpret_cast<uintptr_t>(block_.aux_f32.data());
  }

  int decode(size_t vocab) { return Run(vocab, false, nullptr); }
  int sample(size_t vocab) { return Run(vocab, true, nullptr); }
  int decodeWith(WasmSampler& s, size_t vocab) { return Run(vocab, false, &s); }
  int sampleWith(WasmSampler& s, size_t vocab) { return Run(vocab, true, &s); }
  // A sampler with the options currently in the block (validated first).
  WasmSampler* createSampler() { return new WasmSampler(block_); }
  // Validates the current block without decoding (for createSampler).
  int validate() { return static_cast<int>(decoder_.Check(block_.Read())); }
  // The stages the options in the block ask for (bit i: StageId i).
  int configuredStages() const { return ConfiguredStages(block_.Read()); }

  std::string error() const { return decoder_.error(); }
  size_t k() const { return decoder_.k(); }
  int token() const { return decoder_.token(); }
  double logprob() const { return decoder_.logprob(); }
  double rawLogprob() const { return decoder_.raw_logprob(); }
  double objective() const { return decoder_.objective(); }
  uintptr_t idsPtr() const { return reinterpret_cast<uintptr_t>(decoder_.ids()); }
  uintptr_t probsPtr() const { return reinterpret_cast<uintptr_t>(decoder_.probs()); }
  size_t topCount() const { return decoder_.top_count(); }
  uintptr_t topIdsPtr() const { return reinterpret_cast<uintptr_t>(decoder_.top_ids()); }
  uintptr_t topLogprobsPtr() const { return reinterpret_cast<uintptr_t>(decoder_.top_logprobs()); }
  size_t workspaceBytes() const { return decoder_.WorkspaceBytes(); }

 private:
  int Run(size_t vocab, bool sample, WasmSampler* s) {
    if (vocab > input_.size()) {
      // Only reachable past kMaxVocab: the decoder writes the message.
      return static_cast<int>(decoder_.Decode(nullptr, vocab, bd::DecodeOptions{}));
    }
    const bd::DecodeOptions o = s ? s->block().Read() : block_.Read();
    bd::StatusCode st;
    if (sample) {
      st = decoder_.Sample(input_.data(), vocab, o, s ? &s->state() : nullptr);
    } else {
      st = decoder_.Decode(input_.data(), vocab, o, s ? &s->state() : nullptr);
    }
    return static_cast<int>(st);
  }

  bd::Decoder decoder_;
  std::vector<float> input_;
  OptionBlock block_;
};

std::string TargetName() { return bd::KernelTargetName(); }

// The registry as JSON, for the JS API and the WebGPU decoder: the stages'
// names by id, the default order, and the scalar options as [name, slot,
// kind, off value, lowest integer, stage id or -1 for the whole call].
std::string RegistryJson() {
  std::string j = "{\"stages\":[";
  for (int id = 0; id < static_cast<int>(bd::StageId::kCount); ++id) {
    j += (id ? ",\"" : "\"") + std::string(bd::StageName(static_cast<bd::StageId>(id))) + "\"";
  }
  j += "],\"defaultOrder\":[";
  bool first = true;
  for (bd::StageId id : bd::kDefaultOrder) {
    j += (first ? "\"" : ",\"") + std::string(bd::StageName(id)) + "\"";
    first = false;
  }
  j += "],\"options\":[";
  first = true;
  char entry[160];
  for (const bd::ScalarOption& s : bd::kScalarOptions) {
    std::snprintf(entry, sizeof(entry), "%s[\"%s\",%d,\"%s\",%.17g,%.17g,%d]", first ? "" : ",",
                  s.name, static_cast<int>(s.slot),
                  s.kind == bd::OptionKind::kInt      ? "int"
                  : s.kind == bd::OptionKind::kChoice ? "choice"
                                                      : "number", s.off, s.lowest,
                  s.stage < bd::StageId::kCount ? static_cast<int>(s.stage) : -1);
    j += entry;
    first = false;
  }
  return j + "]}";
}

}  // namespace

EMSCRIPTEN_BINDINGS(bregman_decoders) {
  using namespace emscripten;
  class_<WasmSampler>("WasmSampler")
      .function("accept", &WasmSampler::accept)
      .function("reset", &WasmSampler::reset)
      .function("clone", &WasmSampler::clone, allow_raw_pointers())
      .function("historyLength", &WasmSampler::historyLength)
      .function("step", &WasmSampler::step)
      .function("configuredStages", &WasmSampler::configuredStages);
  class_<WasmDecoder>("WasmDecoder")
      .constructor<>()
      .function("inputPtr", &WasmDecoder::inputPtr)
      .function("optionsPtr", &WasmDecoder::optionsPtr)
      .function("auxI32Ptr", &WasmDecoder::auxI32Ptr)
      .function("auxF32Ptr", &WasmDecoder::auxF32Ptr)
      .function("decode", &WasmDecoder::decode)
      .function("sample", &WasmDecoder::sample)
      .function("decodeWith", &WasmDecoder::decodeWith)
      .function("sampleWith", &WasmDecoder::sampleWith)
      .function("createSampler", &WasmDecoder::createSampler, allow_raw_pointers())
      .function("validate", &WasmDecoder::validate)
      .function("configuredStages", &WasmDecoder::configuredStages)
      .function("error", &WasmDecoder::error)
      .function("k", &WasmDecoder::k)
      .function("token", &WasmDecoder::token)
      .function("logprob", &WasmDecoder::logprob)
      .function("rawLogprob", &WasmDecoder::rawLogprob)
      .function("objective", &WasmDecoder::objective)
      .function("idsPtr", &WasmDecoder::idsPtr)
      .function("probsPtr", &WasmDecoder::probsPtr)
      .function("topCount", &WasmDecoder::topCount)
      .function("topIdsPtr", &WasmDecoder::topIdsPtr)
      .function("topLogprobsPtr", &WasmDecoder::topLogprobsPtr)
      .function("workspaceBytes", &WasmDecoder::workspaceBytes);
  function("targetName", &TargetName);
  function("registryJson", &RegistryJson);
  // The option block's layout, by name (single source: option_slots.h).
#define BD_SLOT_CONSTANT(name) constant("SLOT_" #name, static_cast<int>(bd::kSlot_##name));
  BD_OPTION_SLOTS(BD_SLOT_CONSTANT)
#undef BD_SLOT_CONSTANT
  constant("NUM_OPTION_SLOTS", static_cast<int>(bd::kNumOptionSlots));
  constant("MAX_VOCAB", static_cast<double>(bd::kMaxVocab));
  constant("MAX_HISTORY", static_cast<int>(bd::SamplerState::kMaxHistory));
  constant("MAX_CHAIN_LENGTH", static_cast<int>(bd::kMaxChainLength));
  function("stageName", optional_override([](int id) -> std::string {
    return bd::StageName(static_cast<bd::StageId>(id));
  }));
  constant("NUM_STAGES", static_cast<int>(bd::StageId::kCount));
}
