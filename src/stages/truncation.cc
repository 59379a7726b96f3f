// top-k, top-p and min-p: truncations defined on the sorted candidates. None
// sorts the vocabulary: top-k asks EnsureSorted for just the prefix it needs,
// top-p walks a small sorted prefix and otherwise bisects on a mass threshold,
// min-p is a threshold.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/det_math.h"
#include "kernels/exp_f64.h"
#include "kernels/histogram.h"
#include "kernels/moments.h"
#include "kernels/softmax.h"
#include "kernels/threshold.h"
#include "stages/sampled_ring.h"
#include "stages/stages.h"

namespace bd {

// Largest sorted prefix top-p walks before it switches to a threshold search.
constexpr size_t kTopPSortedPrefix = 256;

void ApplyTopK(Candidates& c, size_t k, Workspace& ws) {
  if (k == 0 || k >= c.Count()) return;
  EnsureSorted(c, k, ws);
  TruncateToSorted(c, k);
}

namespace {

// The nucleus is larger than a small sorted prefix: one histogram pass of
// mass per logit bucket (kMassBuckets buckets over [max - 104 T, max]) finds
// the bucket that holds the boundary; that bucket is the band [lo, hi). Only
// the band's tokens are gathered (a band of more than kTopPBand tokens is
// narrowed by histograms over its own tokens, no pass over the row) and
// sorted. The kept set is what the sorted walk would keep: every logit >= hi,
// then the band in order (logit descending, lower id first) until the mass
// reaches the target. On the row one gather then takes the nucleus with its
// exps (the draw's list_exp); a list is compacted.
constexpr size_t kTopPBand = 1024;

// The first bucket b with above + mass[0..b] >= target (the last one when
// none is); above gains the mass of the buckets before it.
size_t BoundaryBucket(const double* mass, double target, double& above) {
  size_t b = 0;
  while (b + 1 < kMassBuckets && !(above + mass[b] >= target)) above += mass[b++];
  return b;
}

// The logit band [lo, hi) of bucket b of a histogram with origin `origin`
// (coordinate (origin - v) * inv_width): lo = `below` for the last bucket
// (it holds everything further down), hi = `above` for bucket 0.
struct Band {
  float lo, hi;
};
Band BucketBand(float origin, float inv_width, size_t b, float below, float above) {
  return Band{b + 1 < kMassBuckets
                  ? BucketThreshold(origin, inv_width, static_cast<uint32_t>(b + 1))
                  : below,
              b > 0 ? BucketThreshold(origin, inv_width, static_cast<uint32_t>(b)) : above};
}

// The row's prefilter (see TopPByThreshold): from this many entries on.
constexpr size_t kPrefilterMin = 16384;
constexpr size_t kPrefilterSample = 4096;  // entries of the strided sample

// The share of the mass the nucleus leaves out that the prefilter's tail
// may hold, by the sample's estimate.
constexpr double kPrefilterMargin = 0.8;

// The prefilter's tail in a sample's n bins: the first of the bins, from
// the last one in (never bin 0), whose summed mass stays within budget, and
// (*samples) the sampled entries in them; n where not even the last fits.
size_t PrefilterTail(const double* mass, const uint32_t* count, size_t n, double budget,
                     size_t* samples) {
  double tail = 0.0;
  size_t first = n;
  *samples = 0;
  for (size_t k = n; k-- > 1;) {
    if (tail + mass[k] > budget) break;
    tail += mass[k];
    *samples += count[k];
    first = k;
  }
  return first;
}

// The prefilter's list, once gathered (n entries >= the threshold of bucket
// k_low, with their exps in ws.stage_f32, in ws.ids / ws.logits): its
// histogram (ws.hist_mass), and c becomes that list when the boundary lies
// among its complete buckets (else false, and c is the row again).
bool FinishPrefilter(Candidates& c, float max, float inv_width, size_t n, size_t k_low,
                     double target, Workspace& ws) {
  double* mass = ws.hist_mass.data();
  MassHistogram(ws.logits.data(), ws.stage_f32.data(), n, max, inv_width, mass, nullptr);
  double above = 0.0;
  size_t b = 0;
  while (b < k_low && !(above + mass[b] >= target)) above += mass[b++];
  // The gather overwrote the row's sorted-prefix cache (ws.ids / ws.logits).
  c.ids = ws.ids.data();
  c.logits = ws.logits.data();
  if (b >= k_low) {
    c.size = 0;
    c.sorted = 0;
    return false;
  }
  c.size = n;
  c.sorted = 0;
  c.truncated = true;
  c.probs_valid = false;
  c.list_exp = nullptr;
  ++ws.probes.top_p_prefilter_hits;
  return true;
}

// A row's top-p, restricted to its top: a strided sample of the row's exps
// estimates how many of the lowest buckets hold at most kPrefilterMargin (80 %) of the
// mass the nucleus leaves out (the first bucket k_low of that tail); the row's
// entries above it, t_low = BucketThreshold(k_low), are gathered with their
// exps (ws.ids / ws.logits / ws.stage_f32) and histogrammed. {v >= t_low} is
// exactly the buckets below k_low, whose masses are then the very sums the
// full row's histogram has (the same entries added in the same order): if
// the boundary lies among them, the cut is the one the full histogram
// finds, and c becomes that list. Else (the sample misled, or the tail holds
// under half the row's entries) false, and c is the row again.
bool TopPPrefilter(Candidates& c, float max, float inv_width, const float* e, double z,
                   double target, Workspace& ws) {
  const size_t count = c.vocab;
  const size_t stride = count / kPrefilterSample;
  double* mass = ws.hist_mass.data();
  uint32_t* in_bucket = ws.hist_count.data();
  std::fill(mass, mass + kMassBuckets, 0.0);
  std::fill(in_bucket, in_bucket + kMassBuckets, 0u);
  size_t sampled = 0;
  const float last = static_cast<float>(kMassBuckets - 1);
  for (size_t i = 0; i < count; i += stride, ++sampled) {
    const float x = (max - c.row[i]) * inv_width;  // an estimate: any bucket rule would do
    const size_t b = x < last ? static_cast<size_t>(x) : kMassBuckets - 1;
    mass[b] += e[i];
    ++in_bucket[b];
  }
  size_t tail_samples;
  const size_t k_low =
      PrefilterTail(mass, in_bucket, kMassBuckets,
                    kPrefilterMargin * (z - target) / static_cast<double>(stride), &tail_samples);
  if (k_low >= kMassBuckets || 2 * tail_samples < sampled) return false;
  const float t_low = BucketThreshold(max, inv_width, static_cast<uint32_t>(k_low));
  float* list_e = ws.stage_f32.data();
  const bool few = 4 * (sampled - tail_samples) < sampled;
  const size_t n =
      few ? GatherAtLeastWithSparse(c.row, count, t_low, ws.ids.data(), ws.logits.data(),
                                    RowBlocks(c), e, list_e)
          : GatherAtLeastWith(c.row, count, t_low, ws.ids.data(), ws.logits.data(), RowBlocks(c),
                              e, list_e);
  return FinishPrefilter(c, max, inv_width, n, k_low, target, ws);
}

// The ring (see TopPRing), from this many entries on: below it the sample (16 x 256 entries, binned
// twice) is too large a share of the row. Side by side in wasm (flat rows,
// top-p 0.9): V = 32 000 5-9 % slower with the ring, 65 536 and 128 256 the
// same, 262 144 3 % faster; natively 15 % faster from 128 256 on.
constexpr size_t kRingMin = 65536;

// A large nucleus that the prefilter refused (a flat row: most of the row
// is kept), without the row's histogram: a sample of the row's exps places
// the boundary; buckets at a reach cut to a few times its distance from the
// max form a ring around it (sampled_ring.h's parameters);
// one branch-free pass gathers the ring's tokens (ascending ids, into
// ws.ids / ws.logits: the row's sorted-prefix cache, dropped) and weighs
// everything above it (BandSumGatherRing: BandSum's float-lane sums), and
// the ring's tokens alone are histogrammed. Returns the boundary's bucket
// band, the mass above it and the ring; false when the sample cannot place
// a ring or the boundary lies outside it (then the caller takes the row's
// histogram). The mass above enters as one float-lane sum, not bucket sums
// in double, so a cut can move only where the walk's margin is below ~1e-7
// of the mass (inside the target's 1e-6 fuzz).
struct TopPRingCut {
  float lo, hi;        // the boundary bucket's band [lo, hi)
  double above;        // mass of the entries >= hi
  size_t n;            // ring tokens, in ws.ids / ws.logits
  size_t above_hole;   // entries above the ring (the hole's count)
};

// Top-p's target share of Z: the nucleus is the first mass reaching
// p (1 - 1e-6) Z (the fuzz absorbs the float sums' rounding).
double TopPShare(double p) { return p * (1.0 - 1e-6); }

// Top-p's histogram buckets per logit unit: kMassBuckets over
// [max - 104 T, max] (every exp is exactly 0 below).
float TopPInvWidth(const Candidates& c) {
  return static_cast<float>(kMassBuckets / (104.0 * c.temperature));
}

// The quarter of the sample that decides whether a ring is placed before
// the exp pass: every kQuarterStep-th run from kQuarterFirst.
constexpr size_t kQuarterStep = 4;
constexpr size_t kQuarterFirst = 2;

// Where a ring goes: the buckets [first, limit) at inv buckets per logit
// unit from the max; the hole above it is {v >= t_hi}, the ring's lower
// edge t_lo.
struct TopPRingPlace {
  float inv;
  uint32_t first, limit;
  float t_lo, t_hi;
};

// The row's head before the exp pass: its entries at or above the
// (blocks / kHeadShare)-th largest block maximum (t), and their weight z,
// summed exactly. The sample estimates a flat row's z well, but a peaked
// row's z is mostly a few heavy tokens that runs of the row catch only by
// chance: on the bench's LLM-shaped row (V = 262 144) the sample's z was
// 1.6 for 5.0, so top-p 0.95's and 0.99's rings went before the exp pass,
// placed for a third of the tail, and missed. Only the blocks whose maximum
// reaches t are read (a sixteenth of the row). No head (t = +inf) where the
// block maxima weigh under kHeadWeight of the sample's z (a flat row's: 4 %
// on the bench's), which costs one exp per block.
struct RowHead {
  float t;   // +inf: no head
  double z;  // sum of exp((v - max) scale) over v >= t
  size_t n;  // entries >= t
};
constexpr RowHead kNoHead{INFINITY, 0.0, 0};
constexpr size_t kHeadShare = 16;
constexpr double kHeadWeight = 0.1;

RowHead HeadOfRow(const Candidates& c, float max, float scale, double sample_z, Workspace& ws) {
  const float* blocks = RowBlocks(c);
  if (!blocks) return kNoHead;
  const size_t nb = NumBlocks(c.vocab);
  if (ExpSum(blocks, nb, max, scale) < kHeadWeight * sample_z) return kNoHead;
  const float t = ThresholdFromBlocks(blocks, nb, std::max<size_t>(1, nb / kHeadShare),
                                      ws.block_scratch.data());
  if (!(t >= -FLT_MAX)) return kNoHead;
  float* head = ws.tmp_logits.data();
  const size_t n = GatherAtLeastSparse(c.row, c.vocab, t, ws.tmp_ids.data(), head, blocks);
  double z = 0.0;
  for (size_t i = 0; i < n; ++i) {
    z += ExpFullF64((static_cast<double>(head[i]) - max) * scale);
  }
  return RowHead{t, z, n};
}

// z before the exp pass: the head's exact weight plus the sample's estimate
// of the rest (the sampled entries below the head's t, scaled to the row's
// entries below it). e holds the sample's exps (ForEachSampleRun's runs,
// every run_step-th from run_first).
double EstimatedZ(const float* row, const float* e, size_t len, RowHead head, size_t run_step,
                  size_t run_first) {
  double rest = 0.0;
  size_t sampled_rest = 0;
  sampled::ForEachSampleRun(len, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const bool below = row[i] < head.t;
      rest += below ? e[i] : 0.0f;
      sampled_rest += below;
    }
  }, run_step, run_first);
  if (sampled_rest == 0) return head.z;
  return head.z + rest * (static_cast<double>(len - head.n) / static_cast<double>(sampled_rest));
}

