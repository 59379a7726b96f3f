// SupportSketch: a sorted support's sums over a few nodes per block of
// nearly equal probabilities, on which the general solvers find their
// multiplier (every Newton evaluation; only the final q maps every token).
//
// Near k ~ V/2 a support holds 1e5 tokens whose sorted probabilities change
// by a fraction of a percent from one to the next, and every Newton
// evaluation maps each of them (a log1p and an expm1, or Halley steps). The
// maps are analytic in p with no singularity within ~p of it (the primal's
// (p^b + s)^{1/b} and the dual's root both branch at p = 0, and for
// b = alpha - 1 > 1 at angles +-pi / b, |p| ~ nu^{1/b}: at least
// p sin(pi / b) from p, under p only for b > 2; for b < 0 the
// primal's pole at p = (-s)^{1/b} on the real axis can come close above the
// largest p, and blocks near it are mapped one by one: For's exact_above,
// PrimalPoleLimit in renormalise.h), so over a block
// whose p lie within 2^(1/16) of each other (less for b > 3) an 8-node
// Chebyshev interpolant in p is exact to ~1e-16 of the block's sum, as is a
// 16-node one over 2^(1/2), and the block's sum is sum_l w_l f(x_l)
// (interpolatory quadrature: the weights need only the block's p, not the
// map). A support of k is then the nodes of its blocks plus the tokens of
// the block holding k - 1, mapped one by one.
//
// Cells are half a binade (less for b > 3): in a support's sparse tail a
// cell's few tokens make one wide block of 16 nodes (8 narrower cells of 8
// nodes each would make 4 times as many); where tokens are dense a block
// closes where they leave an eighth of the cell and takes 8 (its series
// then costs each token half the terms).
//
// Blocks depend on the probabilities alone (a token starts a block when its
// float64 bits leave its predecessor's cell, or its eighth of the cell with
// kDenseBlock tokens open, or when the block is full), so
// a support's sketch is the same however far the sorted prefix was built:
// a fixed-k solve and the adaptive search's final solve make the same
// evaluations, and so return the same bits. Node values and weights are
// IEEE arithmetic only (no libm): the same bits on every target.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/support_map.h"

namespace bd {
namespace bregman_detail {

class SupportSketch {
 public:
  // Nodes of a narrow and of a wide block (kernels/support_map.h), and the
  // most tokens one block takes.
  static constexpr size_t kNodes = kChebyshevTerms;
  static constexpr size_t kWideNodes = kChebyshevWideTerms;
  static constexpr size_t kMaxBlock = 1024;
  // A block this full closes where its tokens leave an eighth of a cell:
  // dense tokens take 8 nodes per eighth (as many nodes as a wide block's 16
  // over a few eighths, and half the series' terms per token).
  static constexpr size_t kDenseBlock = 256;
  // Bound on |sketch sum - exact sum| relative to sum q (1 + the increments)
  // that the solvers rely on (their roots are the sketch's: sum q = 1 within
  // it); test_support_sketch.cc measures the sketch far below it (about
  // 1e-15 over alpha 0.1-40, primal and dual).
  static constexpr double kError = 1e-12;

  // Starts a sketch for one map: node powers are p^{alpha-1} (primal) or
  // p^{2-alpha} (dual), as the solvers' per-token powers.
  void Reset(bool primal, double alpha);
  bool Matches(bool primal, double alpha) const {
    return primal_ == primal && alpha_ == alpha && alpha_ != 0.0;
  }
  // The prefix length taken into blocks (For(k) needs k <= Built()).
  size_t Built() const { return built_; }

  // Takes the sorted p[0..n) into blocks (n never below an earlier call's
  // since the last Reset; p the same prefix).
  void Extend(const double* p, size_t n);

  // For a support of k <= the extended length: the nodes of the blocks
  // before the one holding token k - 1 (node_p, node_pow and weight
  // [first_node, nodes)), and that block's first token, from which the
  // support's tokens are mapped one by one. Blocks whose largest p exceeds
  // exact_above are mapped one by one too (tokens [0, head_end), their nodes
  // [0, first_node) unused): the primal map for alpha < 1 has a pole on the
  // real axis above the support (PrimalPoleLimit), and blocks near it are
  // not sums of their nodes.
  struct View {
    size_t nodes = 0;
    size_t exact_from = 0;
    size_t first_node = 0;
    size_t head_end = 0;
  };
  View For(size_t k, double exact_above = HUGE_VAL) const;

  // A buffer for the map's q at the first n nodes (InterpolateQ's input).
  double* NodeQ(size_t n) {
    if (node_q_.size() < n) node_q_.resize(n);
    return node_q_.data();
  }

  // q[head_end..exact_from) for View v = For(k, ...) from
  // node_q[first_node..nodes), the map's q at those nodes: a block of no more
  // tokens than its nodes would be takes its tokens' own (its nodes are its
  // tokens), a block of equal p its node's, any other its increments from
  // the Chebyshev series through its 8 or 16 nodes (the interpolant whose
  // sum the weights integrate: each within ~1e-16 of the block's largest
  // increment, as the sums).
  void InterpolateQ(const double* p, const View& v, const double* node_q, double* q) const;

  const double* node_p() const { return node_p_.data(); }
  const double* node_pow() const { return node_pow_.data(); }
  const double* weight() const { return weight_.data(); }

  // The memory the sketch holds (its vectors' capacities), for
  // Decoder::WorkspaceBytes.
  size_t CapacityBytes() const {
    return (block_start_.capacity() + node_end_.capacity()) * sizeof(size_t) +
           (node_p_.capacity() + node_pow_.capacity() + weight_.capacity() +
            node_q_.capacity() + block_centre_.capacity() + block_inv_half_.capacity() +
             block_top_.capacity()) *
               sizeof(double);
  }

 private:
  void CloseBlock(const double* p, size_t end);

  bool primal_ = false;
  double alpha_ = 0.0;
  // A block within an eighth of its cell is narrow (8 nodes; and where a
  // full block closes): its float64 bits share all but the low
  // EighthShift() bits.
  int EighthShift() const { return cell_shift_ - 3; }

  int cell_shift_ = 51;   // bits of a double dropped for its cell
  size_t built_ = 0;      // p[0..built_) is assigned to blocks
  size_t open_start_ = 0;  // the last block, still open, is [open_start_, built_)
  std::vector<size_t> block_start_;  // closed blocks, in order
  std::vector<size_t> node_end_;     // nodes after each closed block
  std::vector<double> node_p_, node_pow_, weight_;
  std::vector<double> node_q_;  // NodeQ's buffer
  // Per closed block: the centre of its p range and 1 / its half-width (0
  // for a block without a Chebyshev series).
  std::vector<double> block_centre_, block_inv_half_;
  std::vector<double> block_top_;  // per closed block: its largest p
  size_t powered_ = 0;  // node_pow_ holds the powers of node_p_[0..powered_)
};

}  // namespace bregman_detail
}  // namespace bd
