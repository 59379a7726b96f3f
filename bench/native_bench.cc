// bd_native_bench: the native side of `npm run bench`. Times the native
// library (bd::Decoder::Sample, Highway dynamic dispatch) and the native floor
// (bench/floor) on the same rows and options the JS side uses, and prints one
// JSON object per line.
//   bd_native_bench JOBS.tsv MAX_REPS BUDGET_MS
// JOBS.tsv: one job per line, tab-separated: row file (.f32), config id,
// then name=value options (the JS option names; bregman_divergence,
// bregman_alpha, bregman_lambda for Bregman), or `floor=max`,
// `floor=max_sum_exp` (both after a copy of the row) or `floor=max_no_copy`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "decoder.h"
#include "floor/floor.h"

namespace {

bool Set(bd::DecodeOptions& o, const std::string& name, const std::string& value) {
  const char* v = value.c_str();
  const double x = std::strtod(v, nullptr);
  if (name == "seed") o.seed = std::strtoull(v, nullptr, 10);
  else if (name == "step") o.step = std::strtoull(v, nullptr, 10);
  else if (name == "temperature") { o.temperature = static_cast<float>(x); o.dynatemp.temperature = o.temperature; }
  else if (name == "top_k") o.top_k = static_cast<int32_t>(x);
  else if (name == "top_p") o.top_p = static_cast<float>(x);
  else if (name == "min_p") o.min_p = static_cast<float>(x);
  else if (name == "typical_p") o.typical.p = static_cast<float>(x);
  else if (name == "bregman_divergence") {
    o.bregman_enabled = true;
    o.bregman.divergence = value == "dual" ? bd::BregmanDivergence::kDual : bd::BregmanDivergence::kPrimal;
  } else if (name == "bregman_alpha") { o.bregman_enabled = true; o.bregman.alpha = x; }
  else if (name == "bregman_lambda") { o.bregman_enabled = true; o.bregman.lambda = x; }
  else return false;
  return true;
}

std::vector<float> ReadRow(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  std::vector<float> row(static_cast<size_t>(f.tellg()) / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(row.data()), static_cast<std::streamsize>(row.size() * sizeof(float)));
  return row;
}

// Median milliseconds of fn over up to max_reps calls (at least 5, 3 over
// 100 ms, stopping
// once budget_ms is spent), after two warm-up calls; a call slower than
// kSlowMs is timed once (its warm-up). The same policy as bench/suite.mjs.
constexpr double kSlowMs = 1000.0;
template <typename Fn>
double MedianMs(Fn fn, int max_reps, double budget_ms, int* reps_done) {
  using Clock = std::chrono::steady_clock;
  const auto w0 = Clock::now();
  fn();
  const double first = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
  if (first > kSlowMs) {
    *reps_done = 1;
    return first;
  }
  const auto w1 = Clock::now();
  fn();
  const double single = std::chrono::duration<double, std::milli>(Clock::now() - w1).count();
  const int min_reps = single > 100.0 ? 3 : 5;
  std::vector<double> t;
  const auto start = Clock::now();
  for (int r = 0; r < max_reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    const auto t1 = Clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (r >= min_reps - 1 && std::chrono::duration<double, std::milli>(t1 - start).count() > budget_ms) break;
  }
  *reps_done = static_cast<int>(t.size());
  std::sort(t.begin(), t.end());
  const size_t m = t.size() / 2;
  return t.size() % 2 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s JOBS.tsv MAX_REPS BUDGET_MS\n", argv[0]);
    return 2;
  }
  const int max_reps = std::atoi(argv[2]);
  const double budget_ms = std::strtod(argv[3], nullptr);
  std::ifstream jobs(argv[1]);
  std::map<std::string, std::vector<float>> rows;
  bd::Decoder dec;
  std::vector<float> copy;  // the floors' destination (allocated outside the timing)
  std::string line;
  while (std::getline(jobs, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string row_path, config, kv;
    std::getline(fields, row_path, '\t');
    std::getline(fields, config, '\t');
    if (!rows.count(row_path)) rows[row_path] = ReadRow(row_path);
    const std::vector<float>& row = rows[row_path];
    copy.resize(row.size());
    bd::DecodeOptions o;
    std::string floor_kind;
    while (std::getline(fields, kv, '\t')) {
      const size_t eq = kv.find('=');
      const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
      if (name == "floor") floor_kind = value;
      else if (eq == std::string::npos || !Set(o, name, value)) {
        std::fprintf(stderr, "unknown option %s\n", kv.c_str());
        return 2;
      }
    }
    int reps = 0;
    double ms = 0.0, value = 0.0;
    long token = -1, k = 0;
    // The floors copy the row first, as the library does (into its workspace)
    // and as every wasm call does (into the heap); max_no_copy does not.
    if (floor_kind == "max") {
      ms = MedianMs([&] {
        std::copy(row.begin(), row.end(), copy.begin());
        value = FloorMax(copy.data(), copy.size());
      }, max_reps, budget_ms, &reps);
    } else if (floor_kind == "max_sum_exp") {
      ms = MedianMs([&] {
        std::copy(row.begin(), row.end(), copy.begin());
        value = FloorMaxSumExp(copy.data(), copy.size());
      }, max_reps, budget_ms, &reps);
    } else if (floor_kind == "max_no_copy") {
      ms = MedianMs([&] { value = FloorMax(row.data(), row.size()); }, max_reps, budget_ms, &reps);
    } else {
      bool ok = true;
      ms = MedianMs([&] { ok = ok && dec.Sample(row.data(), row.size(), o) == bd::StatusCode::kOk; },
                    max_reps, budget_ms, &reps);
      if (!ok) {
        std::fprintf(stderr, "%s %s: %s\n", row_path.c_str(), config.c_str(), dec.error());
        return 1;
      }
      token = dec.token();
      k = static_cast<long>(dec.k());
    }
    std::printf("{\"row\":\"%s\",\"config\":\"%s\",\"ms\":%.6f,\"reps\":%d,\"token\":%ld,\"k\":%ld,\"value\":%.9g}\n",
                row_path.c_str(), config.c_str(), ms, reps, token, k, value);
    std::fflush(stdout);
  }
  return 0;
}
