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
#include "stages/position_sort.h"
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

// What the cut needs of the candidates, fixed for one ApplyTypical.
struct TypicalSetup {
  Span s;
  float* e;         // the weights exp((l - max) / T), aligned with s
  size_t n;         // the candidates
  double z;         // sum of e (float-lane sums)
  float max;        // the candidates' largest logit
  float scale;      // 1 / T
  double temp;      // T
  double center;    // the logit of typical surprise: distances are |l - center|
  double target;    // the walk stops once its mass exceeds this ...
  size_t keep_min;  // ... and it has kept at least this many
  double p;         // the stage's p
  BandProbe probe;
};

// The two radii between which the walk stops: within lo it certainly does
// not, within hi it certainly does (hi = inf: not bracketed).
struct Radii {
  double lo, hi;
};

// The tokens within r_lo (A) are only counted and weighed.
BandTotals WeighInnerBand(const TypicalSetup& t, const FloatBand& a, bool from_band,
                          const BandList& band) {
  if (!(a.lo <= a.hi)) return BandTotals{0, 0.0};
  if (from_band && band.w) {
    // A's tokens outside the hole (all of them, for a band from the centre)
    // are in the list: A weighed from it, not from a pass over the row.
    const BandTotals listed = BandSum(band.logits, band.w, band.n, a.lo, a.hi);
    return BandTotals{band.hole.count + listed.count, band.hole.sum_w + listed.sum_w};
  }
  return BandSum(t.s.v, t.e, t.s.len, a.lo, a.hi);
}

// The annulus B = b outside a (ids, logits) into ws.tmp_ids / ws.tmp_logits,
// in ascending ids: from the band's list when it holds B, else from the row.
size_t GatherAnnulus(const Candidates& c, const TypicalSetup& t, const FloatBand& a,
                     const FloatBand& b, bool from_band, const BandList& band, Workspace& ws) {
  int32_t* idx = ws.tmp_ids.data();
  float* val = ws.tmp_logits.data();
  const float past_b = std::nextafter(b.hi, INFINITY);
  const float* from = from_band ? band.logits : t.s.v;
  const size_t from_n = from_band ? band.n : t.s.len;
  const float* from_blocks = from_band ? nullptr : RowBlocks(c);
  size_t nb;
  if (!(a.lo <= a.hi)) {
    nb = GatherInRange(from, from_n, b.lo, past_b, idx, val, from_blocks);
  } else {
    nb = GatherInRange(from, from_n, b.lo, a.lo, idx, val, from_blocks);
    nb += GatherInRange(from, from_n, std::nextafter(a.hi, INFINITY), past_b, idx + nb, val + nb,
                        from_blocks);
  }
  if (from_band) {
    ++ws.probes.typical_band_list_cuts;
    for (size_t j = 0; j < nb; ++j) idx[j] = band.ids[idx[j]];
  }
  return nb;
}

// Where the walk over the annulus, in distance order (ties: lower id first),
// from the inner band's totals stops: at sorted position `walked` (the
// annulus is exhausted when walked == nb), with `kept` tokens; the stop's
// distance, and the tokens after it at that same distance.
struct AnnulusStop {
  size_t walked;
  size_t kept;
  double distance;
  size_t ties_out;
};

// Sorts the annulus's nb tokens (ws.tmp_ids / ws.tmp_logits) by distance
// into ws.keys (their distances in ws.stage_f64) and walks it.
AnnulusStop WalkAnnulusToStop(const TypicalSetup& t, size_t nb, BandTotals inner, Workspace& ws) {
  const int32_t* idx = ws.tmp_ids.data();
  const float* val = ws.tmp_logits.data();
  double* dist = ws.stage_f64.data();
  uint64_t* perm = ws.keys.data();
  for (size_t j = 0; j < nb; ++j) {
    dist[j] = std::fabs(static_cast<double>(val[j]) - t.center);
    perm[j] = PositionWithId(idx[j], j);
  }
  SortPositionsByKey(dist, perm, nb);
  double cum = inner.sum_w;
  AnnulusStop stop{0, inner.count, 0.0, 0};
  for (; stop.walked < nb; ++stop.walked) {
    cum += t.e[idx[PositionOf(perm[stop.walked])]];
    ++stop.kept;
    if (cum > t.target && stop.kept >= t.keep_min) break;
  }
  if (stop.walked == nb) return stop;
  stop.distance = dist[PositionOf(perm[stop.walked])];
  while (stop.walked + 1 + stop.ties_out < nb &&
         dist[PositionOf(perm[stop.walked + 1 + stop.ties_out])] == stop.distance) {
    ++stop.ties_out;
  }
  return stop;
}

