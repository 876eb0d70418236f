// The step engine's lowering, without SimGrid: which replicas are simulated and
// where, how each data-parallel collective and each layer collective is played.
// Each expectation is derived from the scenario, not read off the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/plan/rank_layout.hpp"
#include "myriad_source_paths.hpp"
#include "sim/step/step_lowering.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::a100;
using testing::h100;
using testing::kShipped;

models::scenario::Scenario load(const std::string& text) {
  return models::scenario::load_scenario_text(text, "step_lowering_test.yaml", kShipped);
}

// 32 nodes of 8 GPUs: tp 8, pp 8, so dp 4, one replica per node of each stage.
models::scenario::Scenario megascale_256() {
  return load(R"(
cluster: {preset: megascale-like, gpus: 256}
model: {preset: gpt3-175b-megascale}
parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 6, zero: 2, recompute: selective, global_batch: 768}
)");
}

models::scenario::Scenario mixtral() {
  return models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml", kShipped);
}

int node_of(const models::scenario::Scenario& s, int stage, int replica) {
  return models::first_node(s, {stage, replica});
}

// Expectation: without stragglers or contention one replica stands for all; a
// straggler adds the replica holding it, slowed (gpu) or with its NICs divided
// (link), and only the rank group on that node.
TEST(StepLowering, SimulatesReplicaZeroAndThoseHoldingAStraggler) {
  const auto s = megascale_256();
  const auto plain = lower_step(s, a100(), {}, false);
  EXPECT_FALSE(plain.all_replicas);
  EXPECT_EQ(plain.rows, std::vector<int>{0});
  EXPECT_EQ(plain.dp, 4);
  ASSERT_EQ(plain.places.size(), 8U);  // one row of 8 stages
  EXPECT_EQ(plain.places[3].node, node_of(s, 3, 0));

  const int slow_node = node_of(s, 5, 2);
  const int cut_node = node_of(s, 1, 3);
  const auto slowed = lower_step(s, a100(),
                                 {{slow_node, 1.5, "test", models::scenario::Component::gpu},
                                  {cut_node, 4.0, "test", models::scenario::Component::link}},
                                 false);
  EXPECT_EQ(slowed.rows, (std::vector<int>{0, 2, 3}));
  ASSERT_EQ(slowed.places.size(), 24U);
  for (std::size_t i = 0; i < slowed.places.size(); ++i) {
    const int row = static_cast<int>(i) / 8;
    const int stage = static_cast<int>(i) % 8;
    const bool slow = row == 1 && stage == 5;
    const bool cut = row == 2 && stage == 1;
    EXPECT_EQ(slowed.places[i].slowdown, slow ? 1.5 : 1.0) << "row " << row << " stage " << stage;
    EXPECT_EQ(slowed.places[i].link, cut ? 4.0 : 1.0) << "row " << row << " stage " << stage;
  }
  EXPECT_EQ(slowed.stragglers.size(), 2U);
}

// Expectation: traffic that can contend below the tier joining the job, or a
// request, makes every replica simulated.
TEST(StepLowering, ContentionOrARequestSimulatesEveryReplica) {
  auto s = megascale_256();
  const auto asked = lower_step(s, a100(), {}, true);
  EXPECT_TRUE(asked.all_replicas);
  EXPECT_EQ(asked.rows, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(asked.places.size(), 32U);

  // 128 nodes: more than a leaf's 32, so the spine joins the job and the leaves'
  // uplinks are shared by traffic between subtrees.
  s = load(R"(
cluster: {preset: megascale-like, gpus: 1024}
model: {preset: gpt3-175b-megascale}
parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 6, zero: 2, recompute: selective, global_batch: 768}
)");
  EXPECT_FALSE(lower_step(s, a100(), {}, false).all_replicas);
  s.cluster.network.tiers.front().oversubscription = 3;  // 1:3 at the leaves
  EXPECT_TRUE(lower_step(s, a100(), {}, false).all_replicas);
  // Above the tier that joins the job, oversubscription is shared by nothing.
  s.cluster.network.tiers.front().oversubscription = 1;
  s.cluster.network.tiers.back().oversubscription = 3;
  EXPECT_FALSE(lower_step(s, a100(), {}, false).all_replicas);
}

