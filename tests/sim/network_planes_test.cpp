// Multi-plane fabrics (cluster.network.planes): each NIC's bandwidth split over
// one port on each of P independent copies of the tiers. A leaf port then serves
// P times as many NIC ports (breakout), so a plane's leaf covers P times as many
// nodes and fewer tiers join a cluster. By hand on 64-port switches.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/network_slowdown.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using testing::kShipped;

// 8 H100 a node, 8 rails of 400G NICs, three tiers of 64-port 400G switches at
// 1:1: a leaf has 32 ports down, a spine 32, the core 64.
models::scenario::Scenario fabric(int gpus, int planes, int tiers = 3) {
  std::string t = "    - {name: leaf, radix: 64, port_bandwidth: 400Gbps, latency: 500ns}\n";
  if (tiers > 2) t += "    - {name: spine, radix: 64, port_bandwidth: 400Gbps, latency: 500ns}\n";
  t += "    - {name: core, radix: 64, port_bandwidth: 400Gbps, latency: 500ns}\n";
  return models::scenario::load_scenario_text(
      "cluster:\n"
      "  gpu: H100\n"
      "  gpus: " +
          std::to_string(gpus) +
          "\n"
          "  nics_per_node: 8\n"
          "  nic_bandwidth: 400Gbps\n"
          "  network:\n"
          "    planes: " +
          std::to_string(planes) +
          "\n"
          "    tiers:\n" +
          t +
          "model: {preset: llama3-8b}\n"
          "parallelism: {tp: 8, global_batch: " +
          std::to_string(gpus / 8) + "}\n",
      "planes.yaml", kShipped);
}

TEST(NetworkPlanes, ALeafServesPlanesTimesTheNodes) {
  const auto one = fabric(16384, 1).cluster;
  const auto two = fabric(16384, 2).cluster;
  // One plane: 32 rail ports a leaf, 32 x 32 = 1,024 nodes under a spine group.
  EXPECT_EQ(subtree_nodes(one), (std::vector<double>{32, 1024, 65536}));
  // Two: each 400G leaf port breaks out into two of the NICs' 200G ports.
  EXPECT_EQ(subtree_nodes(two), (std::vector<double>{64, 2048, 131072}));
  EXPECT_DOUBLE_EQ(models::scenario::nic_port_bw(two), 400e9 / 8 / 2);
  // 2,048 nodes: joined by the core on one plane, by the spines on two, one
  // round trip through the core (2 x 500 ns) fewer.
  EXPECT_EQ(joining_tier(one, 2048), 2);
  EXPECT_EQ(joining_tier(two, 2048), 1);
  EXPECT_NEAR(hop_latency(one, 2048) - hop_latency(two, 2048), 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(models::scenario::network_endpoint_capacity(two.network, 25e9), 64.0 * 32 * 64);
}

// What two tiers attach: 32 x 64 = 2,048 NIC ports on one plane, twice that on
// two; 512 nodes of 8 NICs need 4,096.
TEST(NetworkPlanes, PlanesLetFewerTiersAttachTheNics) {
  try {
    (void)fabric(4096, 1, 2);
    ADD_FAILURE() << "4,096 NIC ports on a two-tier plane of 2,048 loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("attach at most 2048"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("or split the NICs over planes"), std::string::npos)
        << e.what();
  }
  const auto s = fabric(4096, 2, 2);
  EXPECT_DOUBLE_EQ(s.cluster.network.tiers[0].port_bw_Bps, 400e9 / 8);  // given
  // Where the ports are not given they are the NICs' ports on a plane.
  const auto derived = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64, network: {planes: 2}}\n"
      "model: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 8}\n",
      "derived.yaml", kShipped);
  EXPECT_DOUBLE_EQ(derived.cluster.network.tiers[0].port_bw_Bps, derived.cluster.nic_bw_Bps / 2);
}

// Data parallelism over 2,048 nodes: its ring's hops cross the core on one plane
// and not on two, so its latency, and the step, drop; the bandwidth is the NICs'
// either way.
TEST(NetworkPlanes, FewerTiersShortenTheDataParallelRing) {
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const models::Collective ar{"dp.grads", models::CollectiveKind::all_reduce, models::GroupKind::dp,
                              1e6};
  const models::GroupSpan g{2048, 1, 2048};
  const CommCost one = collective_cost(ar, g, fabric(16384, 1).cluster, h100);
  const CommCost two = collective_cost(ar, g, fabric(16384, 2).cluster, h100);
  EXPECT_LT(two.latency_s, one.latency_s);
  EXPECT_DOUBLE_EQ(two.busbw_Bps, one.busbw_Bps);
  EXPECT_LE(estimate(fabric(16384, 2), h100).step_time_s,
            estimate(fabric(16384, 1), h100).step_time_s);
}

