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
#include "stages/position_sort.h"
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
// exps (the draw's DrawHint::kListExps); a list is compacted.
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
  ++c.list_version;
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

// The ring (see TopPRing), from this many entries on: below it the sample
// (16 x 256 entries, binned twice) is too large a share of the row for the
// ring to cost less than the row's histogram.
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
// chance: the sample alone underestimates it several times over, and a ring
// placed from it lies above the boundary. Only the blocks whose maximum
// reaches t are read (a sixteenth of the row). No head (t = +inf) where the
// block maxima weigh under kHeadWeight of the sample's z (a flat row's
// weigh a few percent), which costs one exp per block.
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
// prefilter, and pays only this: from a tenth of the row on the ring costs
// less than the prefilter's top, below it about the same or more.
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
// estimates well (sampled_ring.h); from the top, a flat row's head mass is a
// few percent off, enough to put the boundary outside a ring of a tenth of it.
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
// costs what the separate sparse gather does. Natively (AVX-512's compress)
// it costs far less than the separate gather.
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
  // is cut by ApplyTopP's sorted walk after a plain exp pass, which costs
  // less there than the fused pass and the prefilter's histogram.
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

// What top-p's threshold cut reads: the candidates' values (the row, or a
// list: the candidates' own or the prefilter's top of the row) and their
// exps, with the cut's constants.
struct TopPInput {
  const float* v;       // the values: the row, or the list's logits
  size_t count;         // how many
  const float* blocks;  // the row's block maxima (null for a list)
  const float* e;       // exp((v - max) * scale), aligned with v
  bool on_row;
  bool prefiltered;     // v is the prefilter's list (e its exps in ws.stage_f32)
  float max;
  float scale;
  double target;        // the nucleus is the first mass >= target
  size_t min_keep;
  // An entry's id from its position in v.
  int32_t IdOf(const Candidates& c, int32_t pos) const { return on_row ? pos : c.ids[pos]; }
};

// The logit band [lo, hi) that holds the boundary. Invariant: mass(v >= lo)
// >= target > mass(v >= hi) = above. Its entries (positions in v, values)
// are in ws.tmp_ids / ws.tmp_logits once gathered.
struct BoundaryBand {
  float lo, hi;
  double above;
  size_t above_count;   // entries >= hi counted by the histograms (where a draw follows on the row)
  size_t n;             // the band's entries
  size_t count_hi;      // entries >= hi (exact where min_keep > 1)
  size_t exps_written;  // the band's exps written over the head of the narrowing's scratch
};

// The first band: the ring's boundary bucket, or the boundary bucket of a
// histogram of every candidate (kMassBuckets over [max - 104 T, max]; below
// that every e is exactly 0, so the boundary is never there). The
// prefilter's histogram is already in ws.hist_mass.
BoundaryBand FirstBoundaryBand(const TopPInput& in, float inv_width, const TopPRingCut* ring,
                               bool draw_follows, Workspace& ws) {
  if (ring) return BoundaryBand{ring->lo, ring->hi, ring->above, 0, 0, 0, 0};
  double* mass = ws.hist_mass.data();
  BoundaryBand band{0.0f, 0.0f, 0.0, 0, 0, 0, 0};
  // On the row's histogram, where a draw follows: the entries >= hi, counted
  // by the histogram itself (whether the nucleus stays a band of the row).
  uint32_t* in_bucket = draw_follows && in.on_row ? ws.hist_count.data() : nullptr;
  if (!in.prefiltered) MassHistogram(in.v, in.e, in.count, in.max, inv_width, mass, in_bucket);
  const size_t b = BoundaryBucket(mass, in.target, band.above);
  if (in_bucket) {
    for (size_t j = 0; j < b; ++j) band.above_count += in_bucket[j];
  }
  const Band first = BucketBand(in.max, inv_width, b, -FLT_MAX, std::nextafter(in.max, INFINITY));
  band.lo = first.lo;
  band.hi = first.hi;
  return band;
}

