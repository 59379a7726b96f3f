// bd_sample_tokens: runs a stateful sampler natively over one logits row for
// N steps and prints the tokens, one per line. The cross-platform test feeds
// the same row and options to the wasm package and compares token by token.
//   bd_sample_tokens ROW.f32 STEPS [name=value ...] [target=AVX2]
//   bd_sample_tokens --targets     (the Highway targets this CPU can run)
// target= pins the SIMD kernels to one Highway target (scalar, SSE4, AVX2,
// AVX-512 natively), for the every-target parity test.
// Names are the JS option names (seed, temperature, top_k, top_p, min_p,
// min_keep, typical_p, epsilon_cutoff, eta_cutoff, top_n_sigma,
// xtc_probability, xtc_threshold, repetition_penalty, frequency_penalty,
// presence_penalty, penalty_last_n, dry_multiplier, dry_base,
// dry_allowed_length, dry_penalty_last_n, no_repeat_ngram_size, mirostat,
// mirostat_tau, mirostat_eta, dynatemp_range, dynatemp_exponent,
// bregman_divergence (primal|dual), bregman_alpha, bregman_lambda, bregman_k).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "decoder.h"
#include "kernels/target_name.h"
#include "sampler_state.h"

namespace {

bool Set(bd::DecodeOptions& o, const std::string& name, const char* v) {
  const double x = std::strtod(v, nullptr);
  const int32_t i = static_cast<int32_t>(x);
  if (name == "seed") o.seed = std::strtoull(v, nullptr, 10);
  else if (name == "temperature") { o.temperature = static_cast<float>(x); o.dynatemp.temperature = o.temperature; }
  else if (name == "top_k") o.top_k = i;
  else if (name == "top_p") o.top_p = static_cast<float>(x);
  else if (name == "min_p") o.min_p = static_cast<float>(x);
  else if (name == "min_keep") o.min_keep = i;
  else if (name == "typical_p") o.typical.p = static_cast<float>(x);
  else if (name == "epsilon_cutoff") o.epsilon.epsilon = static_cast<float>(x);
  else if (name == "eta_cutoff") o.eta.eta = static_cast<float>(x);
  else if (name == "top_n_sigma") o.top_n_sigma.n = static_cast<float>(x);
  else if (name == "xtc_probability") o.xtc.probability = static_cast<float>(x);
  else if (name == "xtc_threshold") o.xtc.threshold = static_cast<float>(x);
  else if (name == "repetition_penalty") o.penalties.repetition = static_cast<float>(x);
  else if (name == "frequency_penalty") o.penalties.frequency = static_cast<float>(x);
  else if (name == "presence_penalty") o.penalties.presence = static_cast<float>(x);
  else if (name == "penalty_last_n") o.penalties.last_n = i;
  else if (name == "dry_multiplier") o.dry.multiplier = static_cast<float>(x);
  else if (name == "dry_base") o.dry.base = static_cast<float>(x);
  else if (name == "dry_allowed_length") o.dry.allowed_length = i;
  else if (name == "dry_penalty_last_n") o.dry.last_n = i;
  else if (name == "no_repeat_ngram_size") o.no_repeat_ngram.size = i;
  else if (name == "mirostat") {
    o.mirostat_enabled = i == 1 || i == 2;
    o.mirostat.version = i == 1 ? 1 : 2;
  }
  else if (name == "mirostat_tau") o.mirostat.tau = static_cast<float>(x);
  else if (name == "mirostat_eta") o.mirostat.eta = static_cast<float>(x);
  else if (name == "dynatemp_range") o.dynatemp.range = static_cast<float>(x);
  else if (name == "dynatemp_exponent") o.dynatemp.exponent = static_cast<float>(x);
  else if (name == "bregman_divergence") {
    o.bregman_enabled = true;
    o.bregman.divergence = std::strcmp(v, "dual") == 0 ? bd::BregmanDivergence::kDual
                                                       : bd::BregmanDivergence::kPrimal;
  } else if (name == "bregman_alpha") { o.bregman_enabled = true; o.bregman.alpha = x; }
  else if (name == "bregman_lambda") { o.bregman_enabled = true; o.bregman.lambda = x; }
  else if (name == "bregman_k") { o.bregman_enabled = true; o.bregman.fixed_k = static_cast<size_t>(x); }
  else return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--targets") == 0) {
    std::printf("%s\n", bd::KernelTargetsAvailable().c_str());
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ROW.f32 STEPS [name=value ...]\n", argv[0]);
    return 2;
  }
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f) { std::perror(argv[1]); return 2; }
  std::vector<float> row;
  float buf[1024];
  size_t n;
  while ((n = std::fread(buf, sizeof(float), 1024, f)) > 0) row.insert(row.end(), buf, buf + n);
  std::fclose(f);
  const long steps = std::strtol(argv[2], nullptr, 10);
  bd::DecodeOptions o;
  for (int a = 3; a < argc; ++a) {
    const char* eq = std::strchr(argv[a], '=');
    if (eq && std::strncmp(argv[a], "target=", 7) == 0) {
      if (!bd::ForceKernelTarget(eq + 1)) {
        std::fprintf(stderr, "target %s is not available (have: %s)\n", eq + 1,
                     bd::KernelTargetsAvailable().c_str());
        return 2;
      }
      continue;
    }
    if (!eq || !Set(o, std::string(argv[a], static_cast<size_t>(eq - argv[a])), eq + 1)) {
      std::fprintf(stderr, "unknown option %s\n", argv[a]);
      return 2;
    }
  }
  // min_keep reaches every truncation, as in the JS option block.
  const size_t min_keep = o.min_keep > 1 ? static_cast<size_t>(o.min_keep) : 1;
  o.typical.min_keep = o.epsilon.min_keep = o.eta.min_keep = o.xtc.min_keep = min_keep;
  bd::Decoder dec;
  bd::SamplerState state;
  state.Reset(o.mirostat);
  for (long s = 0; s < steps; ++s) {
    if (dec.Sample(row.data(), row.size(), o, &state) != bd::StatusCode::kOk) {
      std::fprintf(stderr, "error: %s\n", dec.error());
      return 1;
    }
    std::printf("%d\n", dec.token());
  }
  return 0;
}
