// Float64 references of the history stages (logit bias, penalties, DRY, no
// repeat n-gram), written plainly from their documented rules with maps and
// brute-force scans over the whole history: the oracles the allocation-free
// production stages are checked against. Shares no code with src/.
//
// Each takes the full row (float, -inf = not a candidate) and returns the
// edited row in double (-inf = removed), plus an error scale per token: the
// sum of the magnitudes of the terms the float32 stage combines, so a test
// can bound the stage's rounding by a few float ulps of it.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace ref::history {

struct Edited {
  std::vector<double> logit;  // -inf: not a candidate
  std::vector<double> scale;  // |terms| of the float arithmetic (0: untouched)
};

inline Edited Unedited(const std::vector<float>& row) {
  Edited e;
  for (float x : row) {
    e.logit.push_back(x);
    e.scale.push_back(0.0);
  }
  return e;
}

inline bool InVocab(long long id, size_t v) { return id >= 0 && id < static_cast<long long>(v); }

// Logit bias: add every usable bias (finite or -inf) in order, then ban, then
// keep only the allowed tokens when asked.
inline Edited LogitBias(const std::vector<float>& row, const std::vector<int32_t>& ids,
                        const std::vector<float>& bias, const std::vector<int32_t>& banned,
                        const std::vector<int32_t>& allowed, bool restrict_to_allowed) {
  Edited e = Unedited(row);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!InVocab(ids[i], row.size()) || std::isnan(bias[i]) || bias[i] == INFINITY) continue;
    double& l = e.logit[ids[i]];
    if (l == -INFINITY) continue;
    e.scale[ids[i]] += std::fabs(l) + std::fabs(bias[i]);
    l += bias[i];
  }
  for (int32_t t : banned)
    if (InVocab(t, row.size())) e.logit[t] = -INFINITY;
  if (restrict_to_allowed) {
    std::set<int32_t> keep(allowed.begin(), allowed.end());
    for (size_t t = 0; t < row.size(); ++t)
      if (!keep.count(static_cast<int32_t>(t))) e.logit[t] = -INFINITY;
  }
  return e;
}

// Whether a packed mask (XGrammar's layout: words of 32 bits, token t at bit
// t mod 32 of word floor(t / 32)) allows token t, by plain arithmetic.
inline bool MaskBit(const std::vector<uint32_t>& mask, size_t t) {
  const uint64_t word = mask[t / 32];
  const uint64_t place = uint64_t{1} << (t % 32);
  return (word / place) % 2 == 1;
}

// Logit bias with a packed allowed mask too: LogitBias, then every token
// whose mask bit is clear removed (the intersection with the allowed list
// when both are given). mask: ceil(row.size() / 32) words.
inline Edited LogitBiasMasked(const std::vector<float>& row, const std::vector<int32_t>& ids,
                              const std::vector<float>& bias,
                              const std::vector<int32_t>& banned,
                              const std::vector<int32_t>& allowed, bool restrict_to_allowed,
                              const std::vector<uint32_t>& mask) {
  Edited e = LogitBias(row, ids, bias, banned, allowed, restrict_to_allowed);
  for (size_t t = 0; t < row.size(); ++t)
    if (!MaskBit(mask, t)) e.logit[t] = -INFINITY;
  return e;
}

// Penalties (llama.cpp): count each token over the last last_n tokens (all
// when last_n < 0; none when 0); a counted token's logit is multiplied by the
// repetition penalty when <= 0 and divided by it otherwise, then loses
// count * frequency + presence.
inline Edited Penalties(const std::vector<float>& row, const std::vector<int32_t>& history,
                        double repetition, double frequency, double presence, int last_n) {
  Edited e = Unedited(row);
  if (last_n == 0 || (repetition == 1.0 && frequency == 0.0 && presence == 0.0)) return e;
  size_t start = 0;
  if (last_n > 0 && history.size() > static_cast<size_t>(last_n)) start = history.size() - last_n;
  std::map<int32_t, int> count;
  for (size_t i = start; i < history.size(); ++i) count[history[i]] += 1;
  for (const auto& [t, n] : count) {
    if (!InVocab(t, row.size()) || row[t] == -INFINITY) continue;
    double l = row[t];
    l = l <= 0.0 ? l * repetition : l / repetition;
    e.scale[t] = std::fabs(l) + n * std::fabs(frequency) + std::fabs(presence);
    e.logit[t] = l - (n * frequency + presence);
  }
  return e;
}

// No repeat n-gram (Hugging Face): the dictionary of (n-1)-gram -> next
// tokens over the whole history, looked up with its last n-1 tokens.
inline Edited NoRepeatNgram(const std::vector<float>& row, const std::vector<int32_t>& history,
                            int n) {
  Edited e = Unedited(row);
  if (n <= 0 || history.size() + 1 < static_cast<size_t>(n)) return e;
  std::map<std::vector<int32_t>, std::vector<int32_t>> ngrams;
  for (size_t i = 0; i + n <= history.size(); ++i) {
    std::vector<int32_t> head(history.begin() + i, history.begin() + i + n - 1);
    ngrams[head].push_back(history[i + n - 1]);
  }
  const std::vector<int32_t> tail(history.end() - (n - 1), history.end());
  for (int32_t t : ngrams[tail])
    if (InVocab(t, row.size())) e.logit[t] = -INFINITY;
  return e;
}

struct DryOptions {
  double multiplier = 0.0;
  double base = 1.75;
  int allowed_length = 2;
  int last_n = -1;
  std::vector<int32_t> breakers;
};

// DRY: for every position j of the window but the last, the longest common
// suffix of window[0..j] and the window, stopping at any breaker token; when
// it is at least allowed_length, the token after j would extend that repeat.
// Each non-breaker token is penalised by multiplier * base^(L - allowed) for
// its longest such L, the exponent clamped as llama.cpp does against float
// overflow.
inline Edited Dry(const std::vector<float>& row, const std::vector<int32_t>& history,
                  const DryOptions& o) {
  Edited e = Unedited(row);
  if (o.multiplier == 0.0 || !(o.base >= 1.0) || o.last_n == 0) return e;
  size_t start = 0;
  if (o.last_n > 0 && history.size() > static_cast<size_t>(o.last_n))
    start = history.size() - o.last_n;
  const std::vector<int32_t> w(history.begin() + start, history.end());
  const std::set<int32_t> breakers(o.breakers.begin(), o.breakers.end());
  std::map<int32_t, long long> longest;
  for (size_t j = 0; j + 1 < w.size(); ++j) {
    long long len = 0;
    while (len <= static_cast<long long>(j) && w[j - len] == w[w.size() - 1 - len] &&
           !breakers.count(w[w.size() - 1 - len]))
      ++len;
    if (len < o.allowed_length) continue;
    const int32_t t = w[j + 1];
    if (!longest.count(t) || longest[t] < len) longest[t] = len;
  }
  // The clamp is part of llama.cpp's rule, computed in float as it does.
  long long max_exponent = 0;
  if (static_cast<float>(o.base) > 1.000001f)
    max_exponent = static_cast<int>(88.7228391f / std::log(static_cast<float>(o.base)));
  for (const auto& [t, len] : longest) {
    if (!InVocab(t, row.size()) || row[t] == -INFINITY || breakers.count(t)) continue;
    long long x = len - o.allowed_length;
    if (max_exponent > 0 && x > max_exponent) x = max_exponent;
    const double penalty = o.multiplier * std::pow(o.base, static_cast<double>(x));
    e.scale[t] = std::fabs(row[t]) + penalty;
    e.logit[t] = row[t] - penalty;
  }
  return e;
}

}  // namespace ref::history
