#include "kernels/collectives/double_binary_tree.hpp"

#include <utility>

#include "kernels/collectives/schedule_builder.hpp"

namespace myriad::kernels::collectives {
namespace {

int binary_tree_parent(int rank, int nranks) {
  if (rank == 0) return -1;
  const int bit = rank & -rank;
  const int up = (rank ^ bit) | (bit << 1);
  return up >= nranks ? (rank ^ bit) : up;
}

// The tree whose rank r sits where `position(r)` sits in the in-order tree.
template <typename Map, typename Unmap>
BinaryTree relabel(int nranks, Map position, Unmap rank_at) {
  BinaryTree tree;
  tree.parent.assign(static_cast<std::size_t>(nranks), -1);
  tree.children.resize(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    const int up = binary_tree_parent(position(r), nranks);
    tree.parent[static_cast<std::size_t>(r)] = up < 0 ? -1 : rank_at(up);
    if (up < 0) tree.root = r;
  }
  for (int r = 0; r < nranks; ++r) {
    const int up = tree.parent[static_cast<std::size_t>(r)];
    if (up >= 0) tree.children[static_cast<std::size_t>(up)].push_back(r);
  }
  return tree;
}

// Rank r's part in reducing chunk j of each tree up to its root: receive and
// add each child's partial sum, then pass the sum to the parent.
void append_reduce_up(ScheduleBuilder& builder, const std::array<BinaryTree, 2>& trees, int r,
                      int j, int chunks_per_tree) {
  const auto ri = static_cast<std::size_t>(r);
  for (int t = 0; t < 2; ++t) {
    const BinaryTree& tree = trees[static_cast<std::size_t>(t)];
    const ChunkRange chunk{t * chunks_per_tree + j, 1};
    for (const int child : tree.children[ri]) builder.recv_reduce(r, child, chunk, t);
    if (tree.parent[ri] >= 0) builder.send(r, tree.parent[ri], chunk, t);
  }
}

// Rank r's part in broadcasting the reduced chunk j of each tree from its root.
void append_broadcast_down(ScheduleBuilder& builder, const std::array<BinaryTree, 2>& trees, int r,
                           int j, int chunks_per_tree) {
  const auto ri = static_cast<std::size_t>(r);
  for (int t = 0; t < 2; ++t) {
    const BinaryTree& tree = trees[static_cast<std::size_t>(t)];
    const ChunkRange chunk{t * chunks_per_tree + j, 1};
    if (tree.parent[ri] >= 0) builder.recv(r, tree.parent[ri], chunk, t);
    for (const int child : tree.children[ri]) builder.send(r, child, chunk, t);
  }
}

}  // namespace

BinaryTree make_binary_tree(int nranks) {
  require_ranks("make_binary_tree", nranks);
  return relabel(
      nranks, [](int r) { return r; }, [](int p) { return p; });
}

std::array<BinaryTree, 2> make_double_binary_tree(int nranks) {
  require_ranks("make_double_binary_tree", nranks);
  const int n = nranks;
  if (n % 2 == 1) {
    return {make_binary_tree(n),
            relabel(
                n, [n](int r) { return (r - 1 + n) % n; }, [n](int p) { return (p + 1) % n; })};
  }
  return {make_binary_tree(n),
          relabel(
              n, [n](int r) { return n - 1 - r; }, [n](int p) { return n - 1 - p; })};
}

Schedule make_tree_allreduce(int nranks, std::int64_t bytes, int chunks_per_tree, int elem_bytes) {
  constexpr std::string_view kName = "make_tree_allreduce";
  require_ranks(kName, nranks);
  require_at_least_one(kName, "chunks_per_tree", chunks_per_tree);
  require_bytes(kName, bytes, elem_bytes);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.algorithm = CollectiveAlgorithm::tree;
  spec.nranks = nranks;
  spec.bytes = bytes;
  spec.elem_bytes = elem_bytes;
  spec.channels = 2;
  const int nchunks = checked_chunks(kName, 2, chunks_per_tree);
  ScheduleBuilder builder(spec, {ChunkLayout::even(bytes, nchunks, elem_bytes)});
  const std::array<BinaryTree, 2> trees = make_double_binary_tree(nranks);
  for (int r = 0; r < nranks; ++r) {
    for (int j = 0; j < chunks_per_tree; ++j)
      append_reduce_up(builder, trees, r, j, chunks_per_tree);
    for (int j = 0; j < chunks_per_tree; ++j) {
      append_broadcast_down(builder, trees, r, j, chunks_per_tree);
    }
  }
  return std::move(builder).finish();
}

}  // namespace myriad::kernels::collectives