// The band's entries into ws.tmp_ids (positions in v; ids on the row) and
// ws.tmp_logits: from the ring's tokens (ascending ids: the row's gather, in
// order), or from v.
size_t GatherBoundaryBand(const TopPInput& in, const BoundaryBand& band, const TopPRingCut* ring,
                          Workspace& ws) {
  int32_t* pos = ws.tmp_ids.data();
  float* val = ws.tmp_logits.data();
  if (!ring) return GatherInRange(in.v, in.count, band.lo, band.hi, pos, val, in.blocks);
  const size_t n = GatherInRange(ws.logits.data(), ring->n, band.lo, band.hi, pos, val);
  for (size_t j = 0; j < n; ++j) pos[j] = ws.ids[pos[j]];
  return n;
}

// A dense band narrowed by the same histogram over the band's entries alone
// (their exps written to band_e), its buckets spanning [lo, hi) (coordinate
// (hi - v) * width), until the band is small or a single float wide.
void NarrowDenseBand(const TopPInput& in, float* band_e, BoundaryBand& band, Workspace& ws) {
  int32_t* pos = ws.tmp_ids.data();
  float* val = ws.tmp_logits.data();
  double* mass = ws.hist_mass.data();
  while (band.n > kTopPBand) {
    const float sub_inv =
        static_cast<float>(kMassBuckets / (static_cast<double>(band.hi) - band.lo));
    if (!(sub_inv > 0.0f) || !std::isfinite(sub_inv)) break;
    for (size_t j = 0; j < band.n; ++j) band_e[j] = in.e[pos[j]];
    band.exps_written = std::max(band.exps_written, band.n);
    MassHistogram(val, band_e, band.n, band.hi, sub_inv, mass, nullptr);
    const Band sub = BucketBand(band.hi, sub_inv, BoundaryBucket(mass, in.target, band.above),
                                band.lo, band.hi);
    const float lo2 = std::max(band.lo, sub.lo);
    const float hi2 = sub.hi;
    size_t kept = 0;
    for (size_t j = 0; j < band.n; ++j) {
      const float x = val[j];
      if (x >= hi2) {
        ++band.count_hi;
        ++band.above_count;
      } else if (x >= lo2) {
        pos[kept] = pos[j];
        val[kept] = x;
        ++kept;
      }
    }
    if (kept == band.n) break;  // no progress (a plateau of ties)
    band.n = kept;
    band.lo = lo2;
    band.hi = hi2;
  }
}

// The nucleus's last entry: kept are the entries with logit > logit, or ==
// logit with id <= id. last: the sorted band entries [0, last) kept.
struct NucleusCut {
  float logit;
  int32_t id;
  bool ties_dropped;  // an entry == logit with id > id exists
  size_t last;
};

// The band sorted (logit descending, lower id first) and walked on from the
// mass above it; the whole band when the walk runs out of it (rounding). An
// empty band (only by rounding) keeps v >= lo, i.e. v >= hi.
NucleusCut WalkBandToCut(const Candidates& c, const TopPInput& in, const BoundaryBand& band,
                         Workspace& ws) {
  const int32_t* pos = ws.tmp_ids.data();
  const float* val = ws.tmp_logits.data();
  uint64_t* order = ws.keys.data();
  double* descending = ws.stage_f64.data();  // -v: ascending is v descending
  for (size_t j = 0; j < band.n; ++j) {
    descending[j] = -static_cast<double>(val[j]);
    order[j] = PositionWithId(in.IdOf(c, pos[j]), j);
  }
  SortPositionsByKey(descending, order, band.n);
  NucleusCut cut{band.lo, INT32_MAX, false, band.n};
  double cum = band.above;
  for (size_t j = 0; j < band.n; ++j) {
    cum += ExpF64((static_cast<double>(val[PositionOf(order[j])]) - in.max) / c.temperature);
    if (cum >= in.target && band.count_hi + j + 1 >= in.min_keep) {
      cut.last = j + 1;
      break;
    }
  }
  if (cut.last > 0) {
    cut.logit = val[PositionOf(order[cut.last - 1])];
    cut.id = in.IdOf(c, pos[PositionOf(order[cut.last - 1])]);
    cut.ties_dropped = cut.last < band.n && val[PositionOf(order[cut.last])] == cut.logit;
  }
  return cut;
}