// Expectation: a ring's flow carries busbw_factor(kind, n) of the bytes per
// GPU along each edge, n the data-parallel replicas, and the ring's latency
// beyond the hop every flow already pays; ZeRO-2 reduce-scatters gradients and
// all-gathers parameters: (n - 1) / n = 3/4 each at dp 4.
TEST(StepLowering, DataParallelRingsCarryTheBusBandwidthFactor) {
  const auto low = lower_step(megascale_256(), a100(), {}, false);
  ASSERT_EQ(low.dp_phases.size(), low.program.costs.dp_comms.size());
  ASSERT_FALSE(low.dp_phases.empty());
  for (std::size_t i = 0; i < low.dp_phases.size(); ++i) {
    const DpPhase& d = low.dp_phases[i];
    const CommCost& priced = low.program.costs.dp_costs[i];
    EXPECT_EQ(d.algorithm, priced.algorithm);
    if (d.algorithm == models::CollectiveAlgorithm::ring ||
        d.algorithm == models::CollectiveAlgorithm::tree) {
      EXPECT_DOUBLE_EQ(d.edge_factor, 0.75) << low.program.costs.dp_comms[i].name;
      EXPECT_NEAR(d.extra_latency_s + low.route_latency_s, priced.latency_s, 1e-15);
    }
  }
}

// Expectation: hierarchical all-reduce on 2 nodes: a reduce-scatter and an
// all-gather inside the node, between them a ring of 2 nodes whose edges carry
// busbw_factor(all_reduce, 2) = 1 of the shard bytes.
TEST(StepLowering, HierarchicalAllReduceIsPricedInsideAndFlowsAcross) {
  auto s = mixtral();
  s.cluster.gpus = 16;
  s.cluster.nics_per_node = 8;
  s.cluster.nic_bw_Bps = 25e9;
  s.parallelism.dp = 16 / s.parallelism.tp;
  s.parallelism.zero = 0;
  s.parallelism.global_batch = s.parallelism.dp;
  s.overlap.dp = false;
  const auto low = lower_step(s, h100(), {}, false);
  const auto grads =
      std::find_if(low.program.costs.dp_comms.begin(), low.program.costs.dp_comms.end(),
                   [](const models::Collective& c) { return c.name == "dp.grads"; });
  ASSERT_NE(grads, low.program.costs.dp_comms.end());
  const DpPhase& d =
      low.dp_phases[static_cast<std::size_t>(grads - low.program.costs.dp_comms.begin())];
  ASSERT_EQ(d.algorithm, models::CollectiveAlgorithm::hierarchical);
  EXPECT_DOUBLE_EQ(d.edge_factor, 1.0);
  EXPECT_GT(d.before.time_s, 0);
  EXPECT_GT(d.after.time_s, 0);
  EXPECT_EQ(d.whole_s, 0);
}

// Expectation: Mixtral's expert all-to-alls leave the node (ep groups of whole
// nodes), so they are played in two hops, the part inside the node over NVLink
// then flows between the nodes, and their time leaves the layer's local time; its
// tp collectives stay inside the node.
TEST(StepLowering, ExpertAllToAllsBetweenNodesAreFlows) {
  auto s = mixtral();
  s.overlap.dp = false;
  const auto low = lower_step(s, h100(), {}, false);
  ASSERT_TRUE(low.layer_flows);
  EXPECT_GT(low.group_actors(), 1);
  double flows_s = 0;
  for (std::size_t i = 0; i < low.forward_play.size(); ++i) {
    const auto& c = low.program.costs.forward_comms[i];
    const std::string expected =
        c.collective.group == models::GroupKind::ep ? "expert.nvlink+expert.flows" : "inside";
    EXPECT_EQ(low.kinds(low.forward_play[i]), expected) << c.collective.name;
    if (!low.forward_play[i].empty()) flows_s += c.cost.time_s;
  }
  EXPECT_GT(flows_s, 0);
  EXPECT_NEAR(low.layer_local.forward, low.program.costs.layer.forward - flows_s, 1e-12);
}

