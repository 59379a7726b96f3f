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

// Chebyshev points of the first kind for 8 nodes, cos(pi (2l + 1) / 16)
// (decimal literals: the same double on every compiler).
constexpr double kNodeX[SupportSketch::kNodes] = {
    0.9807852804032304,  0.8314696123025452,  0.5555702330196023,  0.19509032201612833,
    -0.19509032201612833, -0.5555702330196023, -0.8314696123025452, -0.9807852804032304};

// T_j(x_l) by the three-term recurrence (IEEE arithmetic only).
struct NodeChebyshev {
  double t[SupportSketch::kNodes][SupportSketch::kNodes];
  NodeChebyshev() {
    for (size_t l = 0; l < SupportSketch::kNodes; ++l) {
      const double x = kNodeX[l];
      t[l][0] = 1.0;
      t[l][1] = x;
      for (size_t j = 2; j < SupportSketch::kNodes; ++j) {
        t[l][j] = 2.0 * x * t[l][j - 1] - t[l][j - 2];
      }
    }
  }
};
const NodeChebyshev kNodeT;

uint64_t Bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

}  // namespace

void SupportSketch::Reset(bool primal, double alpha) {
  primal_ = primal;
  alpha_ = alpha;
  // 16 cells per binade (p within 4.4 % in a block), more where b = alpha - 1
  // > 1 brings the primal's and the dual's complex branch points to within
  // ~2 sin(pi / 2b) p of p: the cell's width shrinks with b, keeping the
  // interpolation's convergence ratio.
  const double b = std::fabs(alpha - 1.0);
  int mantissa_bits = 4;
  while (mantissa_bits < 24 && static_cast<double>(1 << (mantissa_bits - 4)) < b) ++mantissa_bits;
  cell_shift_ = 52 - mantissa_bits;
  built_ = open_start_ = powered_ = 0;
  block_start_.clear();
  node_end_.clear();
  block_centre_.clear();
  block_inv_half_.clear();
  node_p_.clear();
  node_pow_.clear();
  weight_.clear();
}

void SupportSketch::Extend(const double* p, size_t n) {
  for (size_t i = std::max<size_t>(built_, 1); i < n; ++i) {
    if (i - open_start_ >= kMaxBlock || (Bits(p[i]) >> cell_shift_) != (Bits(p[i - 1]) >> cell_shift_)) {
      CloseBlock(p, i);
    }
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
  // support still gets weights for its own range).
  double top = p[start], bottom = p[start];
  for (size_t i = start + 1; i < end; ++i) {
    top = std::max(top, p[i]);
    bottom = std::min(bottom, p[i]);
  }
  block_centre_.push_back(0.0);
  block_inv_half_.push_back(0.0);
  if (m <= kNodes) {
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
    // interpolant P of f at the nodes, w_l = (M_0 + 2 sum_j T_j(x_l) M_j) / 8,
    // M_j = sum_i T_j(u_i) (discrete orthogonality of the T_j at the nodes).
    const double centre = 0.5 * (top + bottom), half = 0.5 * (top - bottom);
    const double inv_half = 1.0 / half;
    block_centre_.back() = centre;
    block_inv_half_.back() = inv_half;
    double moments[kNodes];
    ChebyshevMoments(p + start, m, centre, inv_half, moments);
    for (size_t l = 0; l < kNodes; ++l) {
      double w = 0.0;
      for (size_t j = kNodes; j-- > 1;) w += kNodeT.t[l][j] * moments[j];
      node_p_.push_back(centre + half * kNodeX[l]);
      weight_.push_back((moments[0] + 2.0 * w) / static_cast<double>(kNodes));
    }
  }
  node_end_.push_back(node_p_.size());
  open_start_ = end;
}

void SupportSketch::InterpolateQ(const double* p, size_t exact_from, const double* node_q,
                                 double* q) const {
  for (size_t j = 0; j < block_start_.size() && block_start_[j] < exact_from; ++j) {
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
    // The series' coefficients from the increments at the nodes (discrete
    // orthogonality): c_j = (2 - [j = 0]) / 8 sum_l d_l T_j(x_l).
    const double* node_p = node_p_.data() + first_node;
    double coef[kNodes];
    for (size_t c = 0; c < kNodes; ++c) {
      double sum = 0.0;
      for (size_t l = 0; l < kNodes; ++l) sum += (values[l] - node_p[l]) * kNodeT.t[l][c];
      coef[c] = sum * (c == 0 ? 1.0 : 2.0) / static_cast<double>(kNodes);
    }
    ChebyshevIncrements(p + start, end - start, block_centre_[j], block_inv_half_[j], coef,
                        q + start);
  }
}

SupportSketch::View SupportSketch::For(size_t k) const {
  View v;
  if (k == 0) return v;
  const size_t last = k - 1;
  if (last >= open_start_) {
    v.exact_from = open_start_;
    v.nodes = node_end_.empty() ? 0 : node_end_.back();
    return v;
  }
  // The closed block holding `last`: the last start at or before it.
  const size_t j =
      static_cast<size_t>(std::upper_bound(block_start_.begin(), block_start_.end(), last) -
                          block_start_.begin()) -
      1;
  v.exact_from = block_start_[j];
  v.nodes = j > 0 ? node_end_[j - 1] : 0;
  return v;
}

}  // namespace bregman_detail
}  // namespace bd
