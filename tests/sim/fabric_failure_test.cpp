// Spines and up ports failing in a campaign (issue 40 item 6): where they land
// (models/scenario/fabric_domains.hpp), the worst switch's up ports out
// (sim/campaign/fabric_ports.hpp), and the job running on at the step time of
// the fabric with that many out (cluster.network.tiers[i].uplinks_down, priced
// by the analytic engine) until they are back, or waiting while a switch has
// none left.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/scenario/fabric_domains.hpp"
#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/campaign_work.hpp"
#include "sim/campaign/fabric_ports.hpp"
#include "sim/campaign/resolved_policy.hpp"
#include "tests/sim/campaign_support.hpp"

namespace myriad::sim::campaign {
namespace {

using models::scenario::Domain;
using support::a100;
using support::of_kind;
using support::run_logged;
using support::seconds_of;

const models::scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

// 16 DGX A100 nodes on a rail-optimized two-tier fat tree of 16-port switches:
// on each of the 8 rails, two leaves of 8 nodes with 8 up ports each, under 8
// spines. Two stages, each on one leaf's nodes: every pipeline transfer leaves
// its leaf, 8 at once on each rail.
// The cluster, model and layout of the tests below.
const char* const kTwoLeaves = R"(
cluster:
  preset: selene-like
  gpus: 128
  network:
    tiers:
      - {name: leaf, radix: 16, oversubscription: 1}
      - {name: spine, radix: 16}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 2, global_batch: 64}
overlap: {dp: false, pp: false}
)";

models::scenario::Scenario two_leaves(const std::string& extra) {
  return models::scenario::load_scenario_text(kTwoLeaves + extra, "fabric.yaml", kShipped);
}

double step_with_uplinks_down(models::scenario::Scenario s, int down) {
  s.cluster.network.tiers[0].uplinks_down = down;
  return estimate(s, a100()).step_time_s;
}

// Expectation, by hand: the Llama-3-like cluster (not rail-optimized: a ToR of
// 32 ports, 16 down to 2 nodes' NICs, 16 up; pods of 224 racks under switches
// of 256 ports at 1:7, 32 up) has 1,024 ToRs with 16,384 up ports, and 5 pods of
// 16 tier-1 switches; the rail-optimized fabric above has 8 x 2 leaves of 8 up
// ports and 8 x 8 spines.
TEST(FabricDomains, SwitchesAndPortsAsTheFatTreeWiresThem) {
  auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 16384}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, global_batch: 2048}\n",
      "llama.yaml", kShipped);
  const auto tor = models::scenario::fabric_tier(s.cluster, 0);
  EXPECT_EQ(tor.nodes_per_subtree, 2);
  EXPECT_EQ(tor.switches, 1024);
  EXPECT_EQ(tor.up_ports, 16);
  const auto pod = models::scenario::fabric_tier(s.cluster, 1);
  EXPECT_EQ(pod.nodes_per_subtree, 448);
  EXPECT_EQ(pod.subtrees, 5);
  EXPECT_EQ(pod.per_lane, 16);
  EXPECT_EQ(pod.switches, 80);
  EXPECT_EQ(pod.up_ports, 32);
  EXPECT_EQ(models::scenario::fabric_units(s.cluster, Domain::uplink, 0), 16384);
  EXPECT_EQ(models::scenario::fabric_units(s.cluster, Domain::spine, 1), 80);
  EXPECT_EQ(models::scenario::fabric_units(s.cluster, Domain::uplink, 2), 0);  // the top
  EXPECT_EQ(models::scenario::fabric_units(s.cluster, Domain::spine, 0), 0);   // leaves
  const auto f = two_leaves("");
  EXPECT_EQ(models::scenario::fabric_lanes(f.cluster), 8);
  EXPECT_EQ(models::scenario::fabric_units(f.cluster, Domain::uplink, 0), 8 * 2 * 8);
  EXPECT_EQ(models::scenario::fabric_units(f.cluster, Domain::spine, 1), 8 * 8);
}