// Expectation: context parallelism across nodes (cp 2 at tp 8): the cp
// collectives of a rank group of two nodes are flows to its second node.
TEST(StepLowering, CollectivesOfARankGroupAcrossNodesAreFlows) {
  auto s = load(R"(
cluster: {preset: selene-like, gpus: 64}
model: {preset: llama3-8b, seq_length: 8192}
parallelism: {tp: 8, sp: true, cp: 2, pp: 1, micro_batch: 1, global_batch: 16}
)");
  const auto low = lower_step(s, a100(), {}, false);
  EXPECT_EQ(low.nodes_per_group, 2);
  bool any = false;
  for (std::size_t i = 0; i < low.forward_play.size(); ++i) {
    const auto& c = low.program.costs.forward_comms[i].collective;
    if (c.group == models::GroupKind::cp) {
      EXPECT_EQ(low.kinds(low.forward_play[i]), "group.flows") << c.name;
      any = true;
    }
  }
  EXPECT_TRUE(any) << "no cp collective exposed";
}

TEST(StepLowering, SaysWhichRankGroupsItCannotPlay) {
  auto s = load(R"(
cluster: {preset: selene-like, gpus: 32}
model: {preset: llama3-8b}
parallelism: {tp: 2, pp: 2, micro_batch: 1, global_batch: 64}
)");
  s.parallelism.tp = 3;  // past the loader, which refuses it too
  try {
    (void)lower_step(s, a100(), {}, false);
    FAIL() << "accepted tp 3 on 8-GPU nodes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("to fill whole nodes of 8 GPUs or to divide a node"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

// Expectation: Llama 3 405B with racks of two nodes at 1:2 under pods at 1:7 and
// MegaScale-like stragglers plays every replica (every other ring edge leaves its
// rack, whose uplinks bind: no two replicas share the oversubscribed tiers alike;
// with the racks at 1:1 they would not split classes): at 65,536 GPUs 512
// replicas x 16 stages = 8,192 rank groups, within the bound; at 524,288 GPUs
// 4,096 x 16 = 65,536, refused before anything is built, with the figure and
// why every replica is played (SimGrid aborted on a failed allocation there).
TEST(StepLowering, RefusesAStepPastItsBoundOfRankGroups) {
  const auto at = [](int gpus) {
    return models::scenario::load_scenario(
        std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml",
        models::scenario::LoadOptions(
            kShipped.preset_path,
            {"cluster.gpus=" + std::to_string(gpus),
             "parallelism.global_batch=" + std::to_string(gpus / 8),
             "cluster.network.tiers=[{name: tor, radix: 32, oversubscription: \"1:2\", latency: "
             "600ns}, {name: cluster, radix: 256, oversubscription: \"1:7\", latency: 600ns}, "
             "{name: aggregation, radix: 256, latency: 600ns}]",
             "faults.stragglers=[{per_1000_node_days: 120, duration: 1h, slowdown: 1.1}]"}));
  };
  const models::scenario::Scenario fits = at(65536);
  const StepLowering p = lower_step(fits, h100(), draw_stragglers(fits), false);
  EXPECT_EQ(p.rows.size() * static_cast<std::size_t>(p.pp), 8192U);
  const models::scenario::Scenario large = at(524288);
  try {
    (void)lower_step(large, h100(), draw_stragglers(large), false);
    FAIL() << "65,536 rank groups were lowered";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("would play 65536 rank groups (4096 rows x 16 stages), past its bound of "
                        "32768: it plays every replica, as traffic contends"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("about 19.7 GB"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace myriad::sim
