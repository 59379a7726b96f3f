// Locally typical sampling without sorting the vocabulary: every prefix of
// the distance order is a logit band around one logit L, so the cut is found
// by bisection on the band radius with SIMD count/mass passes, and only the
// boundary annulus is sorted (see the contract in typical.h).
#include "stages/typical.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/float_order.h"
#include "kernels/histogram.h"
#include "kernels/moments.h"
#include "kernels/row_scan.h"
#include "kernels/threshold.h"
#include "stages/sampled_ring.h"

namespace bd {
namespace {

constexpr double kExceedFuzz = 1e-6;     // cum must exceed p (1 + kExceedFuzz)
constexpr size_t kAnnulusBudget = 1024;  // tokens per sorted annulus (target)
// From this many candidates on, the first bracket comes from one histogram
// of mass over the distance instead of a geometric widening and bisection.
constexpr size_t kHistogramMin = 8 * kAnnulusBudget;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The candidates as one array: the row (id = index) or the list.
struct Span {
  const float* v;
  const int32_t* ids;  // null for the full row
  size_t len;
  int32_t Id(size_t i) const { return ids ? ids[i] : static_cast<int32_t>(i); }
};

// Largest float <= x and smallest float >= x.
float FloatFloor(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) > x) f = std::nextafter(f, -INFINITY);
  return std::max(f, -FLT_MAX);
}
float FloatCeil(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x) f = std::nextafter(f, INFINITY);
  return f;
}

// The bisection's view of the band |l - center| <= r: its count and weight
// sum_{in band} e_i from one SIMD pass (float sums, ~1e-7 relative).
struct BandProbe {
  Span s;
  const float* e;
  double center;
  size_t finite;
  double z;
  BandTotals At(double r) const {
    if (r == kInf) return BandTotals{finite, z};
    return BandSum(s.v, e, s.len, FloatFloor(center - r), FloatCeil(center + r));
  }
};

// The floats whose walk distance |double(x) - center| (rounded as the walk
// computes it) is at most r, as the closed interval [lo, hi]: the distance
// falls as x rises to the center and grows past it, so the set is an
// interval of floats, found by bisection over their order. lo > hi: empty.
struct FloatBand {
  float lo, hi;
};
FloatBand BandWithin(double center, double r) {
  auto within = [&](float x) { return std::fabs(static_cast<double>(x) - center) <= r; };
  const float below = FloatFloor(center);  // the last float <= center (>= -FLT_MAX)
  const float above = std::min(FloatCeil(center), FLT_MAX);    // the first float >= center
  FloatBand band{INFINITY, -INFINITY};
  // Lowest x <= below inside (false ... true as x rises).
  if (within(below)) {
    uint32_t out = OrderedBits(-FLT_MAX), in = OrderedBits(below);
    if (within(-FLT_MAX)) {
      band.lo = -FLT_MAX;
    } else {
      while (in - out > 1) {
        const uint32_t mid = out + (in - out) / 2;
        (within(FromOrderedBits(mid)) ? in : out) = mid;
      }
      band.lo = FromOrderedBits(in);
    }
  }
  // Highest x >= above inside (true ... false as x rises).
  if (within(above)) {
    uint32_t in = OrderedBits(above), out = OrderedBits(FLT_MAX);
    if (within(FLT_MAX)) {
      band.hi = FLT_MAX;
    } else {
      while (out - in > 1) {
        const uint32_t mid = in + (out - in) / 2;
        (within(FromOrderedBits(mid)) ? in : out) = mid;
      }
      band.hi = FromOrderedBits(in);
    }
  }
  if (band.lo == INFINITY && band.hi != -INFINITY) band.lo = above;
  if (band.hi == -INFINITY && band.lo != INFINITY) band.hi = below;
  return band;
}

