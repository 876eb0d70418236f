// Rail-only fabrics (cluster.network.topology: rail_only; Wang et al.,
// arXiv:2307.12169): no tier joins the rails, so a byte bound for another rail
// of another node crosses NVLink to its node's GPU on that rail first. Which
// groups sit on the same rails in every node; what an all-to-all forwards and a
// ring off its rails pays, by hand; layouts on their rails unchanged; both
// engines on an expert all-to-all across nodes. NCCL's PXN (cluster.network.pxn,
// on by default) forwards an all-to-all's bytes the same way on a fat tree; off,
// they change rail in the switches.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/reliability_spec.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::CollectiveKind;
using models::GroupKind;
using testing::kShipped;

models::scenario::Scenario load(const std::string& text) {
  return models::scenario::load_scenario_text(text, "rail_only.yaml", kShipped);
}

// 64 H100 on the Llama-3-like cluster with its NICs on rails: "rail_only",
// "fat_tree" (PXN on, NCCL's default) or "fat_tree, pxn: false".
std::string h100(const std::string& topology) {
  return "cluster: {preset: llama3-like, gpus: 64, network: {rail_optimized: true, topology: " +
         topology + "}}\n";
}

TEST(RailOnly, GroupsOnTheSameRailsInEveryNode) {
  // GPT-3 175B (96 heads) at tp 6 on 8-GPU nodes: a tensor-parallel group straddles two
  // nodes at different places (ranks 6-11: locals 6-7, then 0-3), and so does a
  // data-parallel one, 6 ranks apart (locals 0 and 6, then 4, then 2).
  const auto skewed = load(
      "cluster: {preset: llama3-like, gpus: 48, network: {rail_optimized: true, topology: "
      "rail_only}}\n"
      "model: {preset: gpt3-175b-megatron, layers: 8}\n"
      "parallelism: {tp: 6, pp: 1, global_batch: 64, micro_batch: 1}\n");
  EXPECT_GT(models::group_span(GroupKind::tp, skewed).nodes, 1);
  EXPECT_FALSE(models::group_span(GroupKind::tp, skewed).rails_match);
  EXPECT_FALSE(models::group_span(GroupKind::dp, skewed).rails_match);
  // Tp 2 with pipeline stages 2 ranks apart (tp-cp-pp-dp): locals 0, 2, 4, 6 of
  // each node, alike; data-parallel groups a whole number of nodes apart.
  const auto aligned = load(h100("rail_only") +
                            "model: {preset: llama3-8b}\n"
                            "parallelism: {tp: 2, pp: 8, placement: tp-cp-pp-dp, global_batch: "
                            "64}\n");
  EXPECT_EQ(models::group_span(GroupKind::pp, aligned).nodes, 2);
  EXPECT_TRUE(models::group_span(GroupKind::pp, aligned).rails_match);
  EXPECT_TRUE(models::group_span(GroupKind::dp, aligned).rails_match);
  // On a fat tree the question is not asked: a byte may change rail in the network.
  auto fat = skewed;
  fat.cluster.network.topology = models::scenario::Topology::fat_tree;
  EXPECT_TRUE(models::group_span(GroupKind::dp, fat).rails_match);
}