// The survivors, every token whose distance is within f (ascending ids),
// into ws.ids / ws.logits with their exps in list_exp: from the band's list
// when it holds them, else from the row.
size_t GatherSurvivors(const Candidates& c, const TypicalSetup& t, const FloatBand& f,
                       bool from_band, const BandList& band, float* list_exp, Workspace& ws) {
  const float past_f = std::nextafter(f.hi, INFINITY);
  if (!(from_band && !band.HasHole())) {
    return GatherInRangeWith(t.s.v, t.s.len, f.lo, past_f, ws.ids.data(), ws.logits.data(),
                             RowBlocks(c), t.e, list_exp);
  }
  // Positions in the band's list (it lives in ws.ids / ws.logits: the
  // survivors are compacted in place, each read at or past its slot).
  int32_t* idx = ws.tmp_ids.data();
  float* val = ws.tmp_logits.data();
  const size_t n = GatherInRange(band.logits, band.n, f.lo, past_f, idx, val);
  int32_t* ids = ws.ids.data();
  float* logits = ws.logits.data();
  for (size_t j = 0; j < n; ++j) {
    const int32_t id = band.ids[idx[j]];
    ids[j] = id;
    logits[j] = val[j];
    list_exp[j] = t.e[id];
  }
  return n;
}

// Drops from the n survivors (ws.ids / ws.logits / list_exp) the ties at the
// stop's distance past the stopping id; returns how many are left.
size_t DropTiesPastStop(const TypicalSetup& t, size_t n, double stop, int32_t last_id,
                        float* list_exp, Workspace& ws) {
  int32_t* ids = ws.ids.data();
  float* logits = ws.logits.data();
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] > last_id && std::fabs(static_cast<double>(logits[i]) - t.center) == stop) continue;
    ids[j] = ids[i];
    logits[j] = logits[i];
    list_exp[j] = list_exp[i];
    ++j;
  }
  return j;
}

// The row's cut in SIMD passes, without gathering and classifying every
// candidate: the tokens within r_lo (A) are only counted and weighed
// (BandSum, the float-lane sums z is made of), the annulus r_lo < d <= r_hi
// (B, usually a few thousand tokens at most) is gathered, sorted and walked from
// there, and the survivors (every token within the stop's distance d*, ties
// at d* up to the stopping id) are gathered once, with their exps, in
// ascending ids: the draw's list. False when the stop is not in B (the float
// sums misled the bracket), with c unchanged (at most its lazy sorted-prefix
// cache dropped): the general walk then runs.
//   The annulus and the survivors come from the histogram's band when it
// holds B (a tenth of the row, say, instead of all of it): the same tokens
// in the same order, as positions in the band's list, then its ids. A ring
// holds B when A holds its hole: A is then weighed as the hole and the
// ring's tokens inside A; a band from the centre weighs A from its own
// tokens (float-lane sums grouped otherwise than one BandSum over A on the
// row: a cut can move only where the walk's margin is below ~1e-7 of the
// mass, inside kExceedFuzz).
bool KeepRowBand(Candidates& c, const TypicalSetup& t, Radii r, const BandList& band,
                 bool draw_follows, Workspace& ws, DrawHint& hint) {
  const FloatBand a =
      r.lo >= 0.0 ? BandWithin(t.center, r.lo) : FloatBand{INFINITY, -INFINITY};
  const FloatBand b = BandWithin(t.center, r.hi);
  if (!(b.lo <= b.hi)) return false;
  const bool from_band = band.Covers(a, b);
  const BandTotals in_a = WeighInnerBand(t, a, from_band, band);
  if (in_a.sum_w > t.target && in_a.count >= t.keep_min) return false;  // the stop is inside A

  const size_t nb = GatherAnnulus(c, t, a, b, from_band, band, ws);
  const AnnulusStop stop = WalkAnnulusToStop(t, nb, in_a, ws);
  if (stop.walked == nb) return false;  // no stop within r_hi
  const size_t kept = stop.kept;
  if (kept >= c.row_finite) return false;  // keeps everything: the general path's no-op

  const FloatBand f = BandWithin(t.center, stop.distance);
  if (draw_follows && stop.ties_out == 0 && KeepAsRowBand(kept, c.vocab)) {
    // A large set the draw reads straight from the row: no gather.
    hint = TakeRowBand(c, f.lo, f.hi, kept, t.e, t.max, t.scale);
    return true;
  }
  float* list_exp = ws.stage_f32.data();
  const int32_t last_id = ws.tmp_ids[PositionOf(ws.keys[stop.walked])];
  size_t n = GatherSurvivors(c, t, f, from_band, band, list_exp, ws);
  if (n != kept + stop.ties_out) {
    // The counts disagree (never expected): the gather overwrote the row's
    // sorted-prefix cache in ws.ids / ws.logits, so it is dropped (lazy again).
    c.size = 0;
    c.sorted = 0;
    return false;
  }
  // Ties beyond the stopping id (rare: an exactly equal distance) go, with
  // their exps.
  if (stop.ties_out > 0) n = DropTiesPastStop(t, n, stop.distance, last_id, list_exp, ws);
  // The draw weighs the survivors by the walk's own exps (from the row's
  // maximum; see DrawHint::kListExps).
  hint = TakeRowGather(c, n, ws, list_exp, t.max, t.scale);
  return true;
}

