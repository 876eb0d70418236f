// In-network reduction (cluster.network.in_network_reduction: sharp): an
// all-reduce or reduce-scatter across nodes run in the switches' aggregation
// tree (InfiniBand SHARP, NCCL's CollNet). By hand: each GPU's 1/per_node part
// goes up once and, for an all-reduce, comes back once, after a reduce-scatter
// and before an all-gather over NVLink; one trip up and down the tree. Both
// engines on it; the check that it needs rail-optimized leaves.
#include <gtest/gtest.h>

#include <string>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::CollectiveAlgorithm;
using models::CollectiveKind;
using models::GroupKind;
using testing::kShipped;

// Selene-like: DGX A100 on HDR InfiniBand (Quantum HDR switches run SHARP), rail-optimized.
models::scenario::Scenario selene(const std::string& reduction, int gpus = 256,
                                  const std::string& more = "") {
  return models::scenario::load_scenario_text(
      "cluster: {preset: selene-like, gpus: " + std::to_string(gpus) +
          ", network: {in_network_reduction: " + reduction +
          "}}\n"
          "model: {preset: megatron-22b}\n"
          "parallelism: {tp: 8, global_batch: " +
          std::to_string(gpus) + "}\n" + more,
      "sharp.yaml", kShipped);
}

// 32 nodes, one member a node (tp 8 fills the node): the ring sends and
// receives 2 x 31/32 of the bytes on each NIC, SHARP the bytes once each way.
TEST(InNetworkReduction, AllReduceSendsEachPartUpOnceAndBackOnce) {
  const auto cluster = selene("sharp").cluster;
  const auto plain = selene("none").cluster;
  const DeviceProfile& p = testing::a100();
  const double nic = cluster.nic_bw_Bps * p.nic_efficiency;  // 8 NICs, 8 GPUs: one each
  const models::Collective ar{"dp.ar", CollectiveKind::all_reduce, GroupKind::dp, 4e9};
  const models::GroupSpan g{32, 1, 32};
  const CommCost in_switch = collective_cost(ar, g, cluster, p);
  EXPECT_EQ(in_switch.algorithm, CollectiveAlgorithm::sharp);
  EXPECT_TRUE(in_switch.inter_node);
  EXPECT_DOUBLE_EQ(in_switch.latency_s, hop_latency(cluster, 32));
  EXPECT_NEAR(in_switch.time_s, hop_latency(cluster, 32) + 4e9 / nic, 1e-12);
  const CommCost ring = collective_cost(ar, g, plain, p);
  EXPECT_EQ(ring.algorithm, CollectiveAlgorithm::tree);  // the ring's bandwidth, less latency
  EXPECT_NEAR(ring.bandwidth_s / in_switch.bandwidth_s, 2.0 * 31 / 32, 1e-9);
  // nccl-tests' bus bandwidth of it passes the NIC's rate: the switches reduce.
  EXPECT_NEAR(in_switch.busbw_Bps, 2.0 * 31 / 32 * nic, 1e-6 * nic);

  // Two members a node: the pair reduce-scatters over NVLink first, each sends
  // half up on its own NIC, and they all-gather after.
  const models::GroupSpan pairs{64, 2, 32};
  const CommCost two = collective_cost(ar, pairs, cluster, p);
  models::Collective local = ar;
  local.kind = CollectiveKind::reduce_scatter;
  const CommCost rs = collective_cost(local, {2, 2, 1}, cluster, p);
  local.kind = CollectiveKind::all_gather;
  const CommCost ag = collective_cost(local, {2, 2, 1}, cluster, p);
  EXPECT_EQ(two.algorithm, CollectiveAlgorithm::sharp);
  EXPECT_NEAR(two.time_s, rs.time_s + hop_latency(cluster, 32) + 2e9 / nic + ag.time_s, 1e-12);
  EXPECT_LT(two.time_s, collective_cost(ar, pairs, plain, p).time_s);
}

