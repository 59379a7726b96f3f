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
#include <functional>
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
  else if (name == "p_less") {
    o.p_less.mode = value == "norm" ? bd::PLessMode::kNorm
                    : value == "true" ? bd::PLessMode::kPLess
                                      : bd::PLessMode::kOff;
  } else if (name == "top_h") o.top_h.coefficient = static_cast<float>(x);
  else if (name == "adaptive_target") o.adaptive_p.target = static_cast<float>(x);
  else if (name == "adaptive_decay") o.adaptive_p.decay = static_cast<float>(x);
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

// One job of the file: its row, config id and the call it times.
struct Job {
  std::string row_path, config;
  std::function<void()> call;
  bool is_floor = false;
  bool ok = true;  // every Sample() call succeeded
  double value = 0.0;
};

// Round-robin over every job: each round times one batch of each job
// (batches of at least ~0.5 ms), so a ratio of two jobs' times from the
// same rounds sees the same machine (the shared machine's load drifts over
// seconds). Each batch follows one untimed call of its job (its own caches,
// as MedianMs's repeated calls have them). Prints one line per job with its
// per-call ms of every round (bench/suite.mjs's roundRobin, natively).
void RunRounds(std::vector<Job>& jobs, int rounds) {
  using Clock = std::chrono::steady_clock;
  std::vector<int> batch(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    jobs[j].call();
    const auto t0 = Clock::now();
    jobs[j].call();
    const double single = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    batch[j] = static_cast<int>(std::clamp(std::ceil(0.5 / std::max(single, 1e-4)), 1.0, 1000.0));
  }
  std::vector<std::vector<double>> times(jobs.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      jobs[j].call();
      const auto t0 = Clock::now();
      for (int b = 0; b < batch[j]; ++b) jobs[j].call();
      times[j].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() /
                         batch[j]);
    }
  }
  for (size_t j = 0; j < jobs.size(); ++j) {
    std::printf("{\"row\":\"%s\",\"config\":\"%s\",\"batch\":%d,\"times\":[",
                jobs[j].row_path.c_str(), jobs[j].config.c_str(), batch[j]);
    for (size_t r = 0; r < times[j].size(); ++r) std::printf("%s%.6f", r ? "," : "", times[j][r]);
    std::printf("]}\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // bd_native_bench JOBS.tsv MAX_REPS BUDGET_MS    (a median per job, job by job)
  // bd_native_bench --rounds N JOBS.tsv             (every job in each of N rounds)
  const bool by_rounds = argc == 4 && std::string(argv[1]) == "--rounds";
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s JOBS.tsv MAX_REPS BUDGET_MS | --rounds N JOBS.tsv\n", argv[0]);
    return 2;
  }
  const char* jobs_path = by_rounds ? argv[3] : argv[1];
  const int max_reps = by_rounds ? 0 : std::atoi(argv[2]);
  const double budget_ms = by_rounds ? 0.0 : std::strtod(argv[3], nullptr);
  std::ifstream jobs_file(jobs_path);
  // Rows by path, kept at fixed addresses (the jobs' calls refer to them).
  std::map<std::string, std::vector<float>> rows;
  bd::Decoder dec;
  // The floors' destination, allocated outside the timing (as large as the
  // largest row).
  std::vector<float> copy;
  std::vector<Job> jobs;
  std::string line;
  while (std::getline(jobs_file, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string row_path, config, kv;
    std::getline(fields, row_path, '\t');
    std::getline(fields, config, '\t');
    if (!rows.count(row_path)) rows[row_path] = ReadRow(row_path);
    const std::vector<float>* row = &rows[row_path];
    if (copy.size() < row->size()) copy.resize(row->size());
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
    jobs.push_back(Job{row_path, config, nullptr, !floor_kind.empty()});
    Job& job = jobs.back();
    const size_t j = jobs.size() - 1;
    // The floors copy the row first, as the library does (into its workspace)
    // and as every wasm call does (into the heap); max_no_copy does not.
    if (floor_kind == "max") {
      job.call = [&jobs, &copy, row, j] {
        std::copy(row->begin(), row->end(), copy.begin());
        jobs[j].value = FloorMax(copy.data(), row->size());
      };
    } else if (floor_kind == "max_sum_exp") {
      job.call = [&jobs, &copy, row, j] {
        std::copy(row->begin(), row->end(), copy.begin());
        jobs[j].value = FloorMaxSumExp(copy.data(), row->size());
      };
    } else if (floor_kind == "max_no_copy") {
      job.call = [&jobs, row, j] { jobs[j].value = FloorMax(row->data(), row->size()); };
    } else if (!floor_kind.empty()) {
      std::fprintf(stderr, "unknown floor %s\n", floor_kind.c_str());
      return 2;
    } else {
      job.call = [&jobs, &dec, row, j, o] {
        jobs[j].ok = jobs[j].ok && dec.Sample(row->data(), row->size(), o) == bd::StatusCode::kOk;
      };
    }
  }
  if (by_rounds) {
    RunRounds(jobs, std::atoi(argv[2]));
    for (const Job& job : jobs) {
      if (!job.ok) {
        std::fprintf(stderr, "%s %s: %s\n", job.row_path.c_str(), job.config.c_str(), dec.error());
        return 1;
      }
    }
    return 0;
  }
  for (Job& job : jobs) {
    int reps = 0;
    const double ms = MedianMs(job.call, max_reps, budget_ms, &reps);
    if (!job.ok) {
      std::fprintf(stderr, "%s %s: %s\n", job.row_path.c_str(), job.config.c_str(), dec.error());
      return 1;
    }
    long token = -1, k = 0;
    if (!job.is_floor) {
      token = dec.token();
      k = static_cast<long>(dec.k());
    }
    std::printf("{\"row\":\"%s\",\"config\":\"%s\",\"ms\":%.6f,\"reps\":%d,\"token\":%ld,\"k\":%ld,\"value\":%.9g}\n",
                job.row_path.c_str(), job.config.c_str(), ms, reps, token, k, job.value);
    std::fflush(stdout);
  }
  return 0;
}
