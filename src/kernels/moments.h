// Moment passes over one logits row (or a candidate list) for the
// distribution-shaping stages: the softmax entropy (typical, eta, dynamic
// temperature), weighted band sums (typical's bisection on the distance to the
// entropy) and the mean / variance of the finite logits (top-n-sigma). Each is
// one SIMD pass, no allocation; sums are order-fixed (virtual_lanes-inl.h,
// the same bits on every target), ~1e-7 relative accuracy.
#pragma once

#include <cstddef>

namespace bd {

struct ExpMomentSums {
  double sum_e;   // sum_i e_i,        e_i = exp(x_i)
  double sum_ex;  // sum_i e_i * x_i,  x_i = (v_i - max) * scale
};

// One pass over v[0..n): e_i = exp((v_i - max) * scale) and the two sums
// above; -inf entries give e_i = 0 and contribute 0 to both (no NaN). With
// scale = 1/T the softmax entropy is H = log(sum_e) - sum_ex / sum_e.
// `out` (may be null) receives e_i; it may alias nothing else.
ExpMomentSums ExpMoments(const float* v, size_t n, float max, float scale, float* out);

struct ExpSquareSums {
  double sum_e;   // sum_i e_i,   e_i = exp((v_i - max) * scale)
  double sum_e2;  // sum_i e_i^2
};

// One pass over v[0..n): the sums of e_i and of e_i^2 (e_i^2 the float
// product); -inf entries contribute 0 to both. With scale = 1/T the
// collision probability of the softmax is sum p^2 = sum_e2 / sum_e^2 (p-less).
ExpSquareSums ExpSquares(const float* v, size_t n, float max, float scale);

struct BandTotals {
  size_t count;  // number of i with lo <= v_i <= hi
  double sum_w;  // sum of w_i over them
};

// Count and weight of the entries whose value lies in the closed band
// [lo, hi] (NaN is never inside). One pass over v and w.
BandTotals BandSum(const float* v, const float* w, size_t n, float lo, float hi);

// BandSum's weight, per kBlock-block of v into block_sums as SumBlocks
// (softmax.h) leaves them for w with the entries outside the band set to 0;
// returns their total. The draw over a band of the row left ungathered
// (DrawHint::kRowBand): one read of the row and its exps.
double SumBandBlocks(const float* v, const float* w, size_t n, float lo, float hi,
                     float* block_sums);

struct FiniteMomentSums {
  size_t count;   // number of finite entries (v_i >= -FLT_MAX; -inf excluded)
  double sum_d;   // sum of (v_i - center) over them
  double sum_d2;  // sum of (v_i - center)^2 over them
};

// Shifted first and second moments of the finite entries (float64 one by one
// up to 256 entries, order-fixed virtual lanes beyond). Calling it twice,
// the second time centred on the mean of the first, gives the population
// variance sum_d2/count - (sum_d/count)^2 without cancellation.
FiniteMomentSums FiniteMoments(const float* v, size_t n, float center);

// The parts of FiniteMoments a caller that knows the finite count needs, with
// the same bits as FiniteMoments' fields (same terms, same lanes) for less
// arithmetic: sum_d alone (the centring pass), and sum_d with sum_d2 (count
// is left 0).
double FiniteDeviationSum(const float* v, size_t n, float center);
FiniteMomentSums FiniteSpread(const float* v, size_t n, float center);

}  // namespace bd