// The distance histogram's first bracket needs only the buckets up to the
// walk's stop, and on an LLM-shaped row the typical set is a few percent of
// the vocabulary: a gather of a band that most likely holds the stop (a
// narrow-band SIMD gather) and a histogram of its tokens alone cost far less
// than the scalar scatter of every token. The band comes from a sample of
// the candidates (sampled_ring.h), from outside in: the mass beyond the
// typical set is a tail of many light tokens (an LLM-shaped row's floor far
// below the centre), which a sample estimates well where it would not the
// heavy head inside. The bin where the sampled tail, scaled to the
// candidates, passes (1 - p) z holds the stop; the band takes a quarter more
// of the sampled candidates beyond it, and a bin. No band when that band
// holds more than kBandShare of the sample (a flat row, a large p), where
// the gather would cost about what it saves. A band that falls short of the
// stop is completed by the full histogram (the same sums), so a poor sample
// costs time only.
constexpr double kBandShare = 0.15;
// The same sample also sets the histogram's reach: a reach from the exp's
// underflow (~88 T around the centre) spreads a flat row's distances over a
// few hundred of the 4096 buckets, ~1 800 tokens in the stop's, which then
// takes a bisection pass to narrow. The reach is cut to
// sampled::kReachPerStop times the sampled stop (and, with a band,
// kReachPerBand times the band's edge), so the stop's bucket holds a few
// hundred; everything beyond it falls in the last bucket, and a stop beyond
// it (a sample far off) takes the full reach again.
constexpr double kReachPerBand = 1.5;
// Where the band would hold more than kBandShare of the candidates (a flat
// row: the typical set is most of it), the stop is instead bracketed by a
// ring of buckets [first, limit) around the sampled stop (sampled_ring.h),
// re-binned at the cut reach: the hole inside it is only counted and
// weighed (BandSumGatherRing: BandSum's sums), the ring's tokens gathered
// and histogrammed. A stop inside the hole takes the full histogram; one
// beyond the ring completes it, as for a band.
struct SampledBand {
  float inv_width;  // the histogram's buckets per logit unit
  uint32_t first;   // > 0: a ring [first, limit) (the hole [0, first) is only weighed)
  uint32_t limit;   // buckets [first, limit) most likely hold the stop (kMassBuckets: no band)
};

SampledBand SampleBand(const Span& s, const float* e, float center, float inv_width,
                       double p, double z) {
  using sampled::kBins;
  double mass[kBins];
  uint32_t count[kBins];
  auto distance_at = [center](float inv) {
    return [center, inv](float v) { return std::fabs(v - center) * inv; };
  };
  const size_t n_sampled = sampled::BinSample(s.v, e, s.len, distance_at(inv_width), mass, count);
  const double scale = static_cast<double>(s.len) / static_cast<double>(n_sampled);
  const double outside_max = (1.0 - p) * z;
  auto stop_bin = [&] {  // (none passes it: everything is in bin 0)
    const uint32_t b = sampled::BinFromOutside(mass, scale, outside_max);
    return b < kBins ? b : 0u;
  };
  const uint32_t stop = stop_bin();
  size_t within = 0;
  for (uint32_t b = 0; b <= stop; ++b) within += count[b];
  // Past it by a quarter more candidates (the distance density can be
  // steep there) and a little.
  const double budget =
      1.25 * static_cast<double>(within) + 0.005 * static_cast<double>(n_sampled);
  uint32_t last = stop;
  while (last + 1 < kBins && static_cast<double>(within + count[last + 1]) <= budget) {
    within += count[++last];
  }
  // In logit units: the stop's bin's upper edge and the band's (one bin more).
  const double stop_edge = sampled::BinEdge(stop, inv_width);
  const double band_edge = sampled::BinEdge(last + 1, inv_width);
  // (The band's edge only where there is a band: a flat row's band runs
  // to the last bin.)
  const bool banded = static_cast<double>(within) <= kBandShare * static_cast<double>(n_sampled);
  const double reach =
      banded ? std::max(sampled::kReachPerStop * stop_edge, kReachPerBand * band_edge)
             : sampled::kReachPerStop * stop_edge;
  SampledBand out{sampled::InvWidthForReach(reach, inv_width), 0,
                  static_cast<uint32_t>(kMassBuckets)};
  if (banded) {
    const double limit = std::ceil(band_edge * static_cast<double>(out.inv_width)) + 1.0;
    if (limit < static_cast<double>(kMassBuckets)) out.limit = static_cast<uint32_t>(limit);
    return out;
  }
  if (out.inv_width == inv_width) return out;  // no cut reach: bins too coarse for a ring
  // The ring: the sample again, in bins at the cut reach.
  sampled::BinSample(s.v, e, s.len, distance_at(out.inv_width), mass, count);
  uint32_t first, limit;
  if (sampled::RingAround(count, stop_bin(), n_sampled, sampled::kRingMargin,
                          sampled::kRingShare, &first, &limit)) {
    out.first = first;
    out.limit = limit;
  }
  return out;
}

