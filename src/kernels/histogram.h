// Mass histogram over logit buckets: one pass that replaces a bisection's
// dozen mass passes when a cut by cumulative mass (top-p) must be found in a
// large set. Bucket j holds the entries with floor((max - v) * inv_width) == j
// (the last bucket also everything beyond, -inf included): bucket 0 holds the
// largest logits, and bucket order is logit order. Buckets by SIMD, masses
// added in index order: the same sums on every target.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bd {

constexpr size_t kMassBuckets = 4096;

// mass[j] = sum of e_i and count[j] = number of entries in bucket j
// (j < kMassBuckets; both arrays are overwritten; count may be null).
void MassHistogram(const float* v, const float* e, size_t n, float max, float inv_width,
                   double* mass, uint32_t* count);

// out[i] = the bucket of v[i] (as MassHistogram assigns it). One SIMD pass.
void BucketIndices(const float* v, size_t n, float max, float inv_width, uint32_t* out);

// The same over the distance to a centre (typical's band around the logit of
// typical surprise): bucket j holds the entries with
// floor(|v - center| * inv_width) == j (the last also everything beyond).
void DistanceBucketIndices(const float* v, size_t n, float center, float inv_width,
                           uint32_t* out);
void DistanceHistogram(const float* v, const float* e, size_t n, float center, float inv_width,
                       double* mass, uint32_t* count);

// The values v whose distance bucket (as DistanceBucketIndices assigns it) is
// below limit (1 <= limit < kMassBuckets): the float interval [*lo, *hi]
// (the coordinate falls toward the centre and grows past it).
void DistanceBucketBand(float center, float inv_width, uint32_t limit, float* lo, float* hi);

// DistanceHistogram's buckets below `limit` from the entries ids[0..m) of v
// (ascending, their values in vals; every one in a bucket below limit, as
// a gather of DistanceBucketBand's interval gives them) with weights e[id]:
// the same sums as DistanceHistogram's for those buckets (each bucket's
// entries added in index order). Buckets from limit on are left as they were.
// ids null: the weights come list-aligned, entry j's in e[j].
void DistanceHistogramOf(const int32_t* ids, const float* vals, size_t m, const float* e,
                         float center, float inv_width, uint32_t limit, double* mass,
                         uint32_t* count);

// The smallest float v with (max - v) * inv_width < k (computed exactly as the
// histogram does), so {entries with bucket < k} = {v >= it}. 1 <= k.
float BucketThreshold(float max, float inv_width, uint32_t k);

}  // namespace bd