auto BelowMaxAt(float max, float inv) {
  return [max, inv](float v) { return (max - v) * inv; };  // NaN-free: the row is checked
}

// The share of the row inside the nucleus by a quarter of the sample
// (every fourth run; e need hold only those); 0 where the sample places no
// boundary. From a tenth on (kRingBeforeExpsShare) the ring is placed before
// the exp pass; a smaller nucleus (a peaked row's at p 0.9) takes the
// prefilter, and pays only this. Measured natively on the bench's
// LLM-shaped row (V = 262 144, ratios to the floor): the ring from a
// nucleus of a tenth on took top-p 0.93 from 3.1 to 2.2 and 0.97 from 3.9
// to 2.3 (the threshold was half the row), while at p 0.9 (7 % of the row)
// the ring made it 2.5 against the prefilter's 2.4.
constexpr double kRingBeforeExpsShare = 0.1;
double NucleusShare(const float* row, const float* e, size_t len, float max, float inv_width,
                    double outside) {
  double bins[sampled::kBins];
  uint32_t count[sampled::kBins];
  const size_t n_sampled = sampled::BinSample(row, e, len, BelowMaxAt(max, inv_width), bins,
                                              count, kQuarterStep, kQuarterFirst);
  const uint32_t at = sampled::BinFromOutside(
      bins, static_cast<double>(len) / static_cast<double>(n_sampled), outside);
  if (at >= sampled::kBins) return 0.0;
  size_t inside = 0;
  for (uint32_t b = 0; b <= at; ++b) inside += count[b];
  return static_cast<double>(inside) / static_cast<double>(n_sampled);
}

