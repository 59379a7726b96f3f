// bd_row_passes: the native side of bench/tools/row_passes.mjs. Each decoder
// path at V = 262144 (or argv[1]) timed side by side in one run with the
// bench's floors (bench/floor: one plain SIMD max; that plus one SIMD sum of
// exp) as ratios (medians of interleaved rounds). Natively there is no heap
// copy: the floors are the passes alone. argv[2] pins a Highway target of the
// library (e.g. AVX2); the floors dispatch to the best target of the CPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "decoder.h"
#include "floor/floor.h"
#include "kernels/target_name.h"

namespace {

// The LLM-shaped row of tests/js/reference.mjs's llmRow (Zipf head, shuffled).
std::vector<float> LlmRow(size_t v, uint64_t seed, double s) {
  std::mt19937_64 rng(seed);
  std::vector<size_t> ids(v);
  for (size_t i = 0; i < v; ++i) ids[i] = i;
  std::shuffle(ids.begin(), ids.end(), rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<float> row(v);
  for (size_t r = 0; r < v; ++r) row[ids[r]] = static_cast<float>(-s * std::log(r + 1.0) + 0.3 * (u(rng) - 0.5));
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t V = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 262144;
  if (argc > 2 && !bd::ForceKernelTarget(argv[2])) {
    std::fprintf(stderr, "target %s not available (%s)\n", argv[2], bd::KernelTargetsAvailable().c_str());
    return 2;
  }
  const std::vector<float> llm = LlmRow(V, 1, 1.1), peaked = LlmRow(V, 2, 2.5);
  // A masked row (a grammar mask or bans): 9 tokens in 10 at -inf.
  std::vector<float> masked = llm;
  for (size_t i = 0; i < V; ++i) {
    if (i % 10 != 0) masked[i] = -std::numeric_limits<float>::infinity();
  }
  bd::Decoder dec;
  uint64_t step = 0;
  volatile double sink = 0;
  auto sample = [&](const std::vector<float>& row, bd::DecodeOptions o) {
    o.seed = 1;
    o.step = step++;
    dec.Sample(row.data(), V, o);
    sink = sink + dec.token();
  };
  auto opts = [](std::function<void(bd::DecodeOptions&)> f) {
    bd::DecodeOptions o;
    f(o);
    return o;
  };
  struct Case { const char* name; int floor; std::function<void()> run; };
  const std::vector<Case> cases = {
      {"floor 1: max", 0, [&] { sink = sink + FloorMax(llm.data(), V); }},
      {"floor 2: max + sum exp", 0, [&] { sink = sink + FloorMaxSumExp(llm.data(), V); }},
      {"greedy", 1, [&] { sample(llm, opts([](auto& o) { o.temperature = 0; })); }},
      {"greedy, 90 % masked row", 1, [&] { sample(masked, opts([](auto& o) { o.temperature = 0; })); }},
      {"min_p 0.05", 1, [&] { sample(llm, opts([](auto& o) { o.min_p = 0.05f; })); }},
      {"top_k 40", 1, [&] { sample(llm, opts([](auto& o) { o.top_k = 40; })); }},
      {"top_k 40 + top_p 0.9", 1, [&] { sample(llm, opts([](auto& o) { o.top_k = 40; o.top_p = 0.9f; })); }},
      {"top_n_sigma 1", 1, [&] { sample(llm, opts([](auto& o) { o.top_n_sigma.n = 1; })); }},
      {"epsilon 3e-4", 2, [&] { sample(llm, opts([](auto& o) { o.epsilon.epsilon = 3e-4f; })); }},
      {"softmax + draw", 2, [&] { sample(llm, bd::DecodeOptions{}); }},
      {"top_p 0.9 (large nucleus) sample", 2, [&] { sample(llm, opts([](auto& o) { o.top_p = 0.9f; })); }},
      {"top_p 0.9 (small nucleus) sample", 2, [&] { sample(peaked, opts([](auto& o) { o.top_p = 0.9f; })); }},
      {"top_p 0.9 (large nucleus) decode", 2,
       [&] { dec.Decode(llm.data(), V, opts([](auto& o) { o.top_p = 0.9f; })); }},
      {"top_p 0.9 (large) decode unsorted", 2,
       [&] { dec.Decode(llm.data(), V, opts([](auto& o) { o.top_p = 0.9f; o.sorted = false; })); }},
      {"typical_p 0.9", 2, [&] { sample(llm, opts([](auto& o) { o.typical.p = 0.9f; })); }},
  };
  std::vector<std::vector<double>> t(cases.size());
  for (int round = 0; round < 41; ++round) {
    for (size_t c = 0; c < cases.size(); ++c) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 10; ++i) cases[c].run();
      t[c].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10);
    }
  }
  std::vector<double> med(cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    std::sort(t[c].begin(), t[c].end());
    med[c] = t[c][t[c].size() / 2];
  }
  std::printf("V = %zu, native, target %s, medians (ms)\n", V, bd::KernelTargetName());
  for (size_t c = 0; c < cases.size(); ++c) {
    std::printf("%-36s %.4f", cases[c].name, med[c]);
    if (cases[c].floor) std::printf(" %.2fx floor %d", med[c] / med[cases[c].floor - 1], cases[c].floor);
    std::printf("\n");
  }
  return 0;
}