// A large nucleus of the row (no ties left out: it is then the band
// [cut, +inf) of the row) stays a band of it where the draw follows; false
// where it does not. After the prefilter the narrowing wrote its exps over
// the head of the row's exps: rewritten, the same bits.
bool LeaveRowBand(Candidates& c, const TopPInput& in, const NucleusCut& cut,
                  const BoundaryBand& band, size_t kept, bool draw_follows, Workspace& ws,
                  DrawHint& hint) {
  if (!(draw_follows && !cut.ties_dropped && KeepAsRowBand(kept, c.vocab))) return false;
  if (in.prefiltered) {
    ExpWrite(c.row, std::min(c.vocab, band.exps_written), in.max, in.scale, ws.row_exp.data());
  }
  hint = TakeRowBand(c, cut.logit, INFINITY, kept, ws.row_exp.data(), in.max, in.scale);
  return true;
}

// The row's nucleus: a band of the row where it stays one (its count from
// the ring's hole and its ring tokens kept, or the histograms' count above
// the band and the band's kept head), else gathered in ascending ids with
// its exps in one pass (the draw's hint).
void TakeRowNucleus(Candidates& c, const TopPInput& in, const NucleusCut& cut,
                    const BoundaryBand& band, const TopPRingCut* ring, bool draw_follows,
                    Workspace& ws, DrawHint& hint) {
  if (draw_follows && !cut.ties_dropped) {
    size_t kept = 0;
    if (ring) {
      kept = ring->above_hole;
      for (size_t j = 0; j < ring->n; ++j) kept += ws.logits[j] >= cut.logit;
    } else {
      kept = band.above_count + cut.last;
    }
    if (LeaveRowBand(c, in, cut, band, kept, draw_follows, ws, hint)) return;
  }
  float* list_exp = ws.stage_f32.data();
  const size_t n = GatherAtLeastWith(c.row, c.vocab, cut.logit, ws.ids.data(), ws.logits.data(),
                                     in.blocks, in.e, list_exp);
  hint = TakeRowGather(c, n, ws, list_exp, in.max, in.scale);
  if (cut.ties_dropped) {
    // (CompactList makes the hint stale: this rare case recomputes.)
    const float cut_logit = cut.logit;
    const int32_t cut_id = cut.id;
    CompactList(c, [&c, cut_logit, cut_id](size_t i) {
      return (c.logits[i] > cut_logit) | (c.ids[i] <= cut_id);
    });
  }
}

// The nucleus taken: the prefilter's list compacted to it with its exps
// (ascending ids: the draw's hint, as the row's gather would leave it),
// then a band of the row where it stays one; a list compacted to it; the
// row's (TakeRowNucleus).
void TakeNucleus(Candidates& c, const TopPInput& in, const NucleusCut& cut,
                 const BoundaryBand& band, const TopPRingCut* ring, bool draw_follows,
                 Workspace& ws, DrawHint& hint) {
  if (in.prefiltered) {
    float* list_e = ws.stage_f32.data();
    c.size = CompactAboveCut(c.ids, c.logits, list_e, c.size, cut.logit, cut.id);
    ++c.list_version;
    hint = DrawHint::ListExps(list_e, in.max, in.scale, c.list_version);
    LeaveRowBand(c, in, cut, band, c.size, draw_follows, ws, hint);  // (or the list stays)
    return;
  }
  if (!in.on_row) {
    // A list entry is in the nucleus: above the cut, or on it up to its id.
    const float cut_logit = cut.logit;
    const int32_t cut_id = cut.id;
    CompactList(c, [&c, cut_logit, cut_id](size_t i) {
      return (c.logits[i] > cut_logit) | ((c.logits[i] == cut_logit) & (c.ids[i] <= cut_id));
    });
    return;
  }
  TakeRowNucleus(c, in, cut, band, ring, draw_follows, ws, hint);
}