// A reduce-scatter sends its whole part up (a ring sends (n-1)/n of it): the
// switches win only where the ring's n-1 steps of latency cost more.
TEST(InNetworkReduction, ReduceScatterTakesTheSwitchesWhereLatencyBinds) {
  const auto cluster = selene("sharp").cluster;
  const DeviceProfile& p = testing::a100();
  const models::GroupSpan g{32, 1, 32};
  models::Collective rs{"dp.rs", CollectiveKind::reduce_scatter, GroupKind::dp, 1e6};
  EXPECT_EQ(collective_cost(rs, g, cluster, p).algorithm, CollectiveAlgorithm::sharp);
  EXPECT_NEAR(collective_cost(rs, g, cluster, p).time_s,
              hop_latency(cluster, 32) + 1e6 / (cluster.nic_bw_Bps * p.nic_efficiency), 1e-12);
  rs.bytes = 8e9;
  EXPECT_EQ(collective_cost(rs, g, cluster, p).algorithm, CollectiveAlgorithm::ring);
  // All-gathers and all-to-alls do not reduce: rings and pairs as before.
  models::Collective ag = rs;
  ag.kind = CollectiveKind::all_gather;
  ag.bytes = 1e6;
  EXPECT_EQ(collective_cost(ag, g, cluster, p).algorithm, CollectiveAlgorithm::ring);
  // Inside a node the NVLink switch reduces (NVLS) or rings run: no change.
  const models::Collective tp{"tp.ar", CollectiveKind::all_reduce, GroupKind::tp, 1e8};
  EXPECT_DOUBLE_EQ(collective_cost(tp, {8, 8, 1}, cluster, p).time_s,
                   collective_cost(tp, {8, 8, 1}, selene("none").cluster, p).time_s);
}

// An exposed data-parallel all-reduce: the step shortens by about half of it,
// and the step engine, playing each part's trip as a flow, agrees.
TEST(InNetworkReduction, BothEnginesPriceTheShorterAllReduce) {
  const std::string exposed = "overlap: {dp: false}\n";
  const auto with = selene("sharp", 64, exposed);
  const auto without = selene("none", 64, exposed);
  const DeviceProfile& p = testing::a100();
  const StepReport a = estimate(without, p);
  const StepReport b = estimate(with, p);
  const auto dp = [](const StepReport& r) {
    for (const auto& part : r.breakdown) {
      if (part.name == "dp") return part.seconds;
    }
    return 0.0;
  };
  ASSERT_GT(dp(a), 0);
  EXPECT_LT(dp(b), 0.6 * dp(a));
  EXPECT_GT(dp(b), 0.4 * dp(a));
  EXPECT_NEAR(b.step_time_s, a.step_time_s - (dp(a) - dp(b)), 1e-9 * a.step_time_s);
  for (const auto* s : {&with, &without}) {
    const double engine = testing::run_in_child(*s, testing::options(), p).step_time_s;
    const double closed = estimate(*s, p, Detail::summary).step_time_s;
    EXPECT_NEAR(engine / closed, 1, 0.02)
        << models::name_in(models::scenario::kInNetworkReductionNames,
                           s->cluster.network.in_network_reduction)
        << ": " << engine << " s against " << closed << " s";
  }
}

// Quantum (HDR) switches run one streaming aggregation tree each, Quantum-2 one a
// port (cluster.network.sharp_trees, derived from the NIC rate). By hand on the
// Selene-like cluster (40-port leaves at 1:1: a rail's leaf serves 20 nodes) of
// 32 nodes, one member a node on each rail:
//   8-node groups laid out node after node, 4 of them: a leaf holds
//     min(ceil(20 / 8), 4) = 3; 16-node groups: min(2, 2) = 2; one group of all
//     32 nodes: 1, though a leaf boundary falls inside it;
//   8-node groups strided over the nodes (reach 29): min(20, 4) = 4;
//   a group inside a node: 1.
// Per port, only GPUs sharing a NIC share a tree: with 4 NICs for 8 GPUs, two
// communicators behind each unless one holds the whole node.
TEST(InNetworkReduction, CommunicatorsShareTheSwitchesTrees) {
  using models::scenario::SharpTrees;
  auto cluster = selene("sharp").cluster;
  ASSERT_EQ(cluster.nodes(), 32);
  ASSERT_DOUBLE_EQ(subtree_nodes(cluster).front(), 20);
  EXPECT_EQ(cluster.network.sharp_trees, SharpTrees::per_switch);  // 200 Gb/s NICs: HDR
  EXPECT_EQ(sharp_tree_sharers({8, 1, 8}, cluster), 3);
  EXPECT_EQ(sharp_tree_sharers({16, 1, 16}, cluster), 2);
  EXPECT_EQ(sharp_tree_sharers({32, 1, 32}, cluster), 1);
  EXPECT_EQ(sharp_tree_sharers({8, 1, 8, 29}, cluster), 4);
  EXPECT_EQ(sharp_tree_sharers({8, 8, 1}, cluster), 1);
  cluster.network.sharp_trees = SharpTrees::per_port;
  for (const models::GroupSpan g : {models::GroupSpan{8, 1, 8}, models::GroupSpan{8, 1, 8, 29}}) {
    EXPECT_EQ(sharp_tree_sharers(g, cluster), 1);
  }
  cluster.nics_per_node = 4;
  EXPECT_EQ(sharp_tree_sharers({8, 1, 8}, cluster), 2);
  EXPECT_EQ(sharp_tree_sharers({64, 8, 8}, cluster), 1);
}

