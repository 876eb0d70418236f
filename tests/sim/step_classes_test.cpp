// Classes of replicas (sim/step/step_lowering.hpp, replica_classes): where
// traffic can contend, one replica played per class with its traffic weighted
// gives the step of every replica played.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/step/step_lowering.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using testing::a100;
using testing::kSanitizerSafe;
using testing::kShipped;
using testing::options;
using testing::run_in_child;

// The GPT-3 175B job of these tests, 160 nodes of 8 GPUs: tp 8, pp 8, so dp 20 and
// stage s on nodes 20 s .. 20 s + 19, on a rail-optimized fabric of these tiers.
models::scenario::Scenario job_on(const std::string& tiers) {
  return models::scenario::load_scenario_text(
      "cluster:\n  preset: megascale-like\n  gpus: 1280\n  network:\n"
      "    rail_optimized: true\n    tiers:\n" +
          tiers +
          "model: {preset: gpt3-175b-megascale, parallel_block: true}\n"
          "parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 6, zero: 2, global_batch: 160, "
          "recompute: selective}\n"
          "overlap: {tp: true, pp: true, dp: true}\n",
      "step_classes_test.yaml", kShipped);
}

// Leaves of 48 nodes at 1:3 (64 ports at the NICs' 200 Gb/s: 48 down).
models::scenario::Scenario straddling() {
  return job_on(
      "      - {name: leaf, radix: 64, port_bandwidth: 200Gbps, oversubscription: \"1:3\", "
      "latency: 600ns}\n"
      "      - {name: spine, radix: 64, port_bandwidth: 200Gbps, latency: 600ns}\n");
}

std::vector<ReplicaClass> classes_of(const models::scenario::Scenario& s,
                                     const std::vector<Straggler>& stragglers = {}) {
  const StepLowering p = lower_step(s, a100(), stragglers, false);
  EXPECT_TRUE(p.classes);
  std::vector<ReplicaClass> out;
  for (std::size_t i = 0; i < p.rows.size(); ++i) out.push_back({p.rows[i], p.weights[i]});
  return out;
}

std::vector<int> sizes(const std::vector<ReplicaClass>& classes) {
  std::vector<int> out;
  for (const auto& c : classes) out.push_back(c.size);
  return out;
}

// The step played as classes and as every replica: the same to 1e-6, and so is
// the most utilized uplink where both platforms have the same uplinks
// (`same_uplinks`). Under the sanitizers the classes only: every replica one by
// one is slow with thread contexts.
void expect_classes_play_every_replica(const models::scenario::Scenario& s,
                                       bool same_uplinks = true) {
  if (kSanitizerSafe) {
    ASSERT_GT(run_in_child(s, options(false)).step_time_s, 0);
    return;
  }
  const auto classes = run_in_child(s, options(false));
  const auto every = run_in_child(s, options(true));
  ASSERT_GT(classes.step_time_s, 0);
  EXPECT_NEAR(classes.step_time_s / every.step_time_s, 1.0, 1e-6)
      << "cp " << s.parallelism.cp << ", ep " << s.parallelism.ep;
  if (same_uplinks) {
    EXPECT_NEAR(classes.most_utilized_uplink, every.most_utilized_uplink, 1e-6);
  }
}

// Expectation, from the placement: leaves end at nodes 48, 96 and 144, inside
// stage 2 (nodes 40-59: between replicas 7 and 8), stage 4 (80-99: 15 | 16) and
// stage 7 (140-159: 3 | 4); at stage 2 the ring's wrap, 19 -> 0, leaves a leaf too.
// The ends of those edges stand alone, the runs between them are classes.
TEST(ReplicaClasses, RunsBetweenTheRingEdgesThatLeaveASubtree) {
  const auto s = straddling();
  ASSERT_EQ(s.parallelism.dp, 20);
  EXPECT_EQ(models::first_node(s, {2, 8}), 48);
  EXPECT_EQ(sizes(classes_of(s)), (std::vector<int>{1, 2, 1, 1, 2, 1, 1, 6, 1, 1, 2, 1}));
}

// Expectation: a straggler's replica and its ring neighbours stand alone.
TEST(ReplicaClasses, AStragglerAndItsRingNeighboursStandAlone) {
  const auto s = straddling();
  const int node = models::first_node(s, {5, 11});
  const auto classes = classes_of(s, {{node, 1.2, "test", models::scenario::Component::gpu}});
  EXPECT_EQ(sizes(classes), (std::vector<int>{1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1}));
  EXPECT_EQ(classes[9].first, 11);
}

// Expectation: without contention, or when every replica is asked for, no classes.
TEST(ReplicaClasses, OnlyWhereTrafficCanContend) {
  auto s = straddling();
  EXPECT_FALSE(lower_step(s, a100(), {}, true).classes);
  s.cluster.network.tiers.front().oversubscription = 1;
  EXPECT_FALSE(lower_step(s, a100(), {}, false).classes);
}