// A nucleus larger than the sorted prefix, cut by its boundary's band (see
// kTopPBand). e: exp((v - max) * scale) of every candidate (ApplyTopP's
// pass), z their sum. pre_ring (optional): a ring that holds the boundary,
// from ExpPassWithCut. pre_filtered: c is already the prefilter's list
// (ExpPassWithCut: e its exps, ws.hist_mass its histogram). Otherwise a
// large row tries the prefilter, then the ring.
void TopPByThreshold(Candidates& c, double p, size_t min_keep, float max, float scale,
                     const float* e, double z, Workspace& ws, bool draw_follows, DrawHint& hint,
                     const TopPRingCut* pre_ring = nullptr, bool pre_filtered = false) {
  const bool row = !c.truncated;
  const double target = TopPShare(p) * z;
  const float inv_width = TopPInvWidth(c);
  const bool prefiltered = pre_filtered ||
                           (!pre_ring && row && ws.tuning.top_p_prefilter && min_keep <= 1 &&
                            c.vocab >= kPrefilterMin &&
                            TopPPrefilter(c, max, inv_width, e, z, target, ws));
  const bool on_row = row && !prefiltered;
  const TopPInput in{on_row ? c.row : c.logits,
                     on_row ? c.vocab : c.size,
                     on_row ? RowBlocks(c) : nullptr,
                     prefiltered ? ws.stage_f32.data() : e,
                     on_row,
                     prefiltered,
                     max,
                     scale,
                     target,
                     min_keep};
  TopPRingCut ring_cut = pre_ring ? *pre_ring : TopPRingCut{};
  const bool ringed = pre_ring || (on_row && ws.tuning.top_p_ring && min_keep <= 1 &&
                                   c.vocab >= kRingMin &&
                                   TopPRing(c, max, inv_width, in.e, z, target, ws, &ring_cut));
  const TopPRingCut* ring = ringed ? &ring_cut : nullptr;
  BoundaryBand band = FirstBoundaryBand(in, inv_width, ring, draw_follows, ws);
  // Counts matter only for min_keep (a pass, so only then).
  const size_t count_lo =
      min_keep > 1 ? CountAtLeast(in.v, in.count, band.lo, in.blocks) : in.count;
  if (count_lo < min_keep) {
    ApplyTopK(c, min_keep, ws);  // the nucleus is smaller still: top min_keep
    return;
  }
  band.n = GatherBoundaryBand(in, band, ring, ws);
  band.count_hi = count_lo - band.n;
  // The narrowing's exps go to scratch free here.
  NarrowDenseBand(in, on_row ? ws.stage_f32.data() : ws.row_exp.data(), band, ws);
  const NucleusCut cut = WalkBandToCut(c, in, band, ws);
  TakeNucleus(c, in, cut, band, ring, draw_follows, ws, hint);
}

}  // namespace

void ApplyTopP(Candidates& c, double p, size_t min_keep, Workspace& ws, bool draw_follows,
               DrawHint* hint_out) {
  DrawHint unused;
  DrawHint& hint = hint_out ? *hint_out : unused;
  const size_t n = c.Count();
  if (p >= 1.0 || n <= 1) return;
  const float max = CandidateMax(c);
  // One exp pass gives Z and, kept in stage_f32, the exps a large nucleus's
  // histogram needs (no second pass).
  const float* v = c.truncated ? c.logits : c.row;
  const size_t len = c.truncated ? c.size : c.vocab;
  const bool large = n > kTopPSortedPrefix;
  // On the row the exps go to row_exp, so the nucleus can carry them to the
  // draw (DrawHint::kListExps).
  float* e = c.truncated ? ws.stage_f32.data() : ws.row_exp.data();
  const float scale = static_cast<float>(1.0 / c.temperature);
  // A flat row: the exp pass also places and gathers top-p's ring.
  double z = 0.0;
  FusedCut fused_cut;
  const bool fused = large && !c.truncated && min_keep <= 1 && ws.tuning.top_p_ring &&
                     c.vocab >= kRingMin && ExpPassWithCut(c, p, max, scale, e, ws, &z, &fused_cut);
  if (!fused) z = large ? ExpWrite(v, len, max, scale, e) : CandidateExpSum(c, max);
  if (fused_cut.ringed) {
    TopPByThreshold(c, p, min_keep, max, scale, e, z, ws, draw_follows, hint, &fused_cut.ring);
    return;
  }
  if (fused_cut.prefiltered) {
    TopPByThreshold(c, p, min_keep, max, scale, ws.stage_f32.data(), z, ws, draw_follows, hint,
                    nullptr,
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
  TopPByThreshold(c, p, min_keep, max, scale, e, z, ws, draw_follows && !c.truncated, hint);
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