// The walk's progress between rounds: exactly the candidates with distance
// <= r_done (logit units) have been kept (their indices into s.v at the
// head of ws.stage_i32), `kept` of them with mass `cum` (the same float
// weights e_i as z, summed in double, so the ratio cum / z carries no bias
// between the two), and the walk has not stopped among them unless stopped.
struct TypicalWalk {
  double r_done = -1.0;
  size_t kept = 0;
  double cum = 0.0;
  bool stopped = false;
};

// A round's test of a band's totals against the target, with a margin for
// the float sums: certainly past the stop, or certainly short of it.
struct StopTest {
  double target;
  double margin;
  size_t keep_min;
  bool Enough(const BandTotals& b) const {
    return b.sum_w > target + margin && b.count >= keep_min;
  }
  bool ShortOf(const BandTotals& b) const {
    return b.sum_w <= target - margin || b.count < keep_min;
  }
};

// The search for the round's radii. Invariant: !Enough at a (totals ta),
// Enough at b (totals tb; b = inf: none found yet); r_cover: a radius that
// holds every candidate without being enough (inf: none found).
struct Bracket {
  double a, b, r_cover;
  BandTotals ta, tb;
};

// The bracket from radii growing geometrically from base (a quarter of T,
// then four times more each step).
void WidenBracket(const TypicalSetup& t, const StopTest& st, double base, Bracket& br) {
  for (double step = 0.25 * t.temp; step < 1e30; step *= 4.0) {
    const BandTotals at = t.probe.At(base + step);
    if (st.Enough(at)) {
      br.b = base + step;
      br.tb = at;
      return;
    }
    if (at.count >= t.n) {  // the band holds everything and is not enough
      br.r_cover = base + step;
      return;
    }
    br.a = base + step;
    br.ta = at;
  }
}

// A distance histogram's buckets: inv_width per logit unit from the centre.
struct DistanceGrid {
  float center;
  float inv_width;
  double width;  // 1 / inv_width
  double slack;  // bounds the float rounding of a bucket coordinate (logit units)
};

DistanceGrid GridAt(double center, float inv_width) {
  const double width = 1.0 / static_cast<double>(inv_width);
  return DistanceGrid{static_cast<float>(center), inv_width, width,
                      1e-6 * (std::fabs(center) + static_cast<double>(kMassBuckets) * width)};
}

// The histogram over every candidate (ws.hist_mass / ws.hist_count).
void HistogramOfAll(const TypicalSetup& t, const DistanceGrid& g, Workspace& ws) {
  DistanceHistogram(t.s.v, t.e, t.s.len, g.center, g.inv_width, ws.hist_mass.data(),
                    ws.hist_count.data());
}

