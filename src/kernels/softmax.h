// Softmax building blocks over one logits row. Probabilities are
// exp((x - max) * scale) / Z. Every element's exp is ExpF32 (exp-inl.h) and Z
// is summed in order-fixed virtual lanes (virtual_lanes-inl.h): the same bits
// on every SIMD target, natively and in wasm; ~1e-7 relative accuracy.
#pragma once

#include <cstddef>

namespace bd {

// sum_i exp((row[i] - max) * scale). -inf entries contribute 0. One SIMD pass.
double ExpSum(const float* row, size_t n, float max, float scale);

// sum of exp((row[i] - cut) * scale) over the entries below cut, and in
// *equal the count of entries equal to cut. One SIMD pass, the same bits on
// every target. With scale = a / T, cut the last kept logit, and a factor
// p_cut^a, it is the Bregman objective's dropped tail sum_i p_i^a, each term
// taken relative to the tail's largest, so the tail keeps float's relative
// precision however small it is next to the kept head.
double ExpSumBelow(const float* row, size_t n, float cut, float scale, double* equal);

// sum of exp((row[i] - cut) * scale) over the entries at or below cut (one
// equal to cut adds exactly 1), in one sum: where nothing at the cut is to be
// taken off again (the Bregman stage's normaliser: the row below its sorted
// head's last distinct logit, relative to it). One SIMD pass, the same bits
// on every target. (ExpSumBelow keeps the ties apart: taking kept ties off a
// float sum of 1 + a tiny tail would lose the tail.)
double ExpSumAtMost(const float* row, size_t n, float cut, float scale);

// out[i] = exp((row[i] - max) * scale); returns their sum. One SIMD pass.
// `out` may alias `row`.
double ExpWrite(const float* row, size_t n, float max, float scale, float* out);

// ExpSum that also leaves each kBlock-element block's sum (as a float, the
// very value added into the total) in block_sums[NumBlocks(n)]: the draw
// walks these, then recomputes one block's exps with ExpWrite.
double ExpBlockSums(const float* row, size_t n, float max, float scale, float* block_sums);

// ExpBlockSums for exps already computed: e[i] = exp((row[i] - max) * scale)
// as the exp pass wrote them (ExpWrite) gives the same block sums and total,
// bit for bit, without recomputing one exp (the draw over a list gathered from
// a row whose exps a stage already wrote).
double SumBlocks(const float* e, size_t n, float* block_sums);

}  // namespace bd
