#include "bregman/support_sketch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bregman/renormalise.h"
#include "kernels/support_map.h"

namespace bd {
namespace bregman_detail {
namespace {

// Chebyshev points of the first kind, cos(pi (2l + 1) / 2n) for n = 8 and
// 16 (decimal literals: the same double on every compiler; symmetric).
constexpr double kNodeX8[8] = {
    0.9807852804032304,  0.8314696123025452,  0.5555702330196023,  0.19509032201612833,
    -0.19509032201612833, -0.5555702330196023, -0.8314696123025452, -0.9807852804032304};
constexpr double kNodeX16[16] = {
    0.9951847266721969,   0.9569403357322088,   0.881921264348355,    0.773010453362737,
    0.6343932841636455,   0.4713967368259978,   0.29028467725446233,  0.09801714032956077,
    -0.09801714032956077, -0.29028467725446233, -0.4713967368259978,  -0.6343932841636455,
    -0.773010453362737,   -0.881921264348355,   -0.9569403357322088,  -0.9951847266721969};

// The n nodes and T_j(x_l) at them by the three-term recurrence (IEEE
// arithmetic only).
template <size_t n>
struct NodeChebyshev {
  const double* x;
  double t[n][n];
  explicit NodeChebyshev(const double* nodes) : x(nodes) {
    for (size_t l = 0; l < n; ++l) {
      t[l][0] = 1.0;
      t[l][1] = x[l];
      for (size_t j = 2; j < n; ++j) t[l][j] = 2.0 * x[l] * t[l][j - 1] - t[l][j - 2];
    }
  }
};
const NodeChebyshev<SupportSketch::kNodes> kNarrow(kNodeX8);
const NodeChebyshev<SupportSketch::kWideNodes> kWide(kNodeX16);

// Node l's p and weight for a block's moments, and the series' coefficients
// from the increments d at the nodes (discrete orthogonality): c_j = (2 -
// [j = 0]) / n sum_l d_l T_j(x_l).
template <size_t n>
void PushNodes(const NodeChebyshev<n>& nodes, double centre, double half, const double* moments,
               std::vector<double>* node_p, std::vector<double>* weight) {
  for (size_t l = 0; l < n; ++l) {
    double w = 0.0;
    for (size_t j = n; j-- > 1;) w += nodes.t[l][j] * moments[j];
    node_p->push_back(centre + half * nodes.x[l]);
    weight->push_back((moments[0] + 2.0 * w) / static_cast<double>(n));
  }
}
template <size_t n>
void SeriesCoefficients(const NodeChebyshev<n>& nodes, const double* node_q, const double* node_p,
                        double* coef) {
  for (size_t c = 0; c < n; ++c) {
    double sum = 0.0;
    for (size_t l = 0; l < n; ++l) sum += (node_q[l] - node_p[l]) * nodes.t[l][c];
    coef[c] = sum * (c == 0 ? 1.0 : 2.0) / static_cast<double>(n);
  }
}

uint64_t Bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// The first i in [from, limit) (from >= 1) whose float64 bits differ from
// p[i - 1]'s above the low `shift` bits, else limit. Eight at a time: the
// xors' high bits or-ed over a chunk, a token-by-token look only in the
// chunk that has a change.
size_t FirstBitsChange(const double* p, size_t from, size_t limit, int shift) {
  constexpr size_t kChunk = 8;
  size_t i = from;
  for (; i + kChunk <= limit; i += kChunk) {
    uint64_t any = 0;
    for (size_t j = 0; j < kChunk; ++j) any |= (Bits(p[i + j]) ^ Bits(p[i + j - 1])) >> shift;
    if (any != 0) break;
  }
  for (; i < limit; ++i) {
    if (((Bits(p[i]) ^ Bits(p[i - 1])) >> shift) != 0) return i;
  }
  return limit;
}

}  // namespace

void SupportSketch::Reset(bool primal, double alpha) {
  primal_ = primal;
  alpha_ = alpha;
  // 2 cells per binade (p within 41 % in a block, 16 nodes; a block within
  // an eighth of that, 4.4 %, takes 8), more where b = alpha - 1 > 3: the
  // primal's and the dual's complex branch points lie at angles +-pi / b
  // (p^b = -b nu; the dual's p^b = -nu b^b / (b - 1)^{b - 1}), at least
  // p sin(pi / b) from p (p for b <= 2, as the branch point at p = 0 is;
  // 0.87 p at b = 3): cells of 2^-bits of a binade, bits >= 1 the least
  // with 3 2^{bits - 1} >= b, keep the interpolation's convergence ratio
  // within 13 % of b <= 2's (their width relative to a half binade,
  // 2^{1 - bits} <= 3 / b, is within sin(pi / b) / 0.87). Cells half as
  // wide for every b > 1 measure no more accurate: test_support_sketch.cc,
  // ~3e-15 of sum q either way (rounding).
  const double b = std::fabs(alpha - 1.0);
  int mantissa_bits = 1;
  while (mantissa_bits < 21 && 3.0 * static_cast<double>(1 << (mantissa_bits - 1)) < b) ++mantissa_bits;
  cell_shift_ = 52 - mantissa_bits;
  built_ = open_start_ = powered_ = 0;
  block_start_.clear();
  node_end_.clear();
  block_centre_.clear();
  block_inv_half_.clear();
  block_top_.clear();
  node_p_.clear();
  node_pow_.clear();
  weight_.clear();
}

void SupportSketch::Extend(const double* p, size_t n) {
  // Token i (i >= 1) opens a block when its bits leave its predecessor's
  // cell, or its eighth of the cell once the open block holds kDenseBlock
  // tokens, or when the open block holds kMaxBlock (an eighth's change
  // implies the cell's). The scan looks for the next such token a chunk at
  // a time rather than testing the rules token by token.
  size_t i = std::max<size_t>(built_, 1);
  while (i < n) {
    const size_t dense_at = open_start_ + kDenseBlock, full_at = open_start_ + kMaxBlock;
    if (i < dense_at) {
      const size_t limit = std::min(n, dense_at);
      const size_t j = FirstBitsChange(p, i, limit, cell_shift_);
      if (j < limit) {
        CloseBlock(p, j);
        i = j + 1;
        continue;
      }
      i = limit;
      if (i == n) break;
    }
    const size_t j = FirstBitsChange(p, i, std::min(n, full_at), EighthShift());
    if (j == n) break;
    CloseBlock(p, j);  // an eighth's change, or the block full (j == full_at)
    i = j + 1;
  }
  built_ = std::max(built_, n);
  const size_t count = node_p_.size();
  if (count > powered_) {
    node_pow_.resize(count);
    if (primal_) {
      PrimalPowers(node_p_.data() + powered_, count - powered_, alpha_ - 1.0,
                   node_pow_.data() + powered_);
    } else {
      DualPowers(node_p_.data() + powered_, count - powered_, alpha_, node_pow_.data() + powered_);
    }
    powered_ = count;
  }
}

void SupportSketch::CloseBlock(const double* p, size_t end) {
  const size_t start = open_start_;
  const size_t m = end - start;
  block_start_.push_back(start);
  // The block's range (p is sorted in the decoder; a caller's unsorted
  // support still gets weights for its own range). Four running extremes
  // (exact in any grouping: the maximum and minimum of the same numbers),
  // not one chain of dependent compares.
  double tops[4] = {p[start], p[start], p[start], p[start]};
  double bottoms[4] = {p[start], p[start], p[start], p[start]};
  size_t i = start + 1;
  for (; i + 4 <= end; i += 4) {
    for (size_t j = 0; j < 4; ++j) {
      tops[j] = std::max(tops[j], p[i + j]);
      bottoms[j] = std::min(bottoms[j], p[i + j]);
    }
  }
  for (; i < end; ++i) {
    tops[0] = std::max(tops[0], p[i]);
    bottoms[0] = std::min(bottoms[0], p[i]);
  }
  const double top = std::max(std::max(tops[0], tops[1]), std::max(tops[2], tops[3]));
  const double bottom = std::min(std::min(bottoms[0], bottoms[1]), std::min(bottoms[2], bottoms[3]));
  block_centre_.push_back(0.0);
  block_inv_half_.push_back(0.0);
  block_top_.push_back(top);
  // 8 nodes for a block within an eighth of a cell (its float64 bits apart
  // by less than 2^EighthShift(): exact integers, so the choice is the same
  // on every target), else 16.
  const bool wide = Bits(top) - Bits(bottom) >= (uint64_t{1} << EighthShift());
  if (m <= (wide ? kWideNodes : kNodes)) {
    for (size_t i = start; i < end; ++i) {
      node_p_.push_back(p[i]);
      weight_.push_back(1.0);
    }
  } else if (top == bottom) {
    node_p_.push_back(top);
    weight_.push_back(static_cast<double>(m));
  } else {
    // Interpolatory quadrature on the block's range: with u the block's p
    // mapped to [-1, 1], sum_i P(u_i) = sum_l f(x_l) w_l for the
    // interpolant P of f at the n nodes, w_l = (M_0 + 2 sum_j T_j(x_l) M_j) / n,
    // M_j = sum_i T_j(u_i) (discrete orthogonality of the T_j at the nodes).
    const double centre = 0.5 * (top + bottom), half = 0.5 * (top - bottom);
    const double inv_half = 1.0 / half;
    block_centre_.back() = centre;
    block_inv_half_.back() = inv_half;
    double moments[kWideNodes];
    ChebyshevMoments(p + start, m, centre, inv_half, wide ? kWideNodes : kNodes, moments);
    if (wide) {
      PushNodes(kWide, centre, half, moments, &node_p_, &weight_);
    } else {
      PushNodes(kNarrow, centre, half, moments, &node_p_, &weight_);
    }
  }
  node_end_.push_back(node_p_.size());
  open_start_ = end;
}

void SupportSketch::InterpolateQ(const double* p, const View& v, const double* node_q,
                                 double* q) const {
  const size_t first_block =
      static_cast<size_t>(std::lower_bound(block_start_.begin(), block_start_.end(), v.head_end) -
                          block_start_.begin());
  for (size_t j = first_block; j < block_start_.size() && block_start_[j] < v.exact_from; ++j) {
    const size_t start = block_start_[j];
    const size_t end = j + 1 < block_start_.size() ? block_start_[j + 1] : open_start_;
    const size_t first_node = j > 0 ? node_end_[j - 1] : 0;
    const double* values = node_q + first_node;
    if (block_inv_half_[j] == 0.0) {
      // The block's tokens themselves, or one node for equal p.
      const bool own = node_end_[j] - first_node == end - start;
      for (size_t i = start; i < end; ++i) q[i] = own ? values[i - start] : values[0];
      continue;
    }
    const double* node_p = node_p_.data() + first_node;
    const size_t terms = node_end_[j] - first_node;
    double coef[kWideNodes];
    if (terms == kWideNodes) {
      SeriesCoefficients(kWide, values, node_p, coef);
    } else {
      SeriesCoefficients(kNarrow, values, node_p, coef);
    }
    ChebyshevIncrements(p + start, end - start, block_centre_[j], block_inv_half_[j], coef, terms,
                        q + start);
  }
}

SupportSketch::View SupportSketch::For(size_t k, double exact_above) const {
  View v;
  if (k == 0) return v;
  const size_t last = k - 1;
  // The blocks before the one holding `last` (all closed ones when it is in
  // the open block).
  const size_t blocks =
      last >= open_start_
          ? block_start_.size()
          : static_cast<size_t>(std::upper_bound(block_start_.begin(), block_start_.end(), last) -
                                block_start_.begin()) -
                1;
  v.exact_from = blocks < block_start_.size() ? block_start_[blocks] : open_start_;
  v.nodes = blocks > 0 ? node_end_[blocks - 1] : 0;
  // The head: the leading blocks with a p above exact_above (p descending,
  // so their tops too).
  const size_t head = static_cast<size_t>(
      std::partition_point(block_top_.begin(), block_top_.begin() + blocks,
                           [exact_above](double top) { return top > exact_above; }) -
      block_top_.begin());
  if (head > 0) {
    v.head_end = head < blocks ? block_start_[head] : v.exact_from;
    v.first_node = node_end_[head - 1];
  }
  return v;
}

}  // namespace bregman_detail
}  // namespace bd