// Places a ring from the sample of the row's exps e (only the sampled
// entries are read), around the bin where the mass the nucleus leaves out,
// `outside` (z - target; before the exp pass, its share of EstimatedZ), is
// reached from the bottom: the tail the nucleus leaves out is what a sample
// estimates well (sampled_ring.h); from the top, a flat row's head mass came
// out ~3 % off, and the boundary outside any ring of a tenth of it.
bool PlaceTopPRing(const float* row, const float* e, size_t len, float max, float inv_width,
                   double outside, TopPRingPlace* place) {
  using sampled::kBins;
  double bins[kBins];
  uint32_t count[kBins];
  const size_t n_sampled =
      sampled::BinSample(row, e, len, BelowMaxAt(max, inv_width), bins, count);
  const double scale = static_cast<double>(len) / static_cast<double>(n_sampled);
  const uint32_t at_full = sampled::BinFromOutside(bins, scale, outside);
  if (at_full >= kBins) return false;
  // The reach, cut to a few boundary distances, and the sample again. Where
  // the row's max stands far above a dense background (a peaked row's head,
  // top-p 0.99), buckets at three boundary distances are coarse against the
  // background around the boundary and the ring holds more than kRingShare
  // of the sample: once more at half that reach.
  float inv = inv_width;
  uint32_t first = 0, limit = 0;
  bool placed = false;
  for (double per_stop : {sampled::kReachPerStop, 0.5 * sampled::kReachPerStop}) {
    inv = sampled::InvWidthForReach(per_stop * sampled::BinEdge(at_full, inv_width), inv_width);
    uint32_t at = at_full;
    if (inv != inv_width) {
      sampled::BinSample(row, e, len, BelowMaxAt(max, inv), bins, count);
      at = sampled::BinFromOutside(bins, scale, outside);
      if (at >= kBins) return false;
    }
    placed = sampled::RingAround(count, at, n_sampled, sampled::kRingMargin, sampled::kRingShare,
                                 &first, &limit);
    if (placed || inv == inv_width) break;
  }
  if (!placed) return false;
  // {bucket < k} = {v >= BucketThreshold(k)}: the hole above the ring, and
  // the ring's lower edge.
  *place = TopPRingPlace{inv, first, limit,
                         BucketThreshold(max, inv, limit),
                         first > 0 ? BucketThreshold(max, inv, first) : INFINITY};
  return true;
}