// One of four planes down (cluster.network.planes_down): each NIC keeps its
// ports on the other three, 3/4 of its bandwidth, and the fabric's tiers lose as
// much, so a ring across nodes runs at 3/4 of its bus bandwidth with the same
// latency. An exposed data-parallel all-reduce slows the step in both engines,
// which still agree.
TEST(NetworkPlanes, APlaneDownLeavesEachNicItsPortsOnTheOthers) {
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const models::Collective ar{"dp.grads", models::CollectiveKind::all_reduce, models::GroupKind::dp,
                              1e9};
  const models::GroupSpan g{256, 1, 256};
  auto healthy = fabric(2048, 4);
  auto degraded = healthy;
  degraded.cluster.network.planes_down = 1;
  EXPECT_DOUBLE_EQ(models::scenario::nic_bw_in_service(degraded.cluster), 0.75 * 400e9 / 8);
  const CommCost full = collective_cost(ar, g, healthy.cluster, h100);
  const CommCost three = collective_cost(ar, g, degraded.cluster, h100);
  EXPECT_NEAR(three.busbw_Bps / full.busbw_Bps, 0.75, 1e-12);
  EXPECT_DOUBLE_EQ(three.latency_s, full.latency_s);
  for (auto* s : {&healthy, &degraded}) s->overlap.dp = false;
  testing::expect_both_engines_slower(healthy, degraded, h100);
}

// All planes down leaves nothing between the nodes: refused, naming the key.
TEST(NetworkPlanes, EveryPlaneDownIsRefused) {
  try {
    (void)models::scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 64, network: {planes: 2, planes_down: 2}}\n"
        "model: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 8}\n",
        "down.yaml", kShipped);
    ADD_FAILURE() << "every plane down loaded";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster.network.planes_down"), std::string::npos) << what;
    EXPECT_NE(what.find("2 of 2 planes down"), std::string::npos) << what;
  }
}

// Two tiers of 64-port switches at 1:1: a leaf has 32 ports up, one to each of
// the 32 core switches. tp 8, pp 2 on 256 nodes: stage 0 on leaves 0-3 (nodes
// 0-127, one rail each), stage 1 on leaves 4-7, so every pipeline transfer
// leaves its leaf, all of a leaf's NICs at once: at 1:1 nothing binds; with 8 of
// each leaf's 32 up ports down (a cable each, or 8 core switches) its uplinks
// carry 24/32 of its NICs' bandwidth and the transfers go 32/24 slower, in both
// engines.
TEST(UplinksDown, ASubtreesUplinksCarryTheShareInService) {
  auto healthy = fabric(2048, 1, 2);
  healthy.parallelism.pp = 2;
  healthy.parallelism.dp = 128;
  healthy.overlap.pp = false;
  auto degraded = healthy;
  degraded.cluster.network.tiers[0].uplinks_down = 8;
  EXPECT_DOUBLE_EQ(models::scenario::up_ports(healthy.cluster.network, 0), 32);
  EXPECT_DOUBLE_EQ(models::scenario::uplinks_in_service(degraded.cluster.network, 0), 0.75);
  EXPECT_DOUBLE_EQ(network_slowdown(healthy, Traffic::pp).factor, 1.0);
  const NetworkSlowdown slow = network_slowdown(degraded, Traffic::pp);
  EXPECT_NEAR(slow.factor, 32.0 / 24, 1e-12);
  EXPECT_EQ(slow.tier, 0);
  EXPECT_EQ(uplinks_bind(degraded.cluster), (std::vector<bool>{true}));
  testing::expect_both_engines_slower(healthy, degraded, testing::shipped_profile("H100"));
}

// Up ports down at the top tier, or all of a switch's, are refused naming the key.
TEST(UplinksDown, ImpossibleCountsAreRefused) {
  for (const auto& [tier, down, says] :
       {std::tuple{0, 32, "cuts its subtree off"}, std::tuple{1, 1, "the top tier"}}) {
    auto text =
        std::string(
            "cluster:\n  gpu: H100\n  gpus: 2048\n  nics_per_node: 8\n  nic_bandwidth: 400Gbps\n"
            "  network:\n    tiers:\n"
            "    - {name: leaf, radix: 64, port_bandwidth: 400Gbps, uplinks_down: ") +
        (tier == 0 ? std::to_string(down) : "0") +
        "}\n    - {name: core, radix: 64, port_bandwidth: 400Gbps, uplinks_down: " +
        (tier == 1 ? std::to_string(down) : "0") +
        "}\nmodel: {preset: llama3-8b}\nparallelism: {tp: 8, global_batch: 256}\n";
    try {
      (void)models::scenario::load_scenario_text(text, "down.yaml", kShipped);
      ADD_FAILURE() << "tier " << tier << ": " << down << " up ports down loaded";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cluster.network.tiers[" + std::to_string(tier) + "].uplinks_down"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace myriad::sim