// pp 2 on 16 nodes of HDR: the two stages' data-parallel communicators share
// every rail's leaf, so the one tree a switch runs cannot serve both: the
// reductions run without SHARP, and the report says why. On Quantum-2 (per
// port) both get a tree and the step shortens as on one stage.
TEST(InNetworkReduction, ALeafRunsOneTreeOnQuantum) {
  const auto staged = [](const std::string& trees) {
    return models::scenario::load_scenario_text(
        "cluster: {preset: selene-like, gpus: 128, network: {in_network_reduction: sharp" + trees +
            "}}\n"
            "model: {preset: megatron-22b}\n"
            "parallelism: {tp: 8, pp: 2, global_batch: 128}\n"
            "overlap: {dp: false}\n",
        "sharp-pp2.yaml", kShipped);
  };
  const DeviceProfile& p = testing::a100();
  const auto algorithm = [](const StepReport& r) {
    for (const auto& c : r.collectives) {
      if (c.group == "dp") return c.cost.algorithm;
    }
    return CollectiveAlgorithm::none;
  };
  const StepReport hdr = estimate(staged(""), p);
  const StepReport ndr = estimate(staged(", sharp_trees: per_port"), p);
  EXPECT_NE(algorithm(hdr), CollectiveAlgorithm::sharp);
  EXPECT_NE(algorithm(hdr), CollectiveAlgorithm::none);
  EXPECT_EQ(algorithm(ndr), CollectiveAlgorithm::sharp);
  EXPECT_GT(hdr.step_time_s, ndr.step_time_s);
  const auto says = [](const StepReport& r) {
    return testing::notes_say(r, "SHARP: 2 data-parallel communicators");
  };
  EXPECT_TRUE(says(hdr));
  EXPECT_FALSE(says(ndr));
  // The step engine plays the reductions each way as the closed form prices them.
  for (const std::string trees : {"", ", sharp_trees: per_port"}) {
    const auto s = staged(trees);
    const double engine = testing::run_in_child(s, testing::options(), p).step_time_s;
    EXPECT_NEAR(engine / estimate(s, p, Detail::summary).step_time_s, 1, 0.02) << trees;
  }
  // Without SHARP at all the HDR step is the same: the trees change nothing.
  auto none = staged("");
  none.cluster.network.in_network_reduction = models::scenario::InNetworkReduction::none;
  EXPECT_DOUBLE_EQ(estimate(none, p).step_time_s, hdr.step_time_s);
}

TEST(InNetworkReduction, NeedsRailOptimizedLeaves) {
  try {
    (void)models::scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 64, network: {in_network_reduction: sharp}}\n"
        "model: {preset: llama3-8b}\n"
        "parallelism: {tp: 8, global_batch: 64}\n",
        "rack.yaml", kShipped);
    ADD_FAILURE() << "sharp on rack leaves loaded";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.network.in_network_reduction"), std::string::npos) << what;
    EXPECT_NE(what.find("rail_optimized"), std::string::npos) << what;
  }
  try {
    (void)selene("yes");
    ADD_FAILURE() << "an unknown reduction loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("sharp"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim
