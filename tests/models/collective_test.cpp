// The collective vocabulary every layer shares: names that read back, and
// nccl-tests' accounting.
#include "models/plan/collective.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace myriad::models {
namespace {

TEST(CollectiveVocabulary, EveryKindAndAlgorithmReadsBackFromItsName) {
  for (const CollectiveKind k :
       {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
        CollectiveKind::all_to_all, CollectiveKind::broadcast, CollectiveKind::send_recv}) {
    EXPECT_EQ(collective_from_key(collective_key(k)), k) << collective_key(k);
    EXPECT_NE(collective_name(k), "?");
  }
  for (const CollectiveAlgorithm a :
       {CollectiveAlgorithm::none, CollectiveAlgorithm::ring, CollectiveAlgorithm::nvls,
        CollectiveAlgorithm::tree, CollectiveAlgorithm::hierarchical, CollectiveAlgorithm::pairwise,
        CollectiveAlgorithm::two_hop, CollectiveAlgorithm::chain, CollectiveAlgorithm::p2p,
        CollectiveAlgorithm::sharp}) {
    EXPECT_EQ(algorithm_from_name(algorithm_name(a)), a) << algorithm_name(a);
  }
  EXPECT_FALSE(collective_from_key("allreduce").has_value());
  EXPECT_FALSE(algorithm_from_name("double_binary_tree").has_value());
}

TEST(CollectiveVocabulary, BusBandwidthFactorAndRingStepsAsNcclTestsCountThem) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::send_recv, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveKind::all_reduce, 1), 0.0);
  EXPECT_THROW((void)busbw_factor(CollectiveKind::all_reduce, 0), std::invalid_argument);
  EXPECT_DOUBLE_EQ(ring_steps(CollectiveKind::all_reduce, 8), 14);
  EXPECT_DOUBLE_EQ(ring_steps(CollectiveKind::reduce_scatter, 8), 7);
}

}  // namespace
}  // namespace myriad::models