// The ring's n tokens gathered (ws.ids / ws.logits, their exps in
// ws.stage_f32) and the hole weighed: the boundary's band, or false where
// it lies outside the ring.
bool CutInRing(Candidates& c, const TopPRingPlace& r, float max, BandTotals hole, size_t n,
               double target, Workspace& ws, TopPRingCut* cut) {
  c.ids = ws.ids.data();
  c.logits = ws.logits.data();
  c.size = 0;
  c.sorted = 0;
  ++ws.probes.top_p_ring_misses;  // until it holds the boundary
  double above = hole.sum_w;
  if (above >= target) return false;  // the boundary is above the ring
  double* mass = ws.hist_mass.data();
  MassHistogram(ws.logits.data(), ws.stage_f32.data(), n, max, r.inv, mass, nullptr);
  size_t b = r.first;
  while (b + 1 < r.limit && !(above + mass[b] >= target)) above += mass[b++];
  if (!(above + mass[b] >= target)) return false;  // the boundary is below it
  --ws.probes.top_p_ring_misses;
  ++ws.probes.top_p_ring_hits;
  const Band band = BucketBand(max, r.inv, b, -FLT_MAX, std::nextafter(max, INFINITY));
  *cut = TopPRingCut{band.lo, band.hi, above, n, hole.count};
  return true;
}

bool TopPRing(Candidates& c, float max, float inv_width, const float* e, double z,
              double target, Workspace& ws, TopPRingCut* cut) {
  TopPRingPlace r;
  if (!PlaceTopPRing(c.row, e, c.vocab, max, inv_width, z - target, &r)) {
    return false;
  }
  size_t n = 0;
  const BandTotals hole = BandSumGatherRing(c.row, e, c.vocab, r.t_lo, INFINITY, r.t_hi, INFINITY,
                                            ws.ids.data(), ws.logits.data(), ws.stage_f32.data(), &n);
  return CutInRing(c, r, max, hole, n, target, ws, cut);
}

// What the exp pass placed and gathered besides the exps and z.
struct FusedCut {
  bool ringed = false;       // ring holds the boundary
  bool prefiltered = false;  // c is the prefilter's list, with its exps and histogram
  TopPRingCut ring{};
};

