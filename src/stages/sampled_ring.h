// A sample of a large candidate row and the ring of histogram buckets around
// the boundary it places: top-p's and typical's first brackets on rows whose
// cut keeps most of the row (flat rows), where a histogram of every token
// costs more than the pass that gathers a ring (BandSumGatherRing). The
// sample is kRuns runs of kRun consecutive candidates, evenly spread
// (cheaper to read than a stride); its entries are binned kFine buckets to
// a bin, in the stage's own bucket coordinate. The boundary is placed from
// outside in: the mass beyond a flat row's cut is many light tokens, which a
// sample estimates far better than the heavy tokens inside.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/histogram.h"

namespace bd {
namespace sampled {

constexpr size_t kRuns = 16;
constexpr size_t kRun = 256;
constexpr uint32_t kFine = 8;  // buckets per bin
constexpr uint32_t kBins = kMassBuckets / kFine;
// A ring: kRingMargin of the sample on each side of the boundary (~6
// standard errors of a flat row's sampled tail mass), at most kRingShare of
// the sample, in buckets spanning kReachPerStop boundary distances (so the
// boundary's bucket holds tens to hundreds of tokens, not thousands).
constexpr double kRingMargin = 0.05;
constexpr double kRingShare = 0.15;
constexpr double kReachPerStop = 3.0;

// Calls f(begin, end) for each of the sample's runs of a row of len (every
// run_step-th run from run_first: a part of the sample, as evenly spread).
template <class F>
void ForEachSampleRun(size_t len, F f, size_t run_step = 1, size_t run_first = 0) {
  for (size_t run = run_first; run < kRuns; run += run_step) {
    const size_t begin = run * (len / kRuns);
    f(begin, std::min(len, begin + kRun));
  }
}

// The sample's weight and count per bin (arrays of kBins, overwritten);
// coord(v) is the bucket coordinate of a value (the last bucket also holds
// everything beyond). e need only hold the sampled entries (run_step and
// run_first: a part of the sample, ForEachSampleRun's). Returns the sample's
// size.
template <class Coord>
size_t BinSample(const float* v, const float* e, size_t len, Coord coord, double* mass,
                 uint32_t* count, size_t run_step = 1, size_t run_first = 0) {
  std::fill(mass, mass + kBins, 0.0);
  std::fill(count, count + kBins, 0u);
  size_t sampled = 0;
  const float last = static_cast<float>(kMassBuckets - 1);
  ForEachSampleRun(len, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const float x = coord(v[i]);
      const uint32_t bin =
          (x < last ? static_cast<uint32_t>(x) : static_cast<uint32_t>(kMassBuckets - 1)) / kFine;
      mass[bin] += e[i];
      ++count[bin];
    }
    sampled += end - begin;
  }, run_step, run_first);
  return sampled;
}

// The upper edge of bin b, in the coordinate's units at inv_width.
inline double BinEdge(uint32_t b, float inv_width) {
  return static_cast<double>((b + 1) * kFine) * (1.0 / static_cast<double>(inv_width));
}

// The buckets per unit that make kMassBuckets span `reach`, or inv_width
// when that would not narrow them.
inline float InvWidthForReach(double reach, float inv_width) {
  const double buckets = static_cast<double>(kMassBuckets);
  return reach < buckets * (1.0 / static_cast<double>(inv_width))
             ? static_cast<float>(buckets / reach)
             : inv_width;
}

// The first bin, from the last one in, where the sampled weight of it and
// the bins beyond, times scale, passes outside_max (kBins: none does).
inline uint32_t BinFromOutside(const double* mass, double scale, double outside_max) {
  double outside = 0.0;
  for (uint32_t b = kBins; b-- > 0;) {
    outside += mass[b] * scale;
    if (outside > outside_max) return b;
  }
  return kBins;
}

// The ring of buckets [*first, *limit) around bin `at`: bins added inward
// and outward until each side holds margin_share of the sample, and one bin
// more outward; outward never into the last two bins (the last bucket holds
// everything beyond), so where less of the sample than the margin lies
// beyond `at` (a cut in the far tail: typical 0.99 on a flat row, whose
// ring failed here) the ring takes what there is. False when it would hold
// more than max_share of the sample, or `at` itself is among those bins.
inline bool RingAround(const uint32_t* count, uint32_t at, size_t sampled, double margin_share,
                       double max_share, uint32_t* first, uint32_t* limit) {
  const double margin = margin_share * static_cast<double>(sampled);
  uint32_t inner = at, outer = at;
  size_t ring = count[at];
  for (size_t side = 0; inner > 0 && static_cast<double>(side) < margin;) {
    side += count[--inner];
    ring += count[inner];
  }
  for (size_t side = 0; outer + 3 < kBins && static_cast<double>(side) < margin;) {
    side += count[++outer];
    ring += count[outer];
  }
  if (static_cast<double>(ring) > max_share * static_cast<double>(sampled) || outer + 2 >= kBins) {
    return false;
  }
  *first = inner * kFine;
  *limit = (outer + 2) * kFine;
  return true;
}

}  // namespace sampled
}  // namespace bd