// The histogram's buckets [first, valid) from the tokens of that band (first
// 0) or ring (first > 0: the hole [0, first) is only counted and weighed, and
// its totals returned), gathered into ws.ids / ws.logits on the row (the
// row's sorted-prefix cache, dropped; *band then describes them, with their
// weights in ws.stage_f32, free until the cut's survivors), into
// ws.tmp_ids / ws.tmp_logits on a list. valid = kMassBuckets: every bucket.
BandTotals HistogramOfBand(Candidates& c, const TypicalSetup& t, const DistanceGrid& g,
                           uint32_t first, uint32_t valid, BandList* band, Workspace& ws) {
  if (valid >= kMassBuckets) {
    HistogramOfAll(t, g, ws);
    return BandTotals{0, 0.0};
  }
  BandTotals hole{0, 0.0};
  float band_lo, band_hi, hole_lo = INFINITY, hole_hi = -INFINITY;
  DistanceBucketBand(g.center, g.inv_width, valid, &band_lo, &band_hi);
  if (first > 0) DistanceBucketBand(g.center, g.inv_width, first, &hole_lo, &hole_hi);
  int32_t* band_ids = c.truncated ? ws.tmp_ids.data() : ws.ids.data();
  float* band_logits = c.truncated ? ws.tmp_logits.data() : ws.logits.data();
  if (!c.truncated) c.size = 0;
  float* list_w = !c.truncated ? ws.stage_f32.data() : nullptr;
  const Span& s = t.s;
  size_t m;
  if (first > 0) {
    hole = BandSumGatherRing(s.v, t.e, s.len, band_lo, band_hi, hole_lo, hole_hi, band_ids,
                             band_logits, list_w, &m);
    ++ws.probes.typical_histogram_rings;
  } else if (list_w) {
    m = GatherInRangeWithSparse(s.v, s.len, band_lo, std::nextafter(band_hi, INFINITY), band_ids,
                                band_logits, RowBlocks(c), t.e, list_w);
  } else {
    m = GatherInRange(s.v, s.len, band_lo, std::nextafter(band_hi, INFINITY), band_ids,
                      band_logits, nullptr);
  }
  DistanceHistogramOf(list_w ? nullptr : band_ids, band_logits, m, list_w ? list_w : t.e,
                      g.center, g.inv_width, valid, ws.hist_mass.data(), ws.hist_count.data());
  if (!c.truncated) {
    *band = BandList{band_ids, band_logits, m, band_lo, band_hi, hole_lo, hole_hi, list_w, hole};
  }
  return hole;
}

// Walks the histogram's prefix sums from bucket 0 (from `first` with the
// hole's totals, for a ring whose hole is short of the stop) to the first
// enough prefix: each short prefix moves a, the enough one sets b. Buckets
// from `valid` on are first completed by the histogram of every candidate
// (a band that fell short; a ring with the stop in its hole).
void ScanDistanceHistogram(const TypicalSetup& t, const StopTest& st, const DistanceGrid& g,
                           uint32_t first, uint32_t valid, BandTotals hole, Bracket& br,
                           Workspace& ws) {
  const double* mass = ws.hist_mass.data();
  const uint32_t* in_bucket = ws.hist_count.data();
  BandTotals prefix{0, 0.0};
  size_t k = 0;
  if (first > 0) {
    if (st.Enough(hole)) {  // the stop lies inside the hole: every bucket
      ++ws.probes.typical_histogram_ring_misses;
      HistogramOfAll(t, g, ws);
      valid = kMassBuckets;
    } else {
      k = first;
      prefix = hole;
    }
  }
  for (; k + 1 < kMassBuckets; ++k) {
    if (k == valid) {  // the band fell short of the stop: every bucket
      ++ws.probes.typical_histogram_band_misses;
      HistogramOfAll(t, g, ws);
      valid = kMassBuckets;
    }
    const double edge = static_cast<double>(k) * g.width - g.slack;
    if (edge > br.a && st.ShortOf(prefix)) {
      br.a = edge;
      br.ta = prefix;
    }
    prefix.count += in_bucket[k];
    prefix.sum_w += mass[k];
    if (st.Enough(prefix)) {
      br.b = static_cast<double>(k + 1) * g.width + g.slack;
      br.tb = prefix;
      break;
    }
  }
  if (valid < kMassBuckets) ++ws.probes.typical_histogram_band_hits;
}