// The tokens of a distance band gathered from the row (ascending ids, their
// logits), every token with lo <= logit <= hi: what the first bracket's
// histogram read (n = 0: none).
struct BandList {
  const int32_t* ids = nullptr;
  const float* logits = nullptr;
  size_t n = 0;
  float lo = 0.0f, hi = 0.0f;
  // A ring's hole [hole_lo, hole_hi], whose tokens are not in the list
  // (empty, lo > hi, for a band from the centre).
  float hole_lo = INFINITY, hole_hi = -INFINITY;
  const float* w = nullptr;  // the tokens' weights (their exps), list-aligned
  BandTotals hole{0, 0.0};        // with a hole: its count and weight (BandSum's)
  bool HasHole() const { return hole_lo <= hole_hi; }
  // Whether it holds every token of the band b of logits outside the
  // band a inside it (a may be empty).
  bool Covers(const FloatBand& a, const FloatBand& b) const {
    if (!(n > 0 && lo <= b.lo && b.hi <= hi)) return false;
    return !HasHole() || (a.lo <= a.hi && a.lo <= hole_lo && hole_hi <= a.hi);
  }
};

// The row's cut in SIMD passes, without gathering and classifying every
// candidate: the tokens within r_lo (A) are only counted and weighed
// (BandSum, the float-lane sums z is made of), the annulus r_lo < d <= r_hi
// (B, usually a few thousand tokens at most) is gathered, sorted and walked from
// there, and the survivors (every token within the stop's distance d*, ties
// at d* up to the stopping id) are gathered once, with their exps, in
// ascending ids: the draw's list. False when the stop is not in B (the float
// sums misled the bracket), with c unchanged (at most its lazy sorted-prefix
// cache dropped): the general walk below then runs.
bool KeepRowBand(Candidates& c, const Span& s, const float* e, double center, double r_lo,
                 double r_hi, double target, size_t keep_min, float max, float scale,
                 const BandList& band, bool draw_follows, Workspace& ws) {
  const FloatBand a = r_lo >= 0.0 ? BandWithin(center, r_lo) : FloatBand{INFINITY, -INFINITY};
  const FloatBand b = BandWithin(center, r_hi);
  const bool a_empty = !(a.lo <= a.hi);
  if (!(b.lo <= b.hi)) return false;
  // The annulus and the survivors from the histogram's band when it holds
  // B (a tenth of the row, say, instead of all of it): the same tokens in
  // the same order, as positions in the band's list, then its ids. A ring
  // holds B when A holds its hole: A is then weighed as the hole and the
  // ring's tokens inside A; a band from the centre weighs A from its own
  // tokens (float-lane sums grouped otherwise than one BandSum over A on the
  // row: a cut can move only where the walk's margin is below ~1e-7 of the
  // mass, inside kExceedFuzz).
  const bool from_band = band.Covers(a, b);
  BandTotals in_a{0, 0.0};
  if (!a_empty && from_band && band.w) {
    // A's tokens outside the hole (all of them, for a band from the centre)
    // are in the list: A weighed from it, not from a pass over the row.
    const BandTotals listed = BandSum(band.logits, band.w, band.n, a.lo, a.hi);
    in_a = BandTotals{band.hole.count + listed.count, band.hole.sum_w + listed.sum_w};
  } else if (!a_empty) {
    in_a = BandSum(s.v, e, s.len, a.lo, a.hi);
  }
  if (in_a.sum_w > target && in_a.count >= keep_min) return false;  // the stop is inside A

  const float* blocks = RowBlocks(c);
  int32_t* g_idx = ws.tmp_ids.data();
  float* g_val = ws.tmp_logits.data();
  const float past_b = std::nextafter(b.hi, INFINITY);
  const float* from = from_band ? band.logits : s.v;
  const size_t from_n = from_band ? band.n : s.len;
  const float* from_blocks = from_band ? nullptr : blocks;
  size_t nb;
  if (a_empty) {
    nb = GatherInRange(from, from_n, b.lo, past_b, g_idx, g_val, from_blocks);
  } else {
    nb = GatherInRange(from, from_n, b.lo, a.lo, g_idx, g_val, from_blocks);
    nb += GatherInRange(from, from_n, std::nextafter(a.hi, INFINITY), past_b, g_idx + nb,
                        g_val + nb, from_blocks);
  }
  if (from_band) {
    ++ws.probes.typical_band_list_cuts;
    for (size_t t = 0; t < nb; ++t) g_idx[t] = band.ids[g_idx[t]];
  }
  double* dist = ws.stage_f64.data();
  uint64_t* perm = ws.keys.data();
  for (size_t t = 0; t < nb; ++t) {
    dist[t] = std::fabs(static_cast<double>(g_val[t]) - center);
    perm[t] = t;
  }
  std::sort(perm, perm + nb, [&](uint64_t x, uint64_t y) {
    if (dist[x] != dist[y]) return dist[x] < dist[y];
    return g_idx[x] < g_idx[y];
  });
  double cum = in_a.sum_w;
  size_t kept = in_a.count;
  size_t walked = 0;
  for (; walked < nb; ++walked) {
    cum += e[g_idx[perm[walked]]];
    ++kept;
    if (cum > target && kept >= keep_min) break;
  }
  if (walked == nb) return false;  // no stop within r_hi
  const double stop = dist[perm[walked]];
  size_t ties_out = 0;  // at the stop's distance, after it in id order
  while (walked + 1 + ties_out < nb && dist[perm[walked + 1 + ties_out]] == stop) ++ties_out;
  if (kept >= c.row_finite) return false;  // keeps everything: the general path's no-op

  const FloatBand f = BandWithin(center, stop);
  if (draw_follows && ties_out == 0 && KeepAsRowBand(kept, c.vocab)) {
    // A large set the draw reads straight from the row: no gather.
    TakeRowBand(c, f.lo, f.hi, kept, e, max, scale);
    return true;
  }
  float* list_exp = ws.stage_f32.data();
  const int32_t last_id = g_idx[perm[walked]];
  size_t n;
  if (from_band && !band.HasHole()) {
    // Positions in the band's list (it lives in ws.ids / ws.logits: the
    // survivors are compacted in place, each read at or past its slot).
    n = GatherInRange(band.logits, band.n, f.lo, std::nextafter(f.hi, INFINITY), g_idx, g_val);
    int32_t* ids = ws.ids.data();
    float* logits = ws.logits.data();
    for (size_t j = 0; j < n; ++j) {
      const int32_t id = band.ids[g_idx[j]];
      ids[j] = id;
      logits[j] = g_val[j];
      list_exp[j] = e[id];
    }
  } else {
    n = GatherInRangeWith(s.v, s.len, f.lo, std::nextafter(f.hi, INFINITY), ws.ids.data(),
                          ws.logits.data(), blocks, e, list_exp);
  }
  if (n != kept + ties_out) {
    // The counts disagree (never expected): the gather overwrote the row's
    // sorted-prefix cache in ws.ids / ws.logits, so it is dropped (lazy again).
    c.size = 0;
    c.sorted = 0;
    return false;
  }
  if (ties_out > 0) {
    // Drop the ties beyond the stopping id (rare: an exactly equal
    // distance), with their exps.
    int32_t* ids = ws.ids.data();
    float* logits = ws.logits.data();
    size_t j = 0;
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] > last_id && std::fabs(static_cast<double>(logits[i]) - center) == stop) continue;
      ids[j] = ids[i];
      logits[j] = logits[i];
      list_exp[j] = list_exp[i];
      ++j;
    }
    n = j;
  }
  // The draw weighs the survivors by the walk's own exps (from the row's
  // maximum; see Candidates::list_exp).
  TakeRowGather(c, n, ws, list_exp, max, scale);
  return true;
}

}  // namespace