// Expectation: a spine takes one up port from each leaf of its rail (the two
// of them); an up port, from its own leaf; the worst leaf sets the count, and a
// leaf with none left cuts its nodes off.
TEST(FabricDomains, TheWorstSwitchCountsItsUpPortsOut) {
  const auto s = two_leaves("");
  FabricPorts f(s);
  EXPECT_FALSE(f.degraded());
  ASSERT_TRUE(f.fail(Domain::spine, 1, 9));  // rail 1's second spine
  EXPECT_FALSE(f.fail(Domain::spine, 1, 9));
  EXPECT_EQ(f.uplinks_down()[0], 1);
  // Leaf (position 1, rail 1) is switch 1 x 8 + 1 = 9: its ports 72 to 79.
  ASSERT_TRUE(f.fail(Domain::uplink, 0, 72));
  EXPECT_EQ(f.uplinks_down()[0], 2);
  ASSERT_TRUE(f.fail(Domain::uplink, 0, 0));  // another leaf's
  EXPECT_EQ(f.uplinks_down()[0], 2);
  EXPECT_EQ(f.describe(0), "tier 0: 2 of 8 up ports out on the worst switch");
  for (long long port = 73; port < 78; ++port) f.fail(Domain::uplink, 0, port);
  EXPECT_FALSE(f.cut_off());
  f.fail(Domain::uplink, 0, 78);  // its eighth out: the spine's and seven ports
  EXPECT_TRUE(f.cut_off());
  f.repair(Domain::spine, 1, 9);
  EXPECT_FALSE(f.cut_off());
  EXPECT_EQ(f.uplinks_down()[0], 7);
}

// A spine down from 10 h to 12 h: two hours at the step time of the fabric with
// one up port out on each leaf of its rail, the excess over the healthy step
// lost to the fabric; no node stops.
TEST(FabricFailures, ASpineDownSlowsTheJobWithoutStoppingIt) {
  const auto s = two_leaves(R"(
faults:
  processes: []
  events: [{at: 10h, domain: spine, id: 3, repair: 2h}]
policies: [{checkpoint_rule: fixed, checkpoint_interval: 100h}]
)");
  const double healthy_s = estimate(s, a100()).step_time_s;
  const double degraded_s = step_with_uplinks_down(s, 1);
  ASSERT_GT(degraded_s, healthy_s);  // the pipeline transfers bind the leaves' up ports
  std::vector<CampaignEvent> events;
  const RunResult r = run_logged(s, events);
  support::expect_fabric_slowdown(r, events, 7200, healthy_s, degraded_s, "spine", 3,
                                  "injected; tier 0: 1 of 8 up ports out on the worst switch");
  const auto back = of_kind(events, EventKind::port_repaired);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].time_s, 12 * 3600);
  EXPECT_EQ(back[0].domain, "spine");
  EXPECT_EQ(back[0].detail, "tier 0: 0 of 8 up ports out on the worst switch");
}

// Every up port of leaf 0 out by 11 h: its nodes are cut off, the job stops
// and, after detection, waits for the first port back at 12 h.
TEST(FabricFailures, ALeafWithoutUpPortsStopsTheJobUntilOneIsBack) {
  std::string events = "  events:\n";
  for (int port = 0; port < 8; ++port) {
    events += "    - {at: " + std::to_string(10 * 60 + port) +
              "min, domain: uplink, id: " + std::to_string(port) +
              ", repair: " + std::to_string(2 * 60 - port) + "min}\n";
  }
  const auto s = two_leaves("faults:\n  processes: []\n" + events +
                            "policies: [{checkpoint_rule: fixed, checkpoint_interval: 100h, "
                            "detection: 5min, diagnosis: 5min}]\n");
  std::vector<CampaignEvent> log;
  const RunResult r = run_logged(s, log);
  EXPECT_EQ(r.interruptions, 1);
  const auto failures = of_kind(log, EventKind::failure);
  ASSERT_EQ(failures.size(), 8U);
  for (std::size_t i = 0; i + 1 < failures.size(); ++i) EXPECT_FALSE(failures[i].interrupts);
  EXPECT_TRUE(failures[7].interrupts);
  EXPECT_EQ(failures[6].detail, "injected; tier 0: 7 of 8 up ports out on the worst switch");
  // Down at 10:07, detected at 10:17; every port is back at 12:00.
  EXPECT_NEAR(seconds_of(r, Cause::repair_wait), 3600 + 43 * 60, 1e-6);
  const auto restarts = of_kind(log, EventKind::restart);
  ASSERT_EQ(restarts.size(), 1U);
  EXPECT_EQ(restarts[0].time_s, 12 * 3600);
}