// Whether the exp pass gathers the prefilter's top (ExpPassWithCut). Not in
// wasm, where its compress of every vector (three 16-row byte shuffles)
// costs what the separate sparse gather does: side by side in Node, top-p
// 0.9 on the bench's LLM-shaped row 0.926 ms without, 0.944 with. Natively
// (AVX-512's compress) it took that row from 2.5x its floor to 1.9x.
#if defined(__wasm__)
constexpr bool kPrefilterInExpPass = false;
#else
constexpr bool kPrefilterInExpPass = true;
#endif
// The least nucleus (entries, by the sample) for the exp pass to gather the top.
constexpr double kPrefilterInExpPassMin = 8.0 * kTopPSortedPrefix;
// The prefilter's first bucket of the tail, placed from the sample's runs
// before the exp pass (TopPPrefilter's rule, on the runs' bins): false where
// the tail would hold under half the row.
bool PlacePrefilter(const float* row, const float* e, size_t len, float max, float inv_width,
                    double outside, uint32_t* k_low) {
  using sampled::kBins;
  double bins[kBins];
  uint32_t count[kBins];
  const size_t n_sampled = sampled::BinSample(row, e, len, BelowMaxAt(max, inv_width), bins, count);
  const double scale = static_cast<double>(len) / static_cast<double>(n_sampled);
  size_t tail_samples;
  const size_t low = PrefilterTail(bins, count, kBins, kPrefilterMargin * outside / scale,
                                   &tail_samples);
  if (low >= kBins || 2 * tail_samples < n_sampled) return false;
  *k_low = static_cast<uint32_t>(low) * sampled::kFine;
  return true;
}

// The exp pass with top-p's first cut placed before it and gathered by it,
// on a large row: the sample's exps first (its runs of ExpWrite's values),
// z estimated from them and the row's head (HeadOfRow). Where a tenth of the
// row or more is in the nucleus (NucleusShare: a flat row, or a peaked one
// at a large p), the ring around the boundary: one pass writes every exp,
// sums z and gathers and weighs the ring (ExpWriteGatherRing: the exp
// pass's and BandSumGatherRing's bits). Otherwise the prefilter's top (the
// row above the tail that holds at most kPrefilterMargin of the mass the
// nucleus leaves out), gathered with its exps by the same pass (no hole),
// then histogrammed (FinishPrefilter), as TopPPrefilter would after the
// pass: the same list, bits and cut. Only the place depends on the
// estimate: a ring or top that misses the boundary leaves the exps and z
// for the usual path. Returns false, having done nothing but the sample's
// exps, where the sample places neither; else *z, the exps in e, and *cut.
bool ExpPassWithCut(Candidates& c, double p, float max, float scale, float* e, Workspace& ws,
                    double* z, FusedCut* cut) {
  const float* row = c.row;
  const size_t len = c.vocab;
  // The sample's exps (ExpWrite's values), the quarter that decides first.
  auto exps_of_run = [&](size_t begin, size_t end) {
    ExpWrite(row + begin, end - begin, max, scale, e + begin);
  };
  const float inv_width = TopPInvWidth(c);
  const double out_share = 1.0 - TopPShare(p);
  sampled::ForEachSampleRun(len, exps_of_run, kQuarterStep, kQuarterFirst);
  const RowHead head = HeadOfRow(
      c, max, scale, EstimatedZ(row, e, len, kNoHead, kQuarterStep, kQuarterFirst), ws);
  const double quarter_z = EstimatedZ(row, e, len, head, kQuarterStep, kQuarterFirst);
  const double share = NucleusShare(row, e, len, max, inv_width, out_share * quarter_z);
  const bool ring = share >= kRingBeforeExpsShare;
  // A nucleus of a few hundred tokens (a peaked row at p 0.5-0.8: its head)
  // is cut by ApplyTopP's sorted walk after a plain exp pass, natively 1.5x
  // faster there than the fused pass and the prefilter's histogram.
  const bool top = kPrefilterInExpPass && ws.tuning.top_p_prefilter &&
                   share * static_cast<double>(len) >= kPrefilterInExpPassMin;
  if (!ring && !top) return false;
  for (size_t first = 0; first < kQuarterStep; ++first) {
    if (first != kQuarterFirst) sampled::ForEachSampleRun(len, exps_of_run, kQuarterStep, first);
  }
  const double z_estimate = EstimatedZ(row, e, len, head, 1, 0);
  const double outside = out_share * z_estimate;
  size_t n = 0;
  BandTotals hole{};
  if (!ring) {
    uint32_t k_low;
    if (!PlacePrefilter(row, e, len, max, inv_width, outside, &k_low)) return false;
    const float t_low = BucketThreshold(max, inv_width, k_low);
    *z = ExpWriteGatherRing(row, len, max, scale, e, t_low, INFINITY, ws.ids.data(),
                            ws.logits.data(), ws.stage_f32.data(), &n, &hole);
    cut->prefiltered = FinishPrefilter(c, max, inv_width, n, k_low, TopPShare(p) * *z, ws);
    ++ws.probes.top_p_prefilters_before_exps;
    ws.probes.top_p_prefilters_before_exps_missed += !cut->prefiltered;
    return true;
  }
  TopPRingPlace r;
  if (!PlaceTopPRing(row, e, len, max, inv_width, outside, &r)) return false;
  *z = ExpWriteGatherRing(row, len, max, scale, e, r.t_lo, r.t_hi, ws.ids.data(),
                          ws.logits.data(), ws.stage_f32.data(), &n, &hole);
  cut->ringed = CutInRing(c, r, max, hole, n, TopPShare(p) * *z, ws, &cut->ring);
  ++ws.probes.top_p_rings_before_exps;
  ws.probes.top_p_rings_before_exps_missed += !cut->ringed;
  return true;
}

