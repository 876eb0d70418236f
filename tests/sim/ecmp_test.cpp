// ECMP hash collisions (cluster.network.load_balancing: ecmp; sim/cost/ecmp.hpp):
// balls into bins worked out by hand, the published cases of docs/notes/ecmp.md,
// and a four-node fabric whose pipeline transfers saturate the leaves' up ports.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/ecmp.hpp"
#include "sim/cost/network_slowdown.hpp"
#include "sim/step/step_lowering.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using testing::kShipped;

TEST(Ecmp, BallsIntoBinsWorkedOutByHand) {
  // 2 flows on 2 ports: together half the time.
  const std::vector<HashedPorts> two = {{2, 2, 1}};
  EXPECT_DOUBLE_EQ(all_ports_within(two, 1), 0.5);
  EXPECT_NEAR(ecmp_slowdown(two, 1).expected, 1.5, 1e-12);
  // 3 on 3: apart 3!/27, all on one 3/27: 1 x 6/27 + 2 x 18/27 + 3 x 3/27 = 51/27.
  const std::vector<HashedPorts> three = {{3, 3, 1}};
  EXPECT_NEAR(ecmp_slowdown(three, 1).expected, 51.0 / 27, 1e-12);
  // Two switches alike: the busier of the two; apart on both only a quarter of the time.
  const std::vector<HashedPorts> pair = {{2, 2, 2}};
  EXPECT_NEAR(ecmp_slowdown(pair, 1).expected, 1.75, 1e-12);
  // Flows of half a port each: two on one port still run at their rate.
  EXPECT_DOUBLE_EQ(ecmp_slowdown(two, 0.5).expected, 1);
  EXPECT_THROW(ecmp_slowdown(two, 0), std::invalid_argument);
}

// Expectation: the cases docs/notes/ecmp.md s3 computed by the exact recursion and
// checked against a Monte Carlo (100 flows on 100 ports: 4.233) and Meta's
// reported busiest-over-mean above 1.2 for 1,000 flows on 16 ports (1.23 exact;
// here the Poisson form, within 1 %).
TEST(Ecmp, MatchesThePublishedCases) {
  const std::vector<HashedPorts> square = {{100, 100, 1}};
  EXPECT_NEAR(ecmp_slowdown(square, 1).expected, 4.233, 0.005);
  const std::vector<HashedPorts> meta = {{1000, 16, 1}};
  EXPECT_NEAR(ecmp_slowdown(meta, 16.0 / 1000).expected, 76.85 / 62.5, 0.012);
}

// Four nodes of 8 H100 and 8 rails, leaves of 4 ports (2 down, 2 up: 1:1) under
// 16-port spines; pipeline of 2 stages, one node a replica's stage: every transfer of stage
// 0 leaves its leaves. Each rail's leaf hashes its two NICs' 2 connections each (4
// flows) onto its 2 up ports, flows of half a port each; eight such leaves.
models::scenario::Scenario four_nodes(const std::string& network,
                                      const std::string& port = "400Gbps") {
  return models::scenario::load_scenario_text(
      "cluster:\n"
      "  gpu: H100\n"
      "  gpus: 32\n"
      "  nics_per_node: 8\n"
      "  nic_bandwidth: 400Gbps\n"
      "  network:\n" +
          network +
          "    tiers:\n"
          "    - {name: leaf, radix: 4, port_bandwidth: " +
          port +
          "}\n"
          "    - {name: spine, radix: 16, port_bandwidth: " +
          port +
          "}\n"
          "model: {preset: llama3-8b}\n"
          "parallelism: {tp: 8, pp: 2, global_batch: 16}\n",
      "ecmp.yaml", kShipped);
}

// Expectation (by hand): 4 flows on 2 ports is 2-2 with P 6/16, 3-1 with 8/16,
// 4-0 with 2/16; a port of k flows slows them to max(1, k / 2); the busiest of 8
// leaves: P(all <= 2) = (6/16)^8, P(all <= 3) = (14/16)^8, so the expectation is
// 1 x 0.00039 + 1.5 x 0.34322 + 2 x 0.65639 = 1.8280. Balanced (adaptive) the
// ports are exactly full: 1. Two queue pairs a connection (8 flows of a quarter
// port on 2 ports): 1.6094, MegaScale's and Meta's remedy.
TEST(Ecmp, AFabricAtItsLineRateSlowsByTheBusiestPort) {
  const auto adaptive = network_slowdown(four_nodes(""), Traffic::pp);
  EXPECT_DOUBLE_EQ(adaptive.factor, 1);
  EXPECT_EQ(adaptive.tier, -1);
  const auto hashed = network_slowdown(four_nodes("    load_balancing: ecmp\n"), Traffic::pp);
  EXPECT_TRUE(hashed.hashed);
  EXPECT_EQ(hashed.tier, 0);
  EXPECT_NEAR(hashed.factor, 1.8280, 1e-4);
  EXPECT_DOUBLE_EQ(hashed.balanced, 1);
  EXPECT_DOUBLE_EQ(hashed.low, 1.5);
  EXPECT_DOUBLE_EQ(hashed.high, 2);
  EXPECT_DOUBLE_EQ(hashed.flows_per_port, 2);
  const auto spread = network_slowdown(
      four_nodes("    load_balancing: ecmp\n    qps_per_connection: 2\n"), Traffic::pp);
  EXPECT_NEAR(spread.factor, 1.6094, 1e-4);
  EXPECT_LT(spread.factor, hashed.factor);
}