// Ep 16 over two nodes of 8: half of each GPU's bytes leave the node; of those,
// 7/8 go to another rail and cross NVLink first. Fewer members a node use fewer
// rails (4 a node: 3/4 forwarded); a group off its rails forwards all of it.
TEST(RailOnly, AnAllToAllForwardsWhatChangesRail) {
  const std::string job = "model: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 64}\n";
  const auto rails = load(h100("rail_only") + job);
  const auto fat = load(h100("fat_tree, pxn: false") + job);
  const auto pxn = load(h100("fat_tree") + job);
  const DeviceProfile& p = testing::shipped_profile("H100");
  const models::Collective a2a{"ep.dispatch", CollectiveKind::all_to_all, GroupKind::ep, 1e9};
  const models::GroupSpan g{16, 8, 2};
  EXPECT_DOUBLE_EQ(rail_forwarded_share(g, rails.cluster), 7.0 / 8);
  EXPECT_DOUBLE_EQ(rail_forwarded_share(g, fat.cluster), 0);
  EXPECT_DOUBLE_EQ(rail_forwarded_share(g, pxn.cluster), 7.0 / 8);
  // PXN does not ask how the leaves are wired: NCCL sends on the NIC with the
  // destination's index, racks or rails.
  const auto racks = load("cluster: {preset: llama3-like, gpus: 64}\n" + job);
  ASSERT_FALSE(racks.cluster.network.rail_optimized);
  EXPECT_DOUBLE_EQ(rail_forwarded_share(g, racks.cluster), 7.0 / 8);
  EXPECT_DOUBLE_EQ(rail_forwarded_share({8, 4, 2}, rails.cluster), 3.0 / 4);
  EXPECT_DOUBLE_EQ(rail_forwarded_share({8, 8, 1}, rails.cluster), 0);  // one node
  models::GroupSpan off = g;
  off.rails_match = false;
  EXPECT_DOUBLE_EQ(rail_forwarded_share(off, rails.cluster), 1);

  const CommCost a = collective_cost(a2a, g, fat.cluster, p);
  const CommCost b = collective_cost(a2a, g, rails.cluster, p);
  const double nvlink = nvlink_busbw(p, CollectiveKind::all_to_all, 1e9);
  EXPECT_DOUBLE_EQ(b.latency_s, a.latency_s);
  EXPECT_NEAR(b.bandwidth_s - a.bandwidth_s, 1e9 * 0.5 * 7.0 / 8 / nvlink, 1e-12);
  // With PXN a fat tree forwards them too: the same all-to-all.
  EXPECT_DOUBLE_EQ(collective_cost(a2a, g, pxn.cluster, p).time_s, b.time_s);
  // What forwarding adds to the network part: 7/8 of a NIC's rate over
  // NVLink's, about a tenth on H100 (the paper's all-to-alls: 8.2-11.2 % more).
  const double network_part = a.bandwidth_s - 1e9 * 7 / 16 / nvlink;
  const double overhead = (b.bandwidth_s - a.bandwidth_s) / network_part;
  EXPECT_GT(overhead, 0.08);
  EXPECT_LT(overhead, 0.12);

  // A two-hop all-to-all already crosses the network once a node, onto the rail
  // it lands on, and forwards over NVLink there: unchanged.
  models::Collective hops = a2a;
  hops.hop_nodes = 2;
  hops.hop_copies = 8;
  EXPECT_DOUBLE_EQ(collective_cost(hops, g, rails.cluster, p).time_s,
                   collective_cost(hops, g, fat.cluster, p).time_s);
}

// A ring whose nodes hold its members at different places enters each node on
// another rail: an NVLink hop more on each of its steps; one on its rails pays
// nothing more.
TEST(RailOnly, ARingOffItsRailsPaysAnNvlinkHopAStep) {
  const auto rails = load(h100("rail_only") +
                          "model: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 64}\n");
  const DeviceProfile& p = testing::shipped_profile("H100");
  const models::Collective gather{"dp.gather", CollectiveKind::all_gather, GroupKind::dp, 1e8};
  models::GroupSpan on{8, 1, 8};
  models::GroupSpan off = on;
  off.rails_match = false;
  const CommCost a = collective_cost(gather, on, rails.cluster, p);
  const CommCost b = collective_cost(gather, off, rails.cluster, p);
  EXPECT_NEAR(b.latency_s - a.latency_s, 7 * rails.cluster.nvlink_latency_s, 1e-15);
  EXPECT_DOUBLE_EQ(b.bandwidth_s, a.bandwidth_s);
  auto fat = rails;
  fat.cluster.network.topology = models::scenario::Topology::fat_tree;
  EXPECT_DOUBLE_EQ(collective_cost(gather, on, fat.cluster, p).time_s, a.time_s);
}

// Layouts whose groups keep to their rails (GPT-3 175B at tp 8 on 12,288 GPUs)
// lose nothing without the spine: the same step, to the bit.
TEST(RailOnly, ALayoutOnItsRailsRunsAsOnAFatTree) {
  const auto fat = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/gpt3-175b-megascale-12288.yaml", kShipped);
  auto rails = fat;
  rails.cluster.network.topology = models::scenario::Topology::rail_only;
  const DeviceProfile& p = testing::shipped_profile("A100-80GB");
  EXPECT_EQ(estimate(rails, p).step_time_s, estimate(fat, p).step_time_s);
}