// e: exp((v - max) * scale) of every candidate (ApplyTopP's pass), z their sum.
// pre_ring (optional): a ring that holds the boundary, from ExpPassWithCut.
// pre_filtered: c is already the prefilter's list (ExpPassWithCut: e its
// exps, ws.hist_mass its histogram).
void TopPByThreshold(Candidates& c, double p, size_t min_keep, float max, float scale,
                     const float* e, double z, Workspace& ws, bool draw_follows,
                     const TopPRingCut* pre_ring = nullptr, bool pre_filtered = false) {
  bool on_row = !c.truncated;
  const double target = TopPShare(p) * z;
  // Invariant: mass(v >= lo) >= target > mass(v >= hi) = above. Below
  // max - 104 T every e is exactly 0, so the boundary is never there.
  const float inv_width = TopPInvWidth(c);
  double* mass = ws.hist_mass.data();
  // prefiltered: c is the row's top as a list, e its exps (ws.stage_f32), and
  // mass its histogram (see TopPPrefilter).
  const bool prefiltered = pre_filtered ||
                           (!pre_ring && on_row && ws.tuning.top_p_prefilter && min_keep <= 1 &&
                            c.vocab >= kPrefilterMin &&
                            TopPPrefilter(c, max, inv_width, e, z, target, ws));
  if (prefiltered) {
    on_row = false;
    e = ws.stage_f32.data();
  }
  const float* v = on_row ? c.row : c.logits;
  const size_t count = on_row ? c.vocab : c.size;
  const float* blocks = on_row ? RowBlocks(c) : nullptr;
  TopPRingCut ring = pre_ring ? *pre_ring : TopPRingCut{};
  const bool ringed = pre_ring || (on_row && ws.tuning.top_p_ring && min_keep <= 1 &&
                                   c.vocab >= kRingMin &&
                                   TopPRing(c, max, inv_width, e, z, target, ws, &ring));
  double above = 0.0;
  float lo, hi;
  // On the row's histogram, where a draw follows: the entries >= hi, counted
  // by the histogram itself (whether the nucleus stays a band of the row).
  size_t above_count = 0;
  if (ringed) {
    lo = ring.lo;
    hi = ring.hi;
    above = ring.above;
  } else {
    uint32_t* in_bucket = draw_follows && on_row ? ws.hist_count.data() : nullptr;
    if (!prefiltered) MassHistogram(v, e, count, max, inv_width, mass, in_bucket);
    const size_t b = BoundaryBucket(mass, target, above);
    if (in_bucket) {
      for (size_t j = 0; j < b; ++j) above_count += in_bucket[j];
    }
    const Band first = BucketBand(max, inv_width, b, -FLT_MAX, std::nextafter(max, INFINITY));
    lo = first.lo;
    hi = first.hi;
  }
  // Counts matter only for min_keep (a pass, so only then).
  const size_t count_lo = min_keep > 1 ? CountAtLeast(v, count, lo, blocks) : count;
  if (count_lo < min_keep) {
    ApplyTopK(c, min_keep, ws);  // the nucleus is smaller still: top min_keep
    return;
  }
  // The band [lo, hi): positions in v (ids on the row) and values.
  int32_t* band = ws.tmp_ids.data();
  float* band_v = ws.tmp_logits.data();
  size_t n_band;
  if (ringed) {
    // From the ring's tokens (ascending ids: the row's gather, in order).
    n_band = GatherInRange(ws.logits.data(), ring.n, lo, hi, band, band_v);
    for (size_t j = 0; j < n_band; ++j) band[j] = ws.ids[band[j]];
  } else {
    n_band = GatherInRange(v, count, lo, hi, band, band_v, blocks);
  }
  size_t count_hi = count_lo - n_band;  // entries >= hi
  // A dense band: the same histogram over the band's tokens alone, with its
  // buckets spanning [lo, hi) (coordinate (hi - v) * width), until the band
  // is small or a single float wide. Their exps are the pass's values.
  float* band_e = on_row ? ws.stage_f32.data() : ws.row_exp.data();  // free here
  size_t band_written = 0;  // band_e entries written (prefiltered: over the row's exps)
  while (n_band > kTopPBand) {
    const float sub_inv = static_cast<float>(kMassBuckets / (static_cast<double>(hi) - lo));
    if (!(sub_inv > 0.0f) || !std::isfinite(sub_inv)) break;
    for (size_t j = 0; j < n_band; ++j) band_e[j] = e[band[j]];
    band_written = std::max(band_written, n_band);
    MassHistogram(band_v, band_e, n_band, hi, sub_inv, mass, nullptr);
    const Band sub = BucketBand(hi, sub_inv, BoundaryBucket(mass, target, above), lo, hi);
    const float lo2 = std::max(lo, sub.lo);
    const float hi2 = sub.hi;
    size_t kept_band = 0;
    for (size_t j = 0; j < n_band; ++j) {
      const float x = band_v[j];
      if (x >= hi2) {
        ++count_hi;
        ++above_count;
      } else if (x >= lo2) {
        band[kept_band] = band[j];
        band_v[kept_band] = x;
        ++kept_band;
      }
    }
    if (kept_band == n_band) break;  // no progress (a plateau of ties)
    n_band = kept_band;
    lo = lo2;
    hi = hi2;
  }
  // The band, sorted (logit descending, lower id first); walk it on from
  // the mass above it. The cut: the last kept band entry (cut_logit,
  // cut_id); the whole band when the walk runs out of it (rounding).
  auto id_of = [&c, on_row](int32_t pos) { return on_row ? pos : c.ids[pos]; };
  uint64_t* order = ws.keys.data();
  for (size_t j = 0; j < n_band; ++j) order[j] = j;
  std::sort(order, order + n_band, [&](uint64_t a, uint64_t b) {
    return band_v[a] > band_v[b] || (band_v[a] == band_v[b] && id_of(band[a]) < id_of(band[b]));
  });
  size_t last = n_band;  // sorted band entries [0, last) are kept
  double cum = above;
  for (size_t j = 0; j < n_band; ++j) {
    cum += ExpF64((static_cast<double>(band_v[order[j]]) - max) / c.temperature);
    if (cum >= target && count_hi + j + 1 >= min_keep) {
      last = j + 1;
      break;
    }
  }
  // Kept: logit > cut_logit, or == cut_logit with id <= cut_id.
  // An empty band (only by rounding) keeps v >= lo, i.e. v >= hi.
  float cut_logit = lo;
  int32_t cut_id = INT32_MAX;
  bool ties_dropped = false;  // an entry == cut_logit with id > cut_id exists
  if (last > 0) {
    cut_logit = band_v[order[last - 1]];
    cut_id = id_of(band[order[last - 1]]);
    ties_dropped = last < n_band && band_v[order[last]] == cut_logit;
  }
  // A list entry is in the nucleus: above the cut, or on it up to cut_id.
  auto in_nucleus = [&c, cut_logit, cut_id](size_t i) {
    return (c.logits[i] > cut_logit) | ((c.logits[i] == cut_logit) & (c.ids[i] <= cut_id));
  };
  // A large nucleus of the row (no ties left out: it is then the band
  // [cut_logit, +inf) of the row) stays a band when the draw follows.
  auto leave_band = [&](size_t kept) {
    if (!(draw_follows && !ties_dropped && KeepAsRowBand(kept, c.vocab))) return false;
    // After the prefilter, the band's histogram wrote its weights over the
    // head of the row's exps (band_e): rewritten, the same bits.
    if (prefiltered) {
      ExpWrite(c.row, std::min(c.vocab, band_written), max, scale, ws.row_exp.data());
    }
    TakeRowBand(c, cut_logit, INFINITY, kept, ws.row_exp.data(), max, scale);
    return true;
  };
  if (prefiltered) {
    // The row's nucleus (ascending ids) with its exps: the draw's list_exp,
    // as the row's gather below would leave it (CompactList, carrying exps).
    float* list_e = ws.stage_f32.data();
    c.size = CompactAboveCut(c.ids, c.logits, list_e, c.size, cut_logit, cut_id);
    c.list_exp = list_e;
    c.list_exp_max = max;
    c.list_exp_scale = scale;
    leave_band(c.size);  // (or the list stays)
    return;
  }
  if (!on_row) {
    CompactList(c, in_nucleus);
    return;
  }
  // Where the nucleus is large, its count decides whether it stays a band:
  // the ring's hole and its ring tokens kept, or the histogram's count above
  // the band and the band's kept head.
  if (draw_follows && !ties_dropped) {
    size_t kept = 0;
    if (ringed) {
      kept = ring.above_hole;
      for (size_t j = 0; j < ring.n; ++j) kept += ws.logits[j] >= cut_logit;
    } else {
      kept = above_count + last;
    }
    if (leave_band(kept)) return;
  }
  // The row: the nucleus in ascending ids with its exps, in one gather.
  float* list_exp = ws.stage_f32.data();
  const size_t n = GatherAtLeastWith(c.row, c.vocab, cut_logit, ws.ids.data(), ws.logits.data(),
                                     blocks, e, list_exp);
  TakeRowGather(c, n, ws, list_exp, max, scale);
  if (ties_dropped) {
    // (CompactList drops list_exp: this rare case recomputes.)
    CompactList(c, [&c, cut_logit, cut_id](size_t i) {
      return (c.logits[i] > cut_logit) | (c.ids[i] <= cut_id);
    });
  }
}

}  // namespace

