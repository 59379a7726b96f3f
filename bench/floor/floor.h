// The benchmark's floor (see floor.cc): not part of the library.
#pragma once

#include <cstddef>

// Max over x[0, n).
float FloorMax(const float* x, size_t n);
// Max, then sum of exp(x - max) over x[0, n) (float lanes flushed to double).
double FloorMaxSumExp(const float* x, size_t n);
