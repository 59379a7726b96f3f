#include "stages/position_sort.h"

#include <algorithm>

namespace bd {

void SortPositionsByKey(const double* key, uint64_t* entries, size_t n) {
  std::sort(entries, entries + n, [key](uint64_t x, uint64_t y) {
    const double a = key[PositionOf(x)], b = key[PositionOf(y)];
    if (a != b) return a < b;
    return (x >> 32) < (y >> 32);
  });
}

}  // namespace bd
