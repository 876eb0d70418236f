// The bytes each schedule moves, to the byte, against the nccl-tests formulas
// (doc/PERFORMANCE.md): a ring all-reduce sends 2(n-1)/n of the buffer per
// rank, reduce-scatter and all-gather (n-1)/n, and so on; and the algbw and
// busbw those formulas define.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/broadcast.hpp"
#include "kernels/collectives/byte_accounting.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/hierarchical.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/sendrecv.hpp"

namespace myriad::kernels::collectives {
namespace {

class Bytes : public ::testing::TestWithParam<int> {
 protected:
  [[nodiscard]] int n() const { return GetParam(); }
};

// Rank r of a ring all-reduce sends every shard but its own (reduce-scatter)
// and every shard but its right neighbour's (all-gather), on every channel.
TEST_P(Bytes, RingAllreduceSendsTwiceAllButOneShardPerRank) {
  for (const std::int64_t bytes : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000003}}) {
    if (n() >= 1024 && bytes < 1000) continue;  // keep the large case to one schedule
    const int channels = n() >= 1024 ? 1 : 2;
    const Schedule s = make_ring_allreduce(n(), bytes, channels);
    const std::vector<std::int64_t> sent = bytes_sent(s);
    const ChunkLayout& layout = s.layout(0);
    for (int r = 0; r < n(); ++r) {
      std::int64_t expect = 2 * bytes;
      for (int c = 0; c < channels; ++c) {
        expect -= layout.size(r * channels + c) + layout.size((r + 1) % n() * channels + c);
      }
      ASSERT_EQ(sent[static_cast<std::size_t>(r)], expect)
          << "rank " << r << ", " << bytes << " bytes";
      // Within one element per chunk of the formula 2(n-1)/n * bytes.
      const double formula =
          busbw_factor(CollectiveKind::all_reduce, n()) * static_cast<double>(bytes);
      EXPECT_LE(std::abs(static_cast<double>(sent[static_cast<std::size_t>(r)]) - formula),
                2.0 * channels);
    }
    EXPECT_EQ(total_bytes_sent(s), 2 * (n() - 1) * bytes);
    const std::vector<std::int64_t> received = bytes_received(s);
    for (int r = 0; r < n(); ++r) {  // rank r receives what its left neighbour sends
      EXPECT_EQ(received[static_cast<std::size_t>(r)],
                sent[static_cast<std::size_t>((r + n() - 1) % n())]);
    }
  }
}

TEST_P(Bytes, EvenBuffersMatchTheFormulasExactlyOnEveryRank) {
  const int channels = n() >= 1024 ? 1 : 4;
  const std::int64_t bytes = std::int64_t{12} * n() * channels;  // divisible by n * channels
  const auto every_rank = [&](const Schedule& s, std::int64_t want) {
    for (const std::int64_t b : bytes_sent(s))
      ASSERT_EQ(b, want) << std::string(models::collective_key(s.spec.kind));
  };
  every_rank(make_ring_allreduce(n(), bytes, channels), 2 * (n() - 1) * bytes / n());
  every_rank(make_ring_reduce_scatter(n(), bytes, channels), (n() - 1) * bytes / n());
  every_rank(make_ring_allgather(n(), bytes, channels), (n() - 1) * bytes / n());
  // All-to-all: `bytes` per rank in all, (n-1)/n of it to other ranks.
  every_rank(make_alltoall(n(), bytes / n()), (n() - 1) * bytes / n());
}

TEST_P(Bytes, EveryAllreduceMovesTheSameTotal) {
  // Ring, double binary tree and hierarchical all move 2(n-1) buffers in all.
  for (const std::int64_t bytes : {std::int64_t{7}, std::int64_t{1000003}}) {
    const std::int64_t want = 2 * (n() - 1) * bytes;
    EXPECT_EQ(total_bytes_sent(make_tree_allreduce(n(), bytes, 3)), want);
    const int per_node = n() % 8 == 0 ? 8 : 1;
    EXPECT_EQ(total_bytes_sent(make_hierarchical_allreduce(n(), per_node, bytes)), want);
  }
}

TEST_P(Bytes, BroadcastAlltoallvAndSendrecv) {
  const std::int64_t bytes = 1000003;
  EXPECT_EQ(total_bytes_sent(make_broadcast(n(), n() / 2, bytes, 5)), (n() - 1) * bytes);
  const std::vector<std::int64_t> chain = bytes_sent(make_broadcast(n(), 0, bytes, 5));
  EXPECT_EQ(chain.back(), 0);  // the end of the chain only receives
  std::vector<std::vector<std::int64_t>> matrix(static_cast<std::size_t>(n()));
  std::int64_t off_diagonal = 0;
  for (int i = 0; i < n(); ++i) {
    for (int j = 0; j < n(); ++j) {
      const std::int64_t b = (i * 31 + j * 17) % 5;  // zeros among them
      matrix[static_cast<std::size_t>(i)].push_back(b);
      off_diagonal += i == j ? 0 : b;
    }
  }
  const Schedule v = make_alltoallv(matrix);
  EXPECT_EQ(total_bytes_sent(v), off_diagonal);
  const std::vector<std::int64_t> sent = bytes_sent(v);
  for (int i = 0; i < n(); ++i) {
    const auto& row = matrix[static_cast<std::size_t>(i)];
    EXPECT_EQ(sent[static_cast<std::size_t>(i)],
              std::accumulate(row.begin(), row.end(), std::int64_t{0}) -
                  row[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(total_bytes_sent(make_sendrecv(0, n() - 1, bytes)), n() == 1 ? 0 : bytes);
}

INSTANTIATE_TEST_SUITE_P(Ranks, Bytes, ::testing::Values(1, 2, 3, 7, 8, 64, 1024));

TEST(Bandwidth, NcclTestsFactors) {
  // nccl-tests doc/PERFORMANCE.md.
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::reduce_scatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_gather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_to_all, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::broadcast, 64), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::send_recv, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_reduce, 1), 0.0);
  EXPECT_THROW((void)busbw_factor(CollectiveKind::all_reduce, 0), std::invalid_argument);
}

TEST(Bandwidth, AlgbwAndBusbw) {
  // 1 GB all-reduced over 8 ranks in 10 ms: algbw 100 GB/s, busbw 175 GB/s.
  EXPECT_DOUBLE_EQ(algbw_Bps(1'000'000'000, 0.01), 100e9);
  EXPECT_DOUBLE_EQ(busbw_Bps(CollectiveKind::all_reduce, 8, 1'000'000'000, 0.01), 175e9);
  EXPECT_DOUBLE_EQ(busbw_Bps(CollectiveKind::all_gather, 8, 1'000'000'000, 0.01), 87.5e9);
  EXPECT_THROW((void)algbw_Bps(1000, 0), std::invalid_argument);
  EXPECT_THROW((void)algbw_Bps(-1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::kernels::collectives
