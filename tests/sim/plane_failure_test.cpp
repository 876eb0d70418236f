// Planes of a multi-plane fabric failing in a campaign (issue 40 item 6): no node
// stops, the job runs on at the step time of the fabric with the plane out
// (cluster.network.planes_down, priced by the analytic engine) until the plane
// is repaired, and waits while every plane is down.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/campaign_work.hpp"
#include "sim/campaign/resolved_policy.hpp"
#include "tests/sim/campaign_support.hpp"

namespace myriad::sim::campaign {
namespace {

const models::scenario::LoadOptions kPlanesShipped{{MYRIAD_SCENARIO_DIR}};

using support::a100;
using support::of_kind;
using support::run_logged;
using support::seconds_of;

// GPT-3 175B on 16 nodes of 8 A100, their 200G NICs as two 100G ports on two
// planes of 16-port switches; pipeline transfers cross the nodes.
models::scenario::Scenario two_planes(const std::string& extra) {
  return models::scenario::load_scenario_text(R"(
cluster:
  preset: selene-like
  gpus: 128
  network:
    rail_optimized: true
    planes: 2
    tiers:
      - {name: leaf, radix: 16, oversubscription: 1}
      - {name: spine, radix: 16}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
overlap: {dp: false}
)" + extra,
                                              "planes.yaml", kPlanesShipped);
}

// Plane 1 down from 10 h to 12 h: two hours at the step time of one plane,
// whose excess over the healthy step is the time lost to the fabric.
TEST(PlaneFailures, APlaneDownSlowsTheJobWithoutStoppingIt) {
  const auto s = two_planes(R"(
faults:
  processes: []
  events: [{at: 10h, domain: plane, id: 1, repair: 2h}]
policies: [{checkpoint_rule: fixed, checkpoint_interval: 100h}]
)");
  auto degraded = s;
  degraded.cluster.network.planes_down = 1;
  const double healthy_s = estimate(s, a100()).step_time_s;
  const double one_plane_s = estimate(degraded, a100()).step_time_s;
  ASSERT_GT(one_plane_s, healthy_s);
  std::vector<CampaignEvent> events;
  const RunResult r = run_logged(s, events);
  support::expect_fabric_slowdown(r, events, 7200, healthy_s, one_plane_s, "plane", 1,
                                  "injected; 1 of 2 planes down");
  const auto back = of_kind(events, EventKind::plane_repaired);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].time_s, 12 * 3600);
  EXPECT_EQ(back[0].id, 1);
}

// Both planes down from 11 h: the job stops and, after detection, waits for
// plane 0, back at 12 h.
TEST(PlaneFailures, EveryPlaneDownStopsTheJobUntilOneIsBack) {
  const auto s = two_planes(R"(
faults:
  processes: []
  events:
    - {at: 10h, domain: plane, id: 0, repair: 2h}
    - {at: 11h, domain: plane, id: 1, repair: 2h}
policies: [{checkpoint_rule: fixed, checkpoint_interval: 100h, detection: 5min, diagnosis: 5min}]
)");
  std::vector<CampaignEvent> events;
  const RunResult r = run_logged(s, events);
  EXPECT_EQ(r.interruptions, 1);
  const auto failures = of_kind(events, EventKind::failure);
  ASSERT_EQ(failures.size(), 2U);
  EXPECT_FALSE(failures[0].interrupts);
  EXPECT_TRUE(failures[1].interrupts);
  EXPECT_NEAR(seconds_of(r, Cause::repair_wait), 3600 - 600, 1e-6);
  const auto restarts = of_kind(events, EventKind::restart);
  ASSERT_EQ(restarts.size(), 1U);
  EXPECT_EQ(restarts[0].time_s, 12 * 3600);
}

TEST(PlaneFailures, NeedSeveralPlanesAndARepair) {
  const auto refused = [](const std::string& text, const std::string& want) {
    try {
      (void)models::scenario::load_scenario_text(text, "bad.yaml", kPlanesShipped);
      ADD_FAILURE() << "loaded: " << text;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  const std::string one_plane =
      "cluster: {preset: selene-like, gpus: 128}\nmodel: {preset: gpt3-175b-megatron}\n"
      "parallelism: {tp: 8, pp: 8, global_batch: 64}\n";
  refused(one_plane + "faults: {events: [{at: 1h, domain: plane, id: 0}]}\n",
          "planes need cluster.network.planes of 2 or more");
  refused(one_plane +
              "faults: {processes: [{component: switch, domain: plane, "
              "per_1000_domain_days: 10}]}\n",
          "planes need cluster.network.planes of 2 or more");
  const std::string yaml = "faults: {events: [{at: 1h, domain: plane, id: 2}]}\n";
  try {
    (void)two_planes(yaml);
    ADD_FAILURE() << "plane 2 of 2 loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("plane 2 does not exist: the fabric has 2 (0 to 1)"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)two_planes("faults: {events: [{at: 1h, domain: plane, id: 0, replace_node: false}]}\n");
    ADD_FAILURE() << "a plane back at once loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("a plane is out until it is repaired"), std::string::npos)
        << e.what();
  }
}

// Expectation: the work a campaign is checked against counts a clock a plane:
// 2 planes x 1 a day x 10 days.
TEST(PlaneFailures, APlaneProcessesWorkCountsEveryPlane) {
  const auto s = two_planes(
      "faults: {processes: [{component: switch, domain: plane, per_1000_domain_days: 1000}]}\n");
  const RunWork w = run_work(s, resolve_policy(s, s.policies[0]), 0, 16, 10 * 86400.0);
  ASSERT_FALSE(w.shares.empty());
  EXPECT_NEAR(w.shares[0].events, 20, 1e-9);
}

// Random plane failures: one clock a plane, stopped while it is out.
TEST(PlaneFailures, RandomPlaneFailuresRunOneClockAPlane) {
  const auto s = two_planes(R"(
faults:
  processes: [{component: switch, domain: plane, per_1000_domain_days: 10000}]
policies: [{repair_time: 1min, checkpoint_rule: fixed, checkpoint_interval: 100h}]
)");
  std::vector<CampaignEvent> events;
  CampaignOptions o;
  o.days = 10;
  o.seeds = 1;
  o.event_seed = 0;
  o.on_event = [&events](std::size_t, const CampaignEvent& e) { events.push_back(e); };
  const RunResult r = run_campaign(s, a100(), o).policies[0].runs[0];
  const auto failures = of_kind(events, EventKind::failure);
  // 2 planes x 10 a day x 10 days.
  EXPECT_NEAR(static_cast<double>(failures.size()), 200, 3 * std::sqrt(200.0));
  EXPECT_EQ(of_kind(events, EventKind::plane_repaired).size(), failures.size());
  EXPECT_GT(seconds_of(r, Cause::fabric), 0);
}

}  // namespace
}  // namespace myriad::sim::campaign
