// NCCL's double binary tree (ncclGetDtree): two binary trees over the same
// ranks, the second the mirror (even n) or the shift by one (odd n) of the
// first, so that a rank that is a leaf in one tree is inside the other, and
// each tree carries half of the data. The all-reduce reduces up each tree and
// broadcasts down it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

struct BinaryTree {
  int root = 0;
  std::vector<int> parent;                 // parent[r]; -1 for the root
  std::vector<std::vector<int>> children;  // children[r], at most two, in increasing rank
};

// NCCL's in-order binary tree over 0..n-1: rank r with lowest set bit b hangs
// below (r ^ b) | 2b, or below r ^ b when that is past the last rank; rank 0
// is the root. Throws std::invalid_argument on nranks < 1.
BinaryTree make_binary_tree(int nranks);
// The two complementary trees.
std::array<BinaryTree, 2> make_double_binary_tree(int nranks);

// Layout (shared): 2 * chunks_per_tree even chunks; tree t carries chunks
// [t * chunks_per_tree, (t + 1) * chunks_per_tree) on channel t, pipelined
// chunk by chunk: every chunk is reduced up, then every chunk broadcast down.
// Throws std::invalid_argument on nranks < 1, chunks_per_tree < 1, bytes < 0,
// or bytes not a whole number of elem_bytes elements.
Schedule make_tree_allreduce(int nranks, std::int64_t bytes, int chunks_per_tree = 1,
                             int elem_bytes = 1);

}  // namespace myriad::kernels::collectives