void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws, bool draw_follows) {
  const size_t n = c.Count();
  if (p >= 1.0 || n <= 1) return;
  const float max = CandidateMax(c);
  // One exp pass gives Z and, kept in stage_f32, the exps a large nucleus's
  // histogram needs (no second pass).
  const float* v = c.truncated ? c.logits : c.row;
  const size_t len = c.truncated ? c.size : c.vocab;
  const bool large = n > kTopPSortedPrefix;
  // On the row the exps go to row_exp, so the nucleus can carry them to the
  // draw (Candidates::list_exp).
  float* e = c.truncated ? ws.stage_f32.data() : ws.row_exp.data();
  const float scale = static_cast<float>(1.0 / c.temperature);
  // A flat row: the exp pass also places and gathers top-p's ring.
  double z = 0.0;
  FusedCut fused_cut;
  const bool fused = large && !c.truncated && min_keep <= 1 && ws.tuning.top_p_ring &&
                     c.vocab >= kRingMin && ExpPassWithCut(c, p, max, scale, e, ws, &z, &fused_cut);
  if (!fused) z = large ? ExpWrite(v, len, max, scale, e) : CandidateExpSum(c, max);
  if (fused_cut.ringed) {
    TopPByThreshold(c, p, min_keep, max, scale, e, z, ws, draw_follows, &fused_cut.ring);
    return;
  }
  if (fused_cut.prefiltered) {
    TopPByThreshold(c, p, min_keep, max, scale, ws.stage_f32.data(), z, ws, draw_follows, nullptr,
                    true);
    return;
  }
  const double target = TopPShare(p) * z;  // compare unnormalised mass
  double cum = 0.0;
  size_t i = 0;
  // Invariant: cum = mass of the first i sorted candidates; i < min_keep or
  // cum < target. The common, peaked case ends within a small sorted prefix.
  for (size_t want = 64; want <= kTopPSortedPrefix; want *= 4) {
    EnsureSorted(c, want, ws);
    const size_t avail = std::min(want, n);
    for (; i < avail; ++i) {
      cum += ExpF64((static_cast<double>(c.logits[i]) - max) / c.temperature);
      if (cum >= target && i + 1 >= min_keep) {
        TruncateToSorted(c, i + 1);
        return;
      }
    }
    if (avail == n) return;  // the whole set is needed: nothing to cut
  }
  TopPByThreshold(c, p, min_keep, max, scale, e, z, ws, draw_follows && !c.truncated);
}

