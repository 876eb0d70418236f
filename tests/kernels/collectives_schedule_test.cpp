// The shape of generated schedules: chunk layouts that add up to the byte,
// the step counts the algorithms promise, NCCL's trees, and the arguments
// every generator refuses.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <stdexcept>
#include <string>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/broadcast.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/hierarchical.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/sendrecv.hpp"

namespace myriad::kernels::collectives {
namespace {

int count_steps(const Schedule& s, int rank, StepKind kind) {
  int n = 0;
  for (const Step& step : s.rank_steps(rank)) n += step.kind == kind ? 1 : 0;
  return n;
}

TEST(ChunkLayout, EvenSplitIsExactAndDiffersByOneElement) {
  for (const std::int64_t bytes : {0LL, 1LL, 7LL, 1000003LL}) {
    for (const int nchunks : {1, 2, 3, 7, 64, 1024}) {
      const ChunkLayout layout = ChunkLayout::even(bytes, nchunks);
      std::int64_t sum = 0;
      std::int64_t smallest = bytes;
      std::int64_t largest = 0;
      for (int c = 0; c < nchunks; ++c) {
        EXPECT_EQ(layout.offset(c), sum);
        sum += layout.size(c);
        smallest = std::min(smallest, layout.size(c));
        largest = std::max(largest, layout.size(c));
      }
      EXPECT_EQ(sum, bytes) << bytes << " bytes in " << nchunks << " chunks";
      EXPECT_EQ(layout.offset(nchunks), bytes);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

TEST(ChunkLayout, ElementsAreNeverSplit) {
  const ChunkLayout layout = ChunkLayout::even(4 * 1001, 8, 4);  // 1001 floats in 8 chunks
  for (int c = 0; c <= 8; ++c) EXPECT_EQ(layout.offset(c) % 4, 0);
  EXPECT_EQ(layout.size(0), 4 * 126);  // 1001 = 7 * 125 + 126: the first chunk takes the extra one
  EXPECT_EQ(layout.size(7), 4 * 125);
  EXPECT_THROW((void)ChunkLayout::even(10, 2, 4), std::invalid_argument);  // 2.5 floats
  EXPECT_THROW((void)ChunkLayout::even(8, 0, 4), std::invalid_argument);
  EXPECT_THROW((void)ChunkLayout::from_sizes({4, 6}, 4), std::invalid_argument);
}

TEST(ChunkLayout, ExplicitSizesKeepTheirOrder) {
  const ChunkLayout layout = ChunkLayout::from_sizes({5, 0, 3});
  EXPECT_EQ(layout.nchunks(), 3);
  EXPECT_EQ(layout.bytes(), 8);
  EXPECT_EQ(layout.offset(2), 5);
  EXPECT_EQ(layout.size(1), 0);
  EXPECT_EQ(layout.range_bytes(1, 2), 3);
}

TEST(RingSchedule, TakesTwoStepsPerRankPerChannelPerRingStep) {
  // NCCL's ring all-reduce: 2(n-1) steps per channel per rank, each a send and a receive.
  for (const int n : {2, 3, 8}) {
    for (const int channels : {1, 4}) {
      const Schedule ar = make_ring_allreduce(n, 1000003, channels);
      const Schedule rs = make_ring_reduce_scatter(n, 1000003, channels);
      const Schedule ag = make_ring_allgather(n, 1000003, channels);
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(count_steps(ar, r, StepKind::send), 2 * (n - 1) * channels);
        EXPECT_EQ(count_steps(ar, r, StepKind::recv_reduce), (n - 1) * channels);
        EXPECT_EQ(count_steps(ar, r, StepKind::recv), (n - 1) * channels);
        EXPECT_EQ(count_steps(rs, r, StepKind::recv_reduce), (n - 1) * channels);
        EXPECT_EQ(count_steps(ag, r, StepKind::recv), (n - 1) * channels);
        for (const Step& step : ar.rank_steps(r)) {
          // Ring neighbours only, each channel on its own chunks.
          EXPECT_TRUE(step.peer == (r + 1) % n || step.peer == (r + n - 1) % n);
          EXPECT_EQ(step.chunk % channels, step.channel);
        }
      }
      EXPECT_EQ(ar.spec.channels, channels);
      EXPECT_EQ(ar.layout(0).nchunks(), n * channels);
    }
  }
}

TEST(RingSchedule, OneRankHasNothingToDo) {
  for (const Schedule& s :
       {make_ring_allreduce(1, 7, 2), make_ring_reduce_scatter(1, 7), make_ring_allgather(1, 7),
        make_tree_allreduce(1, 7), make_hierarchical_allreduce(1, 1, 7), make_broadcast(1, 0, 7, 3),
        make_sendrecv(0, 0, 7)}) {
    ASSERT_EQ(s.steps.size(), 1U);
    EXPECT_TRUE(s.steps[0].empty()) << std::string(models::collective_key(s.spec.kind)) << " "
                                    << std::string(models::algorithm_name(s.spec.algorithm));
  }
  // All-to-all with one rank keeps its own block: one local copy.
  const Schedule a2a = make_alltoall(1, 7);
  ASSERT_EQ(a2a.steps[0].size(), 1U);
  EXPECT_EQ(a2a.steps[0][0].kind, StepKind::copy);
  EXPECT_EQ(a2a.steps[0][0].bytes, 7);
}

// Walks up from every rank to the root: a tree has no cycles and one root.
void expect_tree(const BinaryTree& tree, int n) {
  ASSERT_EQ(tree.parent.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(tree.parent[static_cast<std::size_t>(tree.root)], -1);
  int depth_max = 0;
  for (int r = 0; r < n; ++r) {
    EXPECT_LE(tree.children[static_cast<std::size_t>(r)].size(), 2U) << "rank " << r;
    int depth = 0;
    for (int at = r; at != tree.root; at = tree.parent[static_cast<std::size_t>(at)]) {
      ASSERT_GE(at, 0);
      ASSERT_LE(++depth, n) << "cycle above rank " << r;
    }
    depth_max = std::max(depth_max, depth);
  }
  int log2 = 0;
  while ((1 << log2) < n) ++log2;
  EXPECT_LE(depth_max, log2) << n << " ranks";  // balanced: about log2(n) deep
}

TEST(DoubleBinaryTree, TwoBalancedTreesWhoseLeavesAreInsideTheOther) {
  for (const int n : {1, 2, 3, 5, 7, 8, 13, 64, 1000, 1024}) {
    const auto trees = make_double_binary_tree(n);
    expect_tree(trees[0], n);
    expect_tree(trees[1], n);
    if (n % 2 == 0) {
      // Mirrored: every rank is a leaf in at least one of the two trees.
      for (int r = 0; r < n; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        EXPECT_TRUE(trees[0].children[ri].empty() || trees[1].children[ri].empty())
            << "rank " << r << " of " << n << " is inside both trees";
      }
    }
  }
  // NCCL's in-order tree for 8 ranks: 0 -> 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5, 7}.
  const BinaryTree t = make_binary_tree(8);
  EXPECT_EQ(t.children[0], std::vector<int>({4}));
  EXPECT_EQ(t.children[4], std::vector<int>({2, 6}));
  EXPECT_EQ(t.children[6], std::vector<int>({5, 7}));
}

TEST(Alltoallv, SkipsEmptyBlocks) {
  const Schedule s = make_alltoallv({{3, 0, 5}, {0, 0, 0}, {1, 2, 0}});
  EXPECT_EQ(s.nranks(), 3);
  EXPECT_EQ(s.spec.bytes, 8);             // the largest row
  EXPECT_EQ(s.layout(0).bytes(), 8 + 4);  // row 0, then column 0
  EXPECT_FALSE(s.rank_steps(1).empty());  // rank 1 only receives
  EXPECT_EQ(count_steps(s, 1, StepKind::send), 0);
  EXPECT_EQ(count_steps(s, 1, StepKind::recv), 1);
  EXPECT_EQ(count_steps(s, 0, StepKind::copy), 1);
  EXPECT_EQ(count_steps(s, 2, StepKind::copy), 0);
}

void expect_invalid(const std::function<void()>& make, const std::string& says) {
  try {
    make();
    ADD_FAILURE() << "accepted; expected an error saying: " << says;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Generators, RefuseBadArgumentsWithClearMessages) {
  expect_invalid([] { make_ring_allreduce(0, 8); },
                 "make_ring_allreduce: nranks must be at least 1, got 0");
  expect_invalid([] { make_ring_allreduce(4, -1); }, "bytes must be >= 0, got -1");
  expect_invalid([] { make_ring_allreduce(4, 8, 0); }, "channels must be at least 1");
  expect_invalid([] { make_ring_allreduce(4, 10, 1, 4); }, "not a whole number of 4-byte elements");
  expect_invalid([] { make_ring_reduce_scatter(-3, 8); }, "nranks must be at least 1, got -3");
  expect_invalid([] { make_ring_allgather(2, 8, -1); }, "channels must be at least 1");
  expect_invalid([] { make_tree_allreduce(0, 8); }, "make_tree_allreduce: nranks");
  expect_invalid([] { make_tree_allreduce(4, 8, 0); }, "chunks_per_tree must be at least 1");
  expect_invalid([] { make_hierarchical_allreduce(12, 8, 8); },
                 "nranks (12) is not a multiple of ranks_per_node (8)");
  expect_invalid([] { make_hierarchical_allreduce(8, 0, 8); }, "ranks_per_node must be at least 1");
  expect_invalid([] { make_alltoall(0, 8); }, "make_alltoall: nranks");
  expect_invalid([] { make_alltoall(4, -8); }, "bytes must be >= 0");
  expect_invalid([] { make_alltoallv({}); }, "the matrix has no rows");
  expect_invalid([] { make_alltoallv({{1, 2}, {3}}); }, "row 1 has 1 entries");
  expect_invalid([] { make_alltoallv({{1, -2}, {3, 4}}); }, "matrix[0][1]: bytes must be >= 0");
  expect_invalid([] { make_broadcast(4, 4, 8); }, "root must be a rank in [0, 4), got 4");
  expect_invalid([] { make_broadcast(4, -1, 8); }, "root must be a rank in [0, 4), got -1");
  expect_invalid([] { make_broadcast(4, 0, 8, 0); }, "chunks must be at least 1");
  expect_invalid([] { make_sendrecv(-1, 2, 8); }, "ranks must be >= 0");
  expect_invalid([] { make_sendrecv(0, 1, -8); }, "bytes must be >= 0");
}

TEST(Schedule, DescribesStepsForMessages) {
  const Schedule s = make_ring_allreduce(4, 4000, 1);
  EXPECT_EQ(describe(s.rank_steps(0)[0]), "send chunk 3 (1000 bytes) to rank 1 on channel 0");
  EXPECT_EQ(describe(s.rank_steps(0)[1]),
            "recv_reduce chunk 2 (1000 bytes) from rank 3 on channel 0");
  const Schedule h = make_hierarchical_allreduce(8, 4, 800);
  EXPECT_EQ(describe(h.rank_steps(0)[0]), "send chunks 6..7 (200 bytes) to rank 1 on channel 0");
}

}  // namespace
}  // namespace myriad::kernels::collectives