void ApplyTypical(Candidates& c, const TypicalParams& p, Workspace& ws, const StageContext& ctx) {
  const size_t n = c.Count();
  if (!(p.p < 1.0f) || n <= 1) return;
  const Span s = c.truncated ? Span{c.logits, c.ids, c.size} : Span{c.row, nullptr, c.vocab};
  const size_t keep_min = std::max<size_t>(p.min_keep, 1);
  const float max = CandidateMax(c);
  const double temp = c.temperature;
  // On the row the exps go to row_exp, so the survivors can carry them to
  // the draw (Candidates::list_exp).
  float* e = c.truncated ? ws.stage_f32.data() : ws.row_exp.data();
  const float scale = static_cast<float>(1.0 / temp);
  const ExpMomentSums m = ExpMoments(s.v, s.len, max, scale, e);
  const double z = m.sum_e;
  // -log p_i - H = E_p[x] - x_i, x = (l - max) / T: the distance is
  // |l_i - center| / T with center the logit of typical surprise.
  const double center = static_cast<double>(max) + temp * (m.sum_ex / z);
  const double target = static_cast<double>(p.p) * (1.0 + kExceedFuzz) * z;
  const BandProbe probe{s, e, center, n, z};

  int32_t* out = ws.stage_i32.data();  // kept tokens, as indices into s.v
  double* dist = ws.stage_f64.data();
  int32_t* g_idx = ws.tmp_ids.data();
  float* g_val = ws.tmp_logits.data();
  uint64_t* perm = ws.keys.data();

  // Invariant between rounds: exactly the candidates with distance <= r_done
  // (logit units) have been kept, `kept` of them with mass `cum` (the same
  // float weights e_i as z, summed in double, so the ratio cum / z carries
  // no bias between the two), and the walk has not stopped among them.
  double r_done = -1.0;
  size_t kept = 0;
  double cum = 0.0;
  bool stopped = false;
  BandList band;  // the first bracket's band, when its histogram read one (on the row)
  for (int round = 0; !stopped; ++round) {
    double r_lo = r_done, r_hi = kInf;
    if (round < 2) {
      const double margin = (round == 0 ? 1e-6 : 1e-3) * z;
      auto enough = [&](const BandTotals& b) {
        return b.sum_w > target + margin && b.count >= keep_min;
      };
      auto short_of = [&](const BandTotals& b) {
        return b.sum_w <= target - margin || b.count < keep_min;
      };
      // r_hi: the walk certainly stops within it. Widen geometrically from
      // r_done, then bisect; invariant: !enough(at a), enough(at b).
      double a = r_done, b = kInf, r_cover = kInf;
      BandTotals ta{kept, cum}, tb{n, z};
      const double base = std::max(r_done, 0.0);
      if (round == 0 && n >= kHistogramMin) {
        // One pass: mass and count per distance bucket (the last also
        // everything beyond the reach). A radius `slack` inside bucket k's
        // lower edge holds only buckets < k, one `slack` past its upper
        // edge all buckets <= k (slack bounds the float rounding of the
        // bucket coordinate), so the histogram's prefix sums bound the
        // bands' totals: a short prefix gives a short radius, an enough
        // prefix a radius past the stop (what the bisection below and the
        // walk's fallbacks rely on). Every distance with e > 0 is below
        // the full reach (e = 0 below x = -87.3, and c* is a mean of such
        // x); the sample cuts it down (SampleBand).
        const double full_reach = std::max(static_cast<double>(max) - center,
                                           center - (static_cast<double>(max) - 88.0 * temp));
        const float full_inv_width = static_cast<float>(kMassBuckets / full_reach);
        double* mass = ws.hist_mass.data();
        uint32_t* in_bucket = ws.hist_count.data();
        const float center_f = static_cast<float>(center);
        const SampledBand sampled = SampleBand(s, e, center_f, full_inv_width, p.p, z);
        for (int attempt = 0; attempt < 2; ++attempt) {
          // The sample's reach, then (when it was narrowed and the stop lay
          // beyond it: a sample far off) the full reach, without a band.
          const float inv_width = attempt == 0 ? sampled.inv_width : full_inv_width;
          const double width = 1.0 / static_cast<double>(inv_width);
          const double slack =
              1e-6 * (std::fabs(center) + static_cast<double>(kMassBuckets) * width);
          // Buckets [0, valid) hold the full histogram's sums.
          uint32_t valid = attempt > 0 || !ws.tuning.typical_histogram_bands ? static_cast<uint32_t>(kMassBuckets)
                           : ws.tuning.typical_forced_ring_limit > 0 ? ws.tuning.typical_forced_ring_limit
                                                              : sampled.limit;
          if (attempt > 0) {
            ++ws.probes.typical_histogram_reach_misses;
            band = BandList{};
            a = r_done;
            ta = BandTotals{kept, cum};
          }
          // A ring [first, valid) around the sampled stop (first > 0) or a
          // band [0, valid) from the centre.
          const uint32_t first = attempt > 0 || !ws.tuning.typical_histogram_bands || valid == kMassBuckets ? 0
                                 : ws.tuning.typical_forced_ring_limit > 0 ? ws.tuning.typical_forced_ring_first
                                                              : sampled.first;
          BandTotals hole{0, 0.0};  // buckets [0, first), weighed by BandSum's sums
          if (valid < kMassBuckets) {
            float band_lo, band_hi, hole_lo = INFINITY, hole_hi = -INFINITY;
            DistanceBucketBand(center_f, inv_width, valid, &band_lo, &band_hi);
            if (first > 0) DistanceBucketBand(center_f, inv_width, first, &hole_lo, &hole_hi);
            // On the row into ws.ids / ws.logits (the row's sorted-prefix
            // cache, dropped), where KeepRowBand takes its tokens from.
            int32_t* band_ids = c.truncated ? g_idx : ws.ids.data();
            float* band_logits = c.truncated ? g_val : ws.logits.data();
            if (!c.truncated) c.size = 0;
            // On the row a band's or ring's weights come with it,
            // list-aligned (in stage_f32, free until the cut's survivors):
            // the histogram's weights, and the cut's inner band (the part
            // outside a ring's hole) weighed from the list, not the row.
            float* list_w = !c.truncated ? ws.stage_f32.data() : nullptr;
            size_t m;
            if (first > 0) {
              hole = BandSumGatherRing(s.v, e, s.len, band_lo, band_hi, hole_lo, hole_hi,
                                       band_ids, band_logits, list_w, &m);
              ++ws.probes.typical_histogram_rings;
            } else if (list_w) {
              m = GatherInRangeWithSparse(s.v, s.len, band_lo, std::nextafter(band_hi, INFINITY),
                                          band_ids, band_logits, RowBlocks(c), e, list_w);
            } else {
              m = GatherInRange(s.v, s.len, band_lo, std::nextafter(band_hi, INFINITY), band_ids,
                                band_logits, nullptr);
            }
            DistanceHistogramOf(list_w ? nullptr : band_ids, band_logits, m, list_w ? list_w : e,
                                center_f, inv_width, valid, mass, in_bucket);
            if (!c.truncated) {
              band = BandList{band_ids, band_logits, m, band_lo, band_hi, hole_lo, hole_hi,
                              list_w, hole};
            }
          } else {
            DistanceHistogram(s.v, e, s.len, center_f, inv_width, mass, in_bucket);
          }
          BandTotals prefix{0, 0.0};
          size_t k = 0;
          if (first > 0) {
            if (enough(hole)) {  // the stop lies inside the hole: every bucket
              ++ws.probes.typical_histogram_ring_misses;
              DistanceHistogram(s.v, e, s.len, center_f, inv_width, mass, in_bucket);
              valid = kMassBuckets;
            } else {
              k = first;
              prefix = hole;
            }
          }
          for (; k + 1 < kMassBuckets; ++k) {
            if (k == valid) {  // the band fell short of the stop: every bucket
              ++ws.probes.typical_histogram_band_misses;
              DistanceHistogram(s.v, e, s.len, center_f, inv_width, mass, in_bucket);
              valid = kMassBuckets;
            }
            const double edge = static_cast<double>(k) * width - slack;
            if (edge > a && short_of(prefix)) {
              a = edge;
              ta = prefix;
            }
            prefix.count += in_bucket[k];
            prefix.sum_w += mass[k];
            if (enough(prefix)) {
              b = static_cast<double>(k + 1) * width + slack;
              tb = prefix;
              break;
            }
          }
          if (valid < kMassBuckets) ++ws.probes.typical_histogram_band_hits;
          if (b < kInf || inv_width == full_inv_width) break;
        }
      } else {
        for (double step = 0.25 * temp; step < 1e30; step *= 4.0) {
          const BandTotals t = probe.At(base + step);
          if (enough(t)) {
            b = base + step;
            tb = t;
            break;
          }
          if (t.count >= n) {  // the band holds everything and is not enough
            r_cover = base + step;
            break;
          }
          a = base + step;
          ta = t;
        }
      }
      for (int it = 0; it < 64 && b < kInf && tb.count > ta.count + kAnnulusBudget; ++it) {
        const double from = std::max(a, 0.0);  // r_done may be -1 (nothing)
        const double mid = from + (b - from) * 0.5;
        if (!(mid > a && mid < b)) break;
        const BandTotals t = probe.At(mid);
        if (enough(t)) {
          b = mid;
          tb = t;
        } else {
          a = mid;
          ta = t;
        }
      }
      r_hi = b;
      // r_lo: the walk certainly does not stop within it. Bisect between the
      // best known short radius and r_hi (or the radius covering everything).
      double lo = r_done;
      BandTotals tlo{kept, cum};
      if (a > r_done && short_of(ta)) {
        lo = a;
        tlo = ta;
      }
      double hi = b < kInf ? b : r_cover;
      BandTotals thi = b < kInf ? tb : BandTotals{n, z};
      for (int it = 0; it < 64 && hi < kInf && thi.count > tlo.count + kAnnulusBudget; ++it) {
        const double from = std::max(lo, 0.0);
        const double mid = from + (hi - from) * 0.5;
        if (!(mid > lo && mid < hi)) break;
        const BandTotals t = probe.At(mid);
        if (short_of(t)) {
          lo = mid;
          tlo = t;
        } else {
          hi = mid;
          thi = t;
        }
      }
      r_lo = lo;
    }

    // (Any round: the rounds before kept whole bands, everything within
    // r_done <= r_lo, which is what the band path assumes of A.)
    if (!c.truncated && r_hi < kInf && ws.tuning.typical_row_bands &&
        KeepRowBand(c, s, e, center, r_lo, r_hi, target, keep_min, max, scale, band,
                    ctx.draw_follows, ws)) {
      ++ws.probes.typical_row_band_hits;
      return;
    }
    band = BandList{};  // (a failed cut may have written over it)
    // Gather the candidates with r_done < distance <= r_hi (exact double
    // distances): inside r_lo they are kept unsorted (A), beyond it they form
    // the annulus (B) that is sorted and walked.
    const float gather_lo = r_hi < kInf ? FloatFloor(center - r_hi) : -FLT_MAX;
    const size_t gathered = GatherAtLeast(s.v, s.len, gather_lo, g_idx, g_val);
    size_t nb = 0, na = 0;
    double cum_a = 0.0;
    for (size_t j = 0; j < gathered; ++j) {
      const double d = std::fabs(static_cast<double>(g_val[j]) - center);
      if (d <= r_done || d > r_hi) continue;
      if (d <= r_lo) {
        out[kept + na++] = g_idx[j];
        cum_a += e[g_idx[j]];
      } else {
        g_idx[nb] = g_idx[j];
        g_val[nb] = g_val[j];
        dist[nb] = d;
        ++nb;
      }
    }
    if (cum + cum_a > target && kept + na >= keep_min) {
      // The float sums misled the bracket: the stop lies inside A. Walk A
      // and B together, in order.
      for (size_t t = 0; t < na; ++t) {
        const int32_t idx = out[kept + t];
        g_idx[nb] = idx;
        g_val[nb] = s.v[idx];
        dist[nb] = std::fabs(static_cast<double>(s.v[idx]) - center);
        ++nb;
      }
    } else {
      kept += na;
      cum += cum_a;
    }
    for (size_t t = 0; t < nb; ++t) perm[t] = t;
    std::sort(perm, perm + nb, [&](uint64_t x, uint64_t y) {
      if (dist[x] != dist[y]) return dist[x] < dist[y];
      return s.Id(static_cast<size_t>(g_idx[x])) < s.Id(static_cast<size_t>(g_idx[y]));
    });
    for (size_t t = 0; t < nb; ++t) {
      const size_t j = static_cast<size_t>(perm[t]);
      out[kept++] = g_idx[j];
      cum += e[g_idx[j]];
      if (cum > target && kept >= keep_min) {
        stopped = true;
        break;
      }
    }
    if (r_hi == kInf) break;  // everything has been walked
    r_done = r_hi;
  }
  if (kept >= n) return;  // nothing removed: the candidates stay as they are

  if (!c.truncated) {
    // The survivors as a list in ascending ids (the draw's canonical order,
    // so it needs no sort): a bitmap of the kept ids (most of them come in
    // ascending runs, so each word is built in a register), then its set
    // bits in order, with their exps (from the row's maximum): the draw's
    // weights (Candidates::list_exp).
    uint64_t* bits = ws.sort_scratch.data();
    const size_t words = (c.vocab + 63) / 64;
    std::fill(bits, bits + words, uint64_t{0});
    size_t word_at = 0;
    uint64_t word = 0;
    for (size_t j = 0; j < kept; ++j) {
      const uint32_t id = static_cast<uint32_t>(out[j]);
      if ((id >> 6) != word_at) {
        bits[word_at] |= word;
        word_at = id >> 6;
        word = 0;
      }
      word |= uint64_t{1} << (id & 63);
    }
    bits[word_at] |= word;
    float* list_exp = ws.stage_f32.data();
    size_t j = 0;
    for (size_t w = 0; w < words; ++w) {
      for (uint64_t set = bits[w]; set != 0; set &= set - 1) {
        const size_t id = w * 64 + static_cast<size_t>(__builtin_ctzll(set));
        ws.ids[j] = static_cast<int32_t>(id);
        ws.logits[j] = c.row[id];
        list_exp[j] = e[id];
        ++j;
      }
    }
    TakeRowGather(c, kept, ws, list_exp, max, scale);
    return;
  }
  // A list: compact in place, keeping the list order (and what is left of
  // its sorted prefix, which stays the head of the survivors).
  for (size_t j = 0; j < kept; ++j) e[out[j]] = -1.0f;  // e >= 0 otherwise
  CompactList(c, [e](size_t i) { return e[i] < 0.0f; });
}

}  // namespace bd