// The bracket from one histogram of mass and count per distance bucket (the
// last also everything beyond the reach). A radius `slack` inside bucket
// k's lower edge holds only buckets < k, one `slack` past its upper edge all
// buckets <= k, so the histogram's prefix sums bound the bands' totals: a
// short prefix gives a short radius, an enough prefix a radius past the stop
// (what the bisection and the walk's fallbacks rely on). Every distance with
// e > 0 is below the full reach (e = 0 below x = -87.3, and c* is a mean of
// such x); the sample cuts the reach down and picks the band or ring of
// buckets to histogram (SampleBand). A stop beyond the cut reach takes the
// full reach again, over every bucket.
void HistogramBracket(Candidates& c, const TypicalSetup& t, const StopTest& st,
                      const TypicalWalk& w, Bracket& br, BandList* band, Workspace& ws) {
  const double max = static_cast<double>(t.max);
  const double full_reach = std::max(max - t.center, t.center - (max - 88.0 * t.temp));
  const float full_inv_width = static_cast<float>(kMassBuckets / full_reach);
  const SampledBand sampled = SampleBand(t.s, t.e, static_cast<float>(t.center), full_inv_width,
                                         t.p, t.z);
  const StageTuning& tuning = ws.tuning;
  const bool forced = tuning.typical_forced_ring_limit > 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const DistanceGrid g = GridAt(t.center, attempt == 0 ? sampled.inv_width : full_inv_width);
    // Buckets [first, valid) from the band's or ring's tokens; [0, valid)
    // then hold the full histogram's sums.
    const bool banded = attempt == 0 && tuning.typical_histogram_bands;
    const uint32_t valid = !banded ? static_cast<uint32_t>(kMassBuckets)
                           : forced ? tuning.typical_forced_ring_limit
                                    : sampled.limit;
    if (attempt > 0) {
      ++ws.probes.typical_histogram_reach_misses;
      *band = BandList{};
      br.a = w.r_done;
      br.ta = BandTotals{w.kept, w.cum};
    }
    const uint32_t first = !banded || valid == kMassBuckets ? 0
                           : forced                        ? tuning.typical_forced_ring_first
                                                           : sampled.first;
    const BandTotals hole = HistogramOfBand(c, t, g, first, valid, band, ws);
    ScanDistanceHistogram(t, st, g, first, valid, hole, br, ws);
    if (br.b < kInf || g.inv_width == full_inv_width) break;
  }
}

// Bisects b down until the bracket's annulus holds at most kAnnulusBudget
// candidates (or the radii meet in floating point).
void NarrowBracketAbove(const TypicalSetup& t, const StopTest& st, Bracket& br) {
  for (int it = 0; it < 64 && br.b < kInf && br.tb.count > br.ta.count + kAnnulusBudget; ++it) {
    const double from = std::max(br.a, 0.0);  // r_done may be -1 (nothing)
    const double mid = from + (br.b - from) * 0.5;
    if (!(mid > br.a && mid < br.b)) break;
    const BandTotals at = t.probe.At(mid);
    if (st.Enough(at)) {
      br.b = mid;
      br.tb = at;
    } else {
      br.a = mid;
      br.ta = at;
    }
  }
}

// The radius the walk certainly does not stop within: bisected between the
// best known short radius and b (or the radius covering everything).
double ShortRadius(const TypicalSetup& t, const StopTest& st, const TypicalWalk& w,
                   const Bracket& br) {
  double lo = w.r_done;
  BandTotals tlo{w.kept, w.cum};
  if (br.a > w.r_done && st.ShortOf(br.ta)) {
    lo = br.a;
    tlo = br.ta;
  }
  double hi = br.b < kInf ? br.b : br.r_cover;
  BandTotals thi = br.b < kInf ? br.tb : BandTotals{t.n, t.z};
  for (int it = 0; it < 64 && hi < kInf && thi.count > tlo.count + kAnnulusBudget; ++it) {
    const double from = std::max(lo, 0.0);
    const double mid = from + (hi - from) * 0.5;
    if (!(mid > lo && mid < hi)) break;
    const BandTotals at = t.probe.At(mid);
    if (st.ShortOf(at)) {
      lo = mid;
      tlo = at;
    } else {
      hi = mid;
      thi = at;
    }
  }
  return lo;
}