TEST(FabricFailures, NeedATierWithSuchSwitchesAndOneClock) {
  const auto refused = [](const std::string& yaml, const std::string& want) {
    try {
      (void)two_leaves(yaml);
      ADD_FAILURE() << "loaded: " << yaml;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  refused("faults: {events: [{at: 1h, domain: spine, tier: 0, id: 0}]}\n",
          "a spine is a switch above the leaves: tier 1 or above");
  refused("faults: {events: [{at: 1h, domain: uplink, tier: 1, id: 0}]}\n",
          "tier 1 is the top tier: its switches have no up ports");
  refused("faults: {events: [{at: 1h, domain: uplink, tier: 2, id: 0}]}\n",
          "tier 2 does not exist: cluster.network has 2 (0 to 1)");
  refused("faults: {events: [{at: 1h, domain: uplink, id: 128}]}\n",
          "uplink 128 does not exist: tier 0 has 128 up ports (0 to 127)");
  refused("faults: {events: [{at: 1h, domain: leaf, tier: 0, id: 0}]}\n",
          "applies to domain spine and uplink");
  refused("faults: {events: [{at: 1h, domain: spine, id: 0, slowdown: 2, until: 2h}]}\n",
          "applies to a slow node (node: N), not a spine");
  refused("faults: {events: [{at: 1h, domain: spine, id: 0, replace_node: false}]}\n",
          "a spine is out until it is repaired");
  refused(
      "faults: {processes: [{component: link, domain: uplink, per_1000_domain_days: 1, "
      "distribution: weibull, shape: 0.7}]}\n",
      "a uplink process runs one clock over all its up ports: exponential lifetimes only");
}

// Random spine failures: one clock over the 64 spines, a failure drawn on a
// spine that is out already being none.
TEST(FabricFailures, RandomSpineFailuresRunOneClockOverTheSpines) {
  const auto s = two_leaves(R"(
faults:
  processes: [{component: switch, domain: spine, per_1000_domain_days: 1000}]
policies: [{repair_time: 1min, checkpoint_rule: fixed, checkpoint_interval: 100h}]
)");
  std::vector<CampaignEvent> events;
  const RunResult r = run_logged(s, events, 10);
  const auto failures = of_kind(events, EventKind::failure);
  // 64 spines x 1 a day x 10 days.
  EXPECT_NEAR(static_cast<double>(failures.size()), 640, 3 * std::sqrt(640.0));
  EXPECT_EQ(of_kind(events, EventKind::port_repaired).size(), failures.size());
  EXPECT_EQ(r.interruptions, 0);
  EXPECT_GT(seconds_of(r, Cause::fabric), 0);
}

// Expectation: the work a campaign is checked against counts a spine process's
// clock over all 64 spines: 64 x 1 a day x 10 days.
TEST(FabricFailures, AFabricProcessesWorkCountsEverySpine) {
  const auto s = two_leaves(
      "faults: {processes: [{component: switch, domain: spine, per_1000_domain_days: 1000}]}\n");
  const RunWork w = run_work(s, resolve_policy(s, s.policies[0]), 0, 16, 10 * 86400.0);
  ASSERT_FALSE(w.shares.empty());
  EXPECT_EQ(w.shares[0].key, "faults.processes[0].per_1000_domain_days");
  EXPECT_NEAR(w.shares[0].events, 640, 1e-9);
}

// A replayed log's spine and uplink rows: the tier column where given, the
// domain's default where empty; a tier on a node's row is refused at its line.
TEST(FabricFailures, AReplayedLogNamesTheTier) {
  const auto dir = std::filesystem::temp_directory_path() / "myriad_fabric_replay_test";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& rows) {
    std::ofstream(dir / "fabric.csv") << "time,component,id,duration,domain,tier\n" << rows;
    std::ofstream(dir / "fabric.yaml")
        << kTwoLeaves << "faults: {processes: [], replay: fabric.csv}\n";
  };
  write("1h,switch,3,1h,spine,1\n2h,link,72,1h,uplink,\n");
  const auto s = models::scenario::load_scenario((dir / "fabric.yaml").string(), kShipped);
  ASSERT_EQ(s.faults.replayed.size(), 2U);
  EXPECT_EQ(s.faults.replayed[0].tier, 1);
  EXPECT_EQ(s.faults.replayed[1].tier, 0);
  std::vector<CampaignEvent> events;
  const RunResult r = run_logged(s, events);
  EXPECT_EQ(r.interruptions, 0);
  const auto failures = of_kind(events, EventKind::failure);
  ASSERT_EQ(failures.size(), 2U);
  EXPECT_EQ(failures[0].domain, "spine");
  EXPECT_EQ(failures[1].domain, "uplink");
  EXPECT_NE(failures[1].detail.find("fabric.csv:3; tier 0: 1 of 8 up ports out"), std::string::npos)
      << failures[1].detail;
  write("1h,gpu,3,1h,node,0\n");
  try {
    (void)models::scenario::load_scenario((dir / "fabric.yaml").string(), kShipped);
    ADD_FAILURE() << "a node's row with a tier loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "fabric.csv:2:18: error: faults.replay: column 'tier': applies to domain spine "
                  "and uplink"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace myriad::sim::campaign