// Expectation: one replica per class, its flows weighted, is every replica played
// (the same max-min shares): the same step to 1e-6. Also with rank groups of two
// nodes (cp 2: a class's context-parallel flows to its groups' second nodes).
TEST(StepEngine, ClassesOfReplicasStandForEveryReplica) {
  auto s = straddling();
  auto two_nodes = s;
  two_nodes.parallelism.cp = 2;
  two_nodes.parallelism.pp = 4;
  two_nodes.parallelism.dp = 20;
  two_nodes.overlap.tp = false;
  for (const auto& scenario : {s, two_nodes}) {
    const auto lowered = lower_step(scenario, a100(), {}, false);
    ASSERT_TRUE(lowered.classes);
    ASSERT_LT(lowered.rows.size(), static_cast<std::size_t>(scenario.parallelism.dp));
    expect_classes_play_every_replica(scenario);
  }
}

// The same job under a non-blocking tier of small leaves (4 nodes at 1:1) below
// the pods that are oversubscribed (12 leaves, 48 nodes, at 1:3): a leaf's uplinks
// carry what its NICs do, so they change no rate (uplinks_bind).
models::scenario::Scenario under_small_leaves() {
  return job_on(
      "      - {name: leaf, radix: 8, port_bandwidth: 200Gbps, latency: 600ns}\n"
      "      - {name: pod, radix: 16, port_bandwidth: 200Gbps, oversubscription: \"1:3\", "
      "latency: 600ns}\n"
      "      - {name: spine, radix: 64, port_bandwidth: 200Gbps, latency: 600ns}\n");
}

// Expectation: classes span the leaves; only the pods' ends (nodes 48, 96 and 144,
// as the straddling leaves of 48) split them: the same classes as there, where
// every fourth ring edge leaving a leaf would otherwise stand its ends alone.
TEST(ReplicaClasses, ANonBlockingTierDoesNotSplitThem) {
  const auto s = under_small_leaves();
  const std::vector<double> under = subtree_nodes(s.cluster);
  ASSERT_EQ(under.size(), 3U);
  EXPECT_DOUBLE_EQ(under[0], 4);
  EXPECT_DOUBLE_EQ(under[1], 48);
  EXPECT_EQ(uplinks_bind(s.cluster), (std::vector<bool>{false, true}));
  EXPECT_EQ(sizes(classes_of(s)), sizes(classes_of(straddling())));
}

// Expectation: the weighted platform without the leaves' zones plays the step of
// every replica on the plain platform, whose leaf uplinks are there: to 1e-6.
TEST(StepEngine, ClassesAcrossANonBlockingTierStandForEveryReplica) {
  expect_classes_play_every_replica(under_small_leaves(), false);
}

// Mixtral 8x7B on the same cluster: tp 8, pp 8, dp 20; experts over 2 replicas
// each (ep 2, etp 8), so expert groups are replicas 0-1, 2-3, ... and their
// all-to-alls cross nodes.
models::scenario::Scenario experts_straddling() {
  auto s = straddling();
  auto moe = models::scenario::load_scenario_text(R"(
cluster: {preset: megascale-like, gpus: 1280}
model: {preset: mixtral-8x7b, seq_length: 4096}
parallelism: {tp: 8, sp: true, pp: 8, ep: 2, zero: 1, global_batch: 160}
overlap: {pp: true, dp: true}
)",
                                                  "step_classes_test.yaml", kShipped);
  moe.cluster = s.cluster;
  return moe;
}

// Expectation: a class holds whole expert groups, and a group a class boundary
// would cut has every member alone. The straddling cluster's ring edges leaving
// a leaf (7 | 8, 15 | 16, 3 | 4 and the wrap 19 | 0) single out both their ends,
// so groups 0-1, 2-3, 4-5, 6-7, 8-9, 14-15, 16-17 and 18-19 stand alone, and
// 10-13 is one class of two whole groups.
TEST(ReplicaClasses, ExpertGroupsStayWhole) {
  const auto s = experts_straddling();
  const StepLowering p = lower_step(s, a100(), {}, false);
  ASSERT_TRUE(p.classes);
  ASSERT_EQ(p.group_actors(), 2);
  std::vector<int> expected(20, 1);
  expected.erase(expected.begin() + 10, expected.begin() + 14);
  expected.insert(expected.begin() + 10, 4);
  EXPECT_EQ(p.weights, expected);
  EXPECT_EQ(p.rows[10], 10);
}

// Expectation: expert all-to-alls inside a class as one weighted flow, between
// singletons as real flows: the same step as every replica played, to 1e-6.
TEST(StepEngine, ClassesOfExpertGroupsStandForEveryReplica) {
  expect_classes_play_every_replica(experts_straddling());
}

// Expectation: likewise with a slow GPU and a slow link.
TEST(StepEngine, ClassesOfReplicasStandForEveryReplicaWithStragglers) {
  if (kSanitizerSafe) GTEST_SKIP() << "every replica is simulated: slow with thread contexts";
  const auto s = straddling();
  for (const auto component :
       {models::scenario::Component::gpu, models::scenario::Component::link}) {
    StepOptions some = options(false);
    some.stragglers =
        std::vector<Straggler>{{models::first_node(s, {5, 11}), 1.3, "test", component}};
    StepOptions every = some;
    every.all_replicas = true;
    const auto classes = run_in_child(s, some);
    const auto all = run_in_child(s, every);
    ASSERT_GT(classes.step_time_s, 0);
    EXPECT_NEAR(classes.step_time_s / all.step_time_s, 1.0, 1e-6)
        << (component == models::scenario::Component::gpu ? "gpu" : "link");
  }
}

}  // namespace
}  // namespace myriad::sim