// A round's radii (the first two rounds; margins of 1e-6 z, then 1e-3 z):
// r_hi where the walk certainly stops (from the distance histogram on a
// large first round, else by widening from r_done), bisected down; r_lo
// where it certainly does not.
Radii BracketTheStop(Candidates& c, const TypicalSetup& t, const TypicalWalk& w, int round,
                     BandList* band, Workspace& ws) {
  const StopTest st{t.target, (round == 0 ? 1e-6 : 1e-3) * t.z, t.keep_min};
  Bracket br{w.r_done, kInf, kInf, BandTotals{w.kept, w.cum}, BandTotals{t.n, t.z}};
  if (round == 0 && t.n >= kHistogramMin) {
    HistogramBracket(c, t, st, w, br, band, ws);
  } else {
    WidenBracket(t, st, std::max(w.r_done, 0.0), br);
  }
  NarrowBracketAbove(t, st, br);
  return Radii{ShortRadius(t, st, w, br), br.b};
}

// The candidates with r_done < distance <= r_hi (exact double distances):
// those within r_lo (A) are kept unsorted (appended to the walk's kept
// indices, their mass to cum); the rest, the annulus (B), go to
// ws.tmp_ids / ws.tmp_logits with their distances in ws.stage_f64. Where the
// float sums misled the bracket (the stop lies inside A), A joins the
// annulus instead, so both are walked together, in order. Returns the
// annulus's size.
size_t SplitBracket(const TypicalSetup& t, Radii r, TypicalWalk& w, Workspace& ws) {
  const Span& s = t.s;
  int32_t* out = ws.stage_i32.data();
  int32_t* idx = ws.tmp_ids.data();
  float* val = ws.tmp_logits.data();
  double* dist = ws.stage_f64.data();
  const float gather_lo = r.hi < kInf ? FloatFloor(t.center - r.hi) : -FLT_MAX;
  const size_t gathered = GatherAtLeast(s.v, s.len, gather_lo, idx, val);
  size_t nb = 0, na = 0;
  double cum_a = 0.0;
  for (size_t j = 0; j < gathered; ++j) {
    const double d = std::fabs(static_cast<double>(val[j]) - t.center);
    if (d <= w.r_done || d > r.hi) continue;
    if (d <= r.lo) {
      out[w.kept + na++] = idx[j];
      cum_a += t.e[idx[j]];
    } else {
      idx[nb] = idx[j];
      val[nb] = val[j];
      dist[nb] = d;
      ++nb;
    }
  }
  if (w.cum + cum_a > t.target && w.kept + na >= t.keep_min) {
    for (size_t j = 0; j < na; ++j) {
      const int32_t i = out[w.kept + j];
      idx[nb] = i;
      val[nb] = s.v[i];
      dist[nb] = std::fabs(static_cast<double>(s.v[i]) - t.center);
      ++nb;
    }
  } else {
    w.kept += na;
    w.cum += cum_a;
  }
  return nb;
}

// Sorts the annulus (SplitBracket's) by distance (ties: lower id first) and
// keeps it in that order until the walk stops.
void WalkAnnulus(const TypicalSetup& t, size_t nb, TypicalWalk& w, Workspace& ws) {
  int32_t* out = ws.stage_i32.data();
  const int32_t* idx = ws.tmp_ids.data();
  const double* dist = ws.stage_f64.data();
  uint64_t* perm = ws.keys.data();
  for (size_t j = 0; j < nb; ++j) {
    perm[j] = PositionWithId(t.s.Id(static_cast<size_t>(idx[j])), j);
  }
  SortPositionsByKey(dist, perm, nb);
  for (size_t j = 0; j < nb; ++j) {
    const size_t at = PositionOf(perm[j]);
    out[w.kept++] = idx[at];
    w.cum += t.e[idx[at]];
    if (w.cum > t.target && w.kept >= t.keep_min) {
      w.stopped = true;
      return;
    }
  }
}