void KeepLogitAtLeast(Candidates& c, float t, size_t min_keep, Workspace& ws) {
  const size_t n = c.Count();
  if (!c.truncated) {
    // The row: gather straight away (no counting pass first); a gather that
    // removes nothing, or keeps too few, is undone (the row and its sorted
    // prefix cache, which the gather overwrote, become lazy again). A cut by
    // probability (min-p, epsilon, eta) usually keeps a small part of it.
    KeepAtLeast(c, t, ws, /*expect_few=*/true);
    if (c.size < n && c.size >= std::max<size_t>(min_keep, 1)) return;
    const size_t kept = c.size;
    c.truncated = false;
    c.size = 0;
    c.sorted = 0;
    if (kept < n) ApplyTopK(c, std::max<size_t>(min_keep, 1), ws);
    return;
  }
  const size_t count = CountCandidatesAtLeast(c, t);
  if (count >= n) return;  // nothing to remove: a full row stays lazy
  if (count >= std::max<size_t>(min_keep, 1)) {
    KeepAtLeast(c, t, ws);
    return;
  }
  ApplyTopK(c, std::max<size_t>(min_keep, 1), ws);
}

void ApplyMinP(Candidates& c, float min_p, size_t min_keep, Workspace& ws) {
  if (min_p <= 0.0f || c.Count() <= 1) return;
  // p_i / p_max = exp((l_i - max) / T) >= min_p; log(min_p) in float, as
  // llama.cpp's logf.
  const float log_min_p = static_cast<float>(LogF64(min_p));
  KeepLogitAtLeast(c, static_cast<float>(CandidateMax(c) + c.temperature * log_min_p), min_keep,
                   ws);
}

void ApplyTemperature(Candidates& c, float t) {
  if (t == 1.0f) return;
  if (c.probs_valid) {
    // Explicit probabilities (after Bregman): their logits are log q.
    c.probs_valid = false;
  }
  c.temperature *= t;
}

}  // namespace bd
