// Two buildings joined by a tier of long links (issue 40;
// scenarios/clusters/h100-two-buildings-131k.yaml). A ring waits for its farthest
// pair on every step, so a data-parallel group strided over both buildings
// (placement tp-cp-pp-dp) pays the campus tier's latency where one kept inside a
// building (tp-cp-dp-pp) does not. By hand on a small campus, and in both engines.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

// 1,024 H100 (128 nodes of 8, a 400G NIC a GPU on 8 rails): a rail leaf has 8 ports
// down (8 nodes), a spine 8 down and 2 up (1:4: 64 nodes, a building), and the
// campus tier's hop takes 10.8 us (1 us of switch, 2 km of fibre at 4.9 us a km).
models::scenario::Scenario campus(const std::string& placement,
                                  const std::string& campus_latency = "10.8us") {
  return models::scenario::load_scenario_text(
      "cluster:\n"
      "  gpu: H100\n"
      "  gpus: 1024\n"
      "  nics_per_node: 8\n"
      "  nic_bandwidth: 400Gbps\n"
      "  nic_latency: 2us\n"
      "  network:\n"
      "    tiers:\n"
      "    - {name: leaf, radix: 16, latency: 500ns}\n"
      "    - {name: spine, radix: 10, oversubscription: \"1:4\", latency: 500ns}\n"
      "    - {name: campus, radix: 16, latency: " +
          campus_latency +
          "}\n"
          "model: {preset: llama3-8b}\n"
          "parallelism: {tp: 8, pp: 2, global_batch: 128, placement: " +
          placement +
          "}\n"
          "overlap: {dp: false}\n",
      "campus.yaml", testing::kShipped);
}

TEST(TwoBuildings, AStridedRingReachesAcrossTheCampus) {
  const auto within = campus("tp-cp-dp-pp");
  const auto across = campus("tp-cp-pp-dp");
  const auto& c = within.cluster;
  EXPECT_EQ(subtree_nodes(c), (std::vector<double>{8, 64, 1024}));
  // 64 replicas: ranks 0, 8, ..., 504 on nodes 0-63 (one building); or 16 ranks
  // apart, nodes 0, 2, ..., 126 (both).
  const models::GroupSpan a = models::group_span(models::GroupKind::dp, within);
  const models::GroupSpan b = models::group_span(models::GroupKind::dp, across);
  EXPECT_EQ(a.nodes, 64);
  EXPECT_EQ(a.reach_nodes(), 64);
  EXPECT_EQ(b.nodes, 64);
  EXPECT_EQ(b.reach_nodes(), 127);
  EXPECT_EQ(joining_tier(c, a.reach_nodes()), 1);
  EXPECT_EQ(joining_tier(c, b.reach_nodes()), 2);
  // A reduce-scatter's 63 ring steps each wait one more round trip through the
  // campus tier (2 x 10.8 us); the bytes move at the NICs' rate either way.
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const models::Collective rs{"dp.grads", models::CollectiveKind::reduce_scatter,
                              models::GroupKind::dp, 1e9};
  const CommCost in_one = collective_cost(rs, a, c, h100);
  const CommCost in_two = collective_cost(rs, b, c, h100);
  EXPECT_NEAR(in_one.latency_s, 63 * (2e-6 + 2 * (0.5e-6 + 0.5e-6)), 1e-12);
  EXPECT_NEAR(in_two.latency_s - in_one.latency_s, 63 * 2 * 10.8e-6, 1e-12);
  EXPECT_DOUBLE_EQ(in_two.bandwidth_s, in_one.bandwidth_s);
}

// The step engine routes each flow over the tiers it crosses: with the data-parallel
// rings strided over both buildings, moving the buildings apart (the campus hop from
// 0.5 to 10.8 us) slows the step in both engines, which agree; with the rings inside
// the buildings it moves only the transfers between the two stages, which cross.
TEST(TwoBuildings, BothEnginesPayTheCampusWhereTheRingsCrossIt) {
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  for (const char* placement : {"tp-cp-pp-dp", "tp-cp-dp-pp"}) {
    SCOPED_TRACE(placement);
    testing::expect_both_engines_slower(campus(placement, "500ns"), campus(placement), h100);
  }
  // Strided rings: the all-reduce (NCCL's tree, 2 x log2 64 levels, shorter than
  // the ring's 2 x 63 steps) waits 2 x 10.3 us longer a level, at least.
  const double strided =
      estimate(campus("tp-cp-pp-dp"), h100, Detail::summary).step_time_s -
      estimate(campus("tp-cp-pp-dp", "500ns"), h100, Detail::summary).step_time_s;
  const double kept = estimate(campus("tp-cp-dp-pp"), h100, Detail::summary).step_time_s -
                      estimate(campus("tp-cp-dp-pp", "500ns"), h100, Detail::summary).step_time_s;
  EXPECT_GE(strided, 2 * 6 * 2 * 10.3e-6 - 1e-12);
  EXPECT_GT(strided, kept);
}

// The preset: two buildings of 8,192 nodes (65,536 GPUs) under their spines, the
// campus tier joining them; a ring over both pays 2 x 10.8 us more a step.
TEST(TwoBuildings, ThePresetJoinsTwoBuildingsOfItsGpus) {
  const auto s = models::scenario::load_scenario_text(
      "cluster: {preset: h100-two-buildings-131k}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, global_batch: 16384}\n",
      "preset.yaml", testing::kShipped);
  const auto& c = s.cluster;
  EXPECT_EQ(c.nodes(), 16384);
  const auto under = subtree_nodes(c);
  ASSERT_EQ(under.size(), 3U);
  EXPECT_EQ(under[1], 8192);
  EXPECT_EQ(joining_tier(c, 8192), 1);
  EXPECT_EQ(joining_tier(c, 8193), 2);
  EXPECT_NEAR(hop_latency(c, 16384) - hop_latency(c, 8192), 2 * 10.8e-6, 1e-15);
}

}  // namespace
}  // namespace myriad::sim