// The row's survivors (kept ids, in walk order, in ws.stage_i32) as a list
// in ascending ids (the draw's canonical order, so it needs no sort): a
// bitmap of the kept ids (most of them come in ascending runs, so each word
// is built in a register), then its set bits in order, with their exps
// (from the row's maximum): the draw's weights (DrawHint::kListExps).
void TakeKeptFromRow(Candidates& c, const TypicalSetup& t, size_t kept, Workspace& ws,
                     DrawHint& hint) {
  const int32_t* out = ws.stage_i32.data();
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
      list_exp[j] = t.e[id];
      ++j;
    }
  }
  hint = TakeRowGather(c, kept, ws, list_exp, t.max, t.scale);
}

// A list's survivors (kept positions in ws.stage_i32), compacted in place,
// keeping the list order (and what is left of its sorted prefix, which stays
// the head of the survivors).
void KeepFromList(Candidates& c, const TypicalSetup& t, size_t kept, Workspace& ws) {
  const int32_t* out = ws.stage_i32.data();
  float* e = t.e;
  for (size_t j = 0; j < kept; ++j) e[out[j]] = -1.0f;  // e >= 0 otherwise
  CompactList(c, [e](size_t i) { return e[i] < 0.0f; });
}

// One SIMD pass gives the weights e_i, z and c* (ExpMoments): the centre
// L = max + T c* and the target mass. On the row the exps go to row_exp, so
// the survivors can carry them to the draw (DrawHint::kListExps).
TypicalSetup SetUp(Candidates& c, const TypicalParams& p, Workspace& ws) {
  const size_t n = c.Count();
  const Span s = c.truncated ? Span{c.logits, c.ids, c.size} : Span{c.row, nullptr, c.vocab};
  const float max = CandidateMax(c);
  const double temp = c.temperature;
  float* e = c.truncated ? ws.stage_f32.data() : ws.row_exp.data();
  const float scale = static_cast<float>(1.0 / temp);
  const ExpMomentSums m = ExpMoments(s.v, s.len, max, scale, e);
  const double z = m.sum_e;
  // -log p_i - H = E_p[x] - x_i, x = (l - max) / T: the distance is
  // |l_i - center| / T with center the logit of typical surprise.
  const double center = static_cast<double>(max) + temp * (m.sum_ex / z);
  const double target = static_cast<double>(p.p) * (1.0 + kExceedFuzz) * z;
  const size_t keep_min = std::max<size_t>(p.min_keep, 1);
  return TypicalSetup{s,      e,        n,   z,   max, scale, temp, center,
                      target, keep_min, p.p, BandProbe{s, e, center, n, z}};
}

}  // namespace

void ApplyTypical(Candidates& c, const TypicalParams& p, Workspace& ws, const StageContext& ctx,
                  DrawHint* hint_out) {
  if (!(p.p < 1.0f) || c.Count() <= 1) return;
  DrawHint unused;
  DrawHint& hint = hint_out ? *hint_out : unused;
  const TypicalSetup t = SetUp(c, p, ws);
  TypicalWalk w;
  BandList band;  // the first bracket's band, when its histogram read one (on the row)
  for (int round = 0; !w.stopped; ++round) {
    const Radii r = round < 2 ? BracketTheStop(c, t, w, round, &band, ws) : Radii{w.r_done, kInf};
    // (Any round: the rounds before kept whole bands, everything within
    // r_done <= r_lo, which is what the band path assumes of A.)
    if (!c.truncated && r.hi < kInf && ws.tuning.typical_row_bands &&
        KeepRowBand(c, t, r, band, ctx.draw_follows, ws, hint)) {
      ++ws.probes.typical_row_band_hits;
      return;
    }
    band = BandList{};  // (a failed cut may have written over it)
    const size_t nb = SplitBracket(t, r, w, ws);
    WalkAnnulus(t, nb, w, ws);
    if (r.hi == kInf) break;  // everything has been walked
    w.r_done = r.hi;
  }
  if (w.kept >= t.n) return;  // nothing removed: the candidates stay as they are
  if (!c.truncated) {
    TakeKeptFromRow(c, t, w.kept, ws, hint);
  } else {
    KeepFromList(c, t, w.kept, ws);
  }
}

}  // namespace bd
