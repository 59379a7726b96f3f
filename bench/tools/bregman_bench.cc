// bd_bregman_bench: native microbenchmark of the Bregman stage against the
// bench's floor (bench/floor: copy + max + sum of exp over the row), side by
// side in one run.
//   bd_bregman_bench [V] [reps] [primal|dual ALPHA TARGET_K]
// For each (divergence, alpha) it picks lambdas that give k ~ 10, ~1000 and
// >= V/2 on an LLM-like row (Zipf logits with noise, shuffled) and prints the
// median time per Sample (as the npm bench and wasm sample(): no objective)
// and per Decode (q and the objective: every kept token priced), and the
// ratios to the floor, and the map evaluations of the solvers' sums per
// Sample (nodes and tokens, BregmanProbes::map_terms; at the
// calibrated lambda and the mean over 8 lambdas from 0.5x to 2x of it).
// Timing lives here and in bench/, never in the unit tests.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bregman/bregman.h"
#include "test_hooks.h"
#include "decoder.h"
#include "floor/floor.h"

namespace {

std::vector<float> LlmRow(size_t v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> row(v);
  for (size_t i = 0; i < v; ++i) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    row[i] = static_cast<float>(-1.1 * std::log(i + 1.0) + 0.3 * (u - 0.5));
  }
  for (size_t i = v; i > 1; --i) std::swap(row[i - 1], row[rng() % i]);
  return row;
}

template <class F>
double MedianMs(int reps, F f) {
  std::vector<double> t;
  for (int i = 0; i < 3; ++i) f();
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t v = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 262144;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 15;
  const std::vector<float> row = LlmRow(v, 7);
  std::vector<float> copy(v);
  volatile double sink = 0.0;
  const double floor_ms = MedianMs(reps * 4, [&] {
    std::memcpy(copy.data(), row.data(), v * sizeof(float));
    sink = sink + FloorMaxSumExp(copy.data(), v);
  });
  bd::Decoder dec;
  std::printf("V=%zu floor (copy+max+sum exp) %.3f ms\n", v, floor_ms);

  struct Mode {
    bool dual;
    double alpha;
  };
  const Mode modes[] = {{false, 0.5}, {false, 1.5}, {false, 2.0}, {true, 1.5},
                        {false, 0.25}, {false, 3.0}, {false, 4.0}, {true, 3.0}, {false, 1.0}};
  const bool one = argc > 5;
  const Mode single{one && std::strcmp(argv[3], "dual") == 0, one ? std::atof(argv[4]) : 0.0};
  const Mode* first = one ? &single : modes;
  const Mode* last = one ? &single + 1 : modes + sizeof(modes) / sizeof(modes[0]);
  for (const Mode* mp = first; mp != last; ++mp) {
    const Mode& m = *mp;
    bd::DecodeOptions o;
    o.bregman_enabled = true;
    o.bregman.divergence = m.dual ? bd::BregmanDivergence::kDual : bd::BregmanDivergence::kPrimal;
    o.bregman.alpha = m.alpha;
    auto k_at = [&](double lambda) {
      o.bregman.lambda = lambda;
      dec.Decode(row.data(), v, o);
      return dec.k();
    };
    std::vector<size_t> targets = {10, 1000, v / 2};
    if (one) targets = {std::strtoul(argv[5], nullptr, 10)};
    for (size_t target : targets) {
      // Bisect log(lambda) for the largest lambda with k >= target.
      double lo = 1e-300, hi = 10.0;  // k(lo) large, k(hi) = 1
      // A TARGET_K written as a real number (1e-3, 0.5) is the lambda itself.
      if (one && std::strpbrk(argv[5], ".e") != nullptr) lo = hi = std::atof(argv[5]);
      for (int it = 0; it < 60 && hi / lo > 1.0001; ++it) {
        const double mid = std::sqrt(lo * hi);
        if (k_at(mid) >= target) lo = mid; else hi = mid;
      }
      const double lambda = lo;
      const size_t k = k_at(lambda);
      const double ms = MedianMs(reps, [&] { dec.Sample(row.data(), v, o); });
      const double decode_ms = MedianMs(reps, [&] { dec.Decode(row.data(), v, o); });
      auto terms_at = [&](double at) {
        o.bregman.lambda = at;
        const size_t before = bd::BregmanProbesOf(dec).map_terms;
        dec.Sample(row.data(), v, o);
        return bd::BregmanProbesOf(dec).map_terms - before;
      };
      const size_t terms = terms_at(lambda);
      // The calibrated lambda sits at a breakpoint of k (the probes around
      // the answer lie within ~1e-4 of it, where none settles): also the
      // mean over lambdas off it, as a user's would be.
      double off = 0.0;
      const double factors[] = {0.5, 0.6, 0.7, 0.85, 1.2, 1.4, 1.7, 2.0};
      for (double f : factors) off += static_cast<double>(terms_at(lambda * f));
      off /= sizeof(factors) / sizeof(factors[0]);
      o.bregman.lambda = lambda;
      std::printf("%-6s alpha=%-4g lambda=%-10.4g k=%-7zu sample %9.3f ms %7.1fx floor   "
                  "decode %9.3f ms %7.1fx   %zu map evaluations per sample (%.0f off the "
                  "breakpoint)\n",
                  m.dual ? "dual" : "primal", m.alpha, lambda, k, ms, ms / floor_ms, decode_ms,
                  decode_ms / floor_ms, terms, off);
      std::fflush(stdout);
    }
  }
  return sink == 12345.0;
}