// Mixtral's experts over two nodes (ep 8 at tp 2: 4 a node): the all-to-alls'
// forwarding over NVLink (rail-only) slows the step against a fat tree whose
// switches change their rail (PXN off), in both engines, which agree on the
// step and on what the forwarding costs it.
TEST(RailOnly, TheStepEngineAgrees) {
  for (const char* overlap : {"false", "true"}) {
    double est[2] = {0, 0};
    double engine[2] = {0, 0};
    int k = 0;
    for (const char* topology : {"fat_tree, pxn: false", "rail_only"}) {
      const auto s = load(h100(topology) +
                          "model: {preset: mixtral-8x7b, seq_length: 4096}\n"
                          "parallelism: {tp: 2, sp: true, ep: 8, pp: 4, zero: 1, global_batch: "
                          "32}\n"
                          "overlap: {dp: true, pp: true, ep: " +
                          std::string(overlap) + "}\n");
      ASSERT_EQ(models::group_span(GroupKind::ep, s).nodes, 2);
      const DeviceProfile& p = testing::shipped_profile("H100");
      est[k] = estimate(s, p, Detail::summary).step_time_s;
      engine[k] = testing::run_in_child(s, testing::options(), p).step_time_s;
      EXPECT_NEAR(engine[k] / est[k], 1, 0.02) << topology << ", overlap.ep " << overlap << ": "
                                               << engine[k] << " s against " << est[k] << " s";
      ++k;
    }
    EXPECT_GT(est[1], est[0]) << "overlap.ep " << overlap;
    EXPECT_NEAR((engine[1] - engine[0]) / (est[1] - est[0]), 1, 0.1)
        << "overlap.ep " << overlap << ": the step engine's " << engine[1] - engine[0]
        << " s more against " << est[1] - est[0] << " s";
  }
}

TEST(RailOnly, NeedsRailsAndPxn) {
  try {
    (void)load(
        "cluster: {preset: llama3-like, gpus: 64, network: {rail_optimized: false, topology: "
        "rail_only}}\nmodel: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 64}\n");
    FAIL() << "rail_only on rack leaves accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.network.topology"), std::string::npos) << what;
    EXPECT_NE(what.find("rail_optimized: true"), std::string::npos) << what;
  }
  try {
    (void)load(h100("rail_only, pxn: false") +
               "model: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 64}\n");
    FAIL() << "rail_only without PXN accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.network.pxn"), std::string::npos) << what;
  }
}

// Expectation: the rail-only preset (32,768 H100, eight rails of two tiers of
// 128-port switches) loads, each rail a network of its own that attaches one NIC a
// node; a layout whose groups sit on their rails (tp 8 on nodes of 8, Megatron-LM's
// placement) pays nothing for the missing spine, and a rail switch's failure takes
// the 64 nodes it serves one NIC of, as a leaf's does (a node that loses a rail
// stops).
TEST(RailOnly, ThePresetAttachesEachRailOnItsOwnAndARailSwitchStopsItsNodes) {
  const auto s = load(
      "cluster: {preset: h100-rail-only-32k}\n"
      "model: {preset: llama3-70b}\n"
      "parallelism: {tp: 8, pp: 8, global_batch: 4096, zero: 1}\n"
      "faults: {processes: [{component: switch, domain: leaf, per_1000_domain_days: 1}]}\n");
  EXPECT_EQ(s.cluster.network.topology, models::scenario::Topology::rail_only);
  EXPECT_EQ(s.cluster.nodes(), 4096);
  EXPECT_EQ(models::scenario::network_endpoint_capacity(s.cluster.network,
                                                        models::scenario::nic_port_bw(s.cluster)),
            8192.0);
  for (const GroupKind g : {GroupKind::tp, GroupKind::dp, GroupKind::pp}) {
    const auto span = models::group_span(g, s);
    EXPECT_TRUE(span.nodes <= 1 || span.rails_match) << models::group_name(g);
  }
  EXPECT_EQ(models::scenario::domain_nodes(s, models::scenario::Domain::leaf), 64);
  EXPECT_GT(estimate(s, testing::h100()).step_time_s, 0);
  // The same tiers as a fat tree would have to join all 32,768 NICs in one tree.
  try {
    (void)load(
        "cluster: {preset: h100-rail-only-32k, network: {topology: fat_tree}}\n"
        "model: {preset: llama3-70b}\nparallelism: {tp: 8, pp: 8, global_batch: 4096}\n");
    FAIL() << "a two-tier fat tree of 128-port switches attached 32,768 NICs";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("32768 NIC ports"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim
