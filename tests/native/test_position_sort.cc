// SortPositionsByKey against the plain rule it implements: positions ordered
// by key ascending, equal keys by token id ascending, on keys with many ties,
// signed zeros, infinities and the top-p use (-v for v descending).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stages/position_sort.h"

namespace {

// The rule written plainly: a stable sort of (key, id) pairs.
std::vector<size_t> ByKeyThenId(const std::vector<double>& key, const std::vector<int32_t>& id) {
  std::vector<size_t> order(key.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (key[a] < key[b]) return true;
    if (key[b] < key[a]) return false;
    return id[a] < id[b];
  });
  return order;
}

std::vector<size_t> Sorted(const std::vector<double>& key, const std::vector<int32_t>& id) {
  std::vector<uint64_t> entries(key.size());
  for (size_t j = 0; j < key.size(); ++j) entries[j] = bd::PositionWithId(id[j], j);
  bd::SortPositionsByKey(key.data(), entries.data(), entries.size());
  std::vector<size_t> order(key.size());
  for (size_t j = 0; j < key.size(); ++j) order[j] = bd::PositionOf(entries[j]);
  return order;
}

}  // namespace

TEST_CASE("SortPositionsByKey orders by key, ties by lower id, as the plain rule") {
  std::mt19937_64 gen(20261207);
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, 1e-300, -1e-300, 3.5};
  for (size_t n : {0, 1, 2, 3, 16, 17, 31, 100, 1000, 5000}) {
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<double> key(n);
      std::vector<int32_t> id(n);
      // Distinct ids in shuffled order, up to the largest token id.
      for (size_t j = 0; j < n; ++j) id[j] = static_cast<int32_t>(j * 7919 % 2147483647);
      if (trial == 7 && n > 0) id[0] = INT32_MAX;
      std::shuffle(id.begin(), id.end(), gen);
      for (size_t j = 0; j < n; ++j) {
        const uint64_t r = gen();
        key[j] = (r % 4 == 0) ? specials[r / 4 % 7]
                 : static_cast<double>(static_cast<float>(static_cast<int>(r % 13) - 6) * 0.25f);
      }
      CHECK(Sorted(key, id) == ByKeyThenId(key, id));
    }
  }
}

TEST_CASE("SortPositionsByKey on -v sorts v descending, ties (and +0 / -0) by lower id") {
  std::mt19937 gen(7);
  const size_t n = 777;
  std::vector<float> v(n);
  std::vector<int32_t> id(n);
  std::vector<double> key(n);
  for (size_t j = 0; j < n; ++j) {
    v[j] = (j % 5 == 0) ? ((j % 2) ? 0.0f : -0.0f) : static_cast<float>(gen() % 9) - 4.0f;
    id[j] = static_cast<int32_t>(n - j);
    key[j] = -static_cast<double>(v[j]);
  }
  const std::vector<size_t> got = Sorted(key, id);
  for (size_t j = 1; j < n; ++j) {
    const size_t a = got[j - 1], b = got[j];
    CHECK((v[a] > v[b] || (v[a] == v[b] && id[a] < id[b])));
  }
}
