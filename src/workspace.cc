#include "workspace.h"

#include "kernels/blocks.h"
#include "kernels/histogram.h"
#include "kernels/key_sort.h"
#include "kernels/threshold.h"

namespace bd {

void Workspace::Reserve(size_t vocab) {
  const size_t n = vocab + kCompressSlack;
  if (row.size() >= n) return;
  row.resize(n);
  block_max.resize(NumBlocks(vocab) + 1);
  block_sums.resize(NumBlocks(vocab) + 1);
  block_scratch.resize(NumBlocks(vocab) + 1);
  row_exp.resize(n);
  hist_mass.resize(kMassBuckets);
  hist_count.resize(kMassBuckets);
  ids.resize(n);
  logits.resize(n);
  tmp_ids.resize(n);
  tmp_logits.resize(n);
  keys.resize(n);
  sort_scratch.resize(n);
  if (vocab >= kWideRadixMin) radix_counts.resize(kWideRadixCounts);
  probs.resize(n);
  stage_i32.resize(n);
  stage_f32.resize(n);
  stage_f64.resize(n);
  out_ids.resize(n);
  out_probs.resize(n);
}

namespace {
// Bytes per token of the row's buffers (Reserve: 72 per vocab + slack
// entry, adaptive-p's 8 more where it runs) and of Bregman's (q, scratch, powers, prefix_p, 8 mass lanes and the
// sketch's nodes), each with room for a vector's growth past its need; and a
// part independent of the vocabulary (histograms, radix counts, top_logprobs).
constexpr size_t kRowBytesPerToken = 96;
constexpr size_t kBregmanBytesPerToken = 256;
constexpr size_t kFixedBytes = size_t{1} << 20;
}  // namespace

size_t WorkspaceBytesBound(size_t vocab, bool bregman) {
  const size_t tokens = vocab + kCompressSlack;
  return kFixedBytes + tokens * (kRowBytesPerToken + (bregman ? kBregmanBytesPerToken : 0));
}

}  // namespace bd