// Expectation (by hand): the same fabric as two planes of 200G ports, each NIC a
// port on each. NCCL gives every connection a queue pair on each port of the NIC
// (net_ib's connect.cc: qps_per_connection x ports), so each plane's rail leaf
// hashes what the single plane's did: its two NICs' 2 connections, 4 flows of
// half a 200G port, onto 2 up ports; now 16 such leaves, 8 a plane. The busiest of
// 16: 1 x (6/16)^16 + 1.5 x ((14/16)^16 - (6/16)^16) + 2 x (1 - (14/16)^16) =
// 1.9410. Had each connection ridden one plane, its 2 flows would fill their
// ports (2 on 2 ports: 2x, apart half the time) and a plane's leaf would see 2:
// 2 - 2^-16, nearly always the worst.
TEST(Ecmp, PlanesCarryEveryConnectionsQueuePairs) {
  const auto planes = network_slowdown(
      four_nodes("    load_balancing: ecmp\n    planes: 2\n", "200Gbps"), Traffic::pp);
  EXPECT_TRUE(planes.hashed);
  EXPECT_EQ(planes.tier, 0);
  EXPECT_NEAR(planes.factor, 1.9410, 1e-4);
  EXPECT_DOUBLE_EQ(planes.low, 1.5);
  EXPECT_DOUBLE_EQ(planes.high, 2);
  EXPECT_DOUBLE_EQ(planes.flows_per_port, 2);
  const auto one = network_slowdown(four_nodes("    load_balancing: ecmp\n"), Traffic::pp);
  EXPECT_GT(planes.factor, one.factor);  // twice the leaves, the busiest of more
}

// Expectation: the analytic engine's pipeline transfers take the factor (their
// NIC rate divided by it), so the step grows; the report says why; the step engine
// refuses rather than play balanced ports.
TEST(Ecmp, EstimatePaysItAndSimulateRefuses) {
  const auto plain = four_nodes("");
  const auto hashed = four_nodes("    load_balancing: ecmp\n");
  const StepReport a = estimate(plain, testing::h100());
  const StepReport e = estimate(hashed, testing::h100());
  EXPECT_GT(e.step_time_s, a.step_time_s);
  EXPECT_TRUE(testing::notes_say(e, "ECMP"));
  EXPECT_THROW(lower_step(hashed, testing::h100(), {}, false), std::invalid_argument);
}

TEST(Ecmp, QueuePairsWithoutHashingAreRefused) {
  EXPECT_THROW(four_nodes("    qps_per_connection: 4\n"), std::exception);
}

// 32 nodes of 8 H100 and 8 rails under three tiers: rail leaves of 4 nodes (4 up
// ports), aggregation switches of 4 leaves (4 up ports), spines joining the two
// pods; a pipeline of 2 stages, a replica's stages in different pods. Where every
// switch hashes alike (ecmp_hash: shared), an aggregation switch receives from
// each leaf only the flows whose hash picked the port to it, h = j mod 4, and its
// own choice h mod 4 is then the same j for all of them: its 8 flows of half a
// port (2 a port on average) all take one of its 4 ports, 8 x 0.5 = 4x slower,
// for every hash. Seeded per switch the leaves are the worst tier. With 3 up
// ports above 4, gcd 1: every port stays reachable, as seeded per switch.
models::scenario::Scenario three_tiers(const std::string& hash, int agg_radix = 8) {
  return models::scenario::load_scenario_text(
      "cluster:\n"
      "  gpu: H100\n"
      "  gpus: 256\n"
      "  nics_per_node: 8\n"
      "  nic_bandwidth: 400Gbps\n"
      "  network:\n"
      "    load_balancing: ecmp\n"
      "    ecmp_hash: " +
          hash +
          "\n"
          "    tiers:\n"
          "    - {name: leaf, radix: 8, port_bandwidth: 400Gbps}\n"
          "    - {name: agg, radix: " +
          std::to_string(agg_radix) +
          ", port_bandwidth: 400Gbps}\n"
          "    - {name: spine, radix: 64, port_bandwidth: 400Gbps}\n"
          "model: {preset: llama3-8b}\n"
          "parallelism: {tp: 8, pp: 2, global_batch: 64}\n",
      "ecmp.yaml", kShipped);
}

TEST(Ecmp, SharedHashesPolarizeTheTiersAbove) {
  const auto seeded = network_slowdown(three_tiers("per_switch"), Traffic::pp);
  const auto shared = network_slowdown(three_tiers("shared"), Traffic::pp);
  EXPECT_EQ(seeded.tier, 0);
  EXPECT_EQ(shared.tier, 1);
  EXPECT_DOUBLE_EQ(shared.factor, 4);
  EXPECT_DOUBLE_EQ(shared.low, 4);
  EXPECT_DOUBLE_EQ(shared.high, 4);
  EXPECT_DOUBLE_EQ(shared.flows_per_port, 2);
  EXPECT_LT(seeded.factor, shared.factor);
  EXPECT_GT(estimate(three_tiers("shared"), testing::h100()).step_time_s,
            estimate(three_tiers("per_switch"), testing::h100()).step_time_s);
  // gcd(3, 4) = 1: nothing to polarize.
  const auto coprime = network_slowdown(three_tiers("shared", 6), Traffic::pp);
  const auto coprime_seeded = network_slowdown(three_tiers("per_switch", 6), Traffic::pp);
  EXPECT_DOUBLE_EQ(coprime.factor, coprime_seeded.factor);
  EXPECT_EQ(coprime.tier, coprime_seeded.tier);
}

TEST(Ecmp, HowSwitchesSeedTheirHashNeedsHashing) {
  EXPECT_THROW(four_nodes("    ecmp_hash: shared\n"), std::exception);
}

}  // namespace
}  // namespace myriad::sim
