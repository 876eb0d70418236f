// The campaign's event log at scale: levels that leave out the checkpoint
// routine, one event per repair incident rather than one a node, and the
// failure timeline read from the log.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/campaign/campaign_event.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/failure_timeline.hpp"
#include "sim/campaign/repair_incidents.hpp"
#include "tests/sim/campaign_support.hpp"

namespace myriad::sim::campaign {
namespace {

const models::scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

using support::a100;

TEST(EventLevels, FailuresLeaveOutOnlyTheCheckpointRoutine) {
  int routine_kinds = 0;
  for (std::size_t k = 0; k < kEventNames.size(); ++k) {
    const auto kind = static_cast<EventKind>(k);
    const std::string name(event_name(kind));
    const bool checkpointing = name.rfind("checkpoint_", 0) == 0 || name.rfind("upload_", 0) == 0 ||
                               name == "peer_copy_done";
    EXPECT_EQ(routine(kind), checkpointing) << name;
    EXPECT_TRUE(logged_at(EventLevel::all, kind)) << name;
    EXPECT_EQ(logged_at(EventLevel::failures, kind), !checkpointing) << name;
    routine_kinds += checkpointing ? 1 : 0;
  }
  EXPECT_EQ(routine_kinds, 7);
  EXPECT_EQ(kEventLevelNames[static_cast<std::size_t>(EventLevel::failures)], "failures");
  EXPECT_EQ(kEventLevelNames[static_cast<std::size_t>(EventLevel::all)], "all");
}

TEST(RepairIncidents, OneEventAnIncidentWithTheNodesThatCameBack) {
  RepairIncidents r;
  r.open("switch", "pod", 0, 0, 4);
  for (int n = 0; n < 4; ++n) r.sent(n);
  // Node 2 fails again for longer: it leaves the pod's incident for its own.
  r.open("gpu", "node", 2, 2, 1);
  r.sent(2);
  EXPECT_EQ(r.open_incidents(), 2U);
  const auto pod = r.back(0, 100);
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(pod->kind, EventKind::repaired);
  EXPECT_EQ(pod->time_s, 100);
  EXPECT_EQ(pod->component, "switch");
  EXPECT_EQ(pod->domain, "pod");
  EXPECT_EQ(pod->id, 0);
  EXPECT_EQ(pod->first_node, 0);
  EXPECT_EQ(pod->node_count, 4);
  EXPECT_EQ(pod->detail, "3 of its 4 nodes back; the others under a longer repair");
  EXPECT_FALSE(r.back(1, 100).has_value());
  EXPECT_FALSE(r.back(3, 100).has_value());
  EXPECT_EQ(r.open_incidents(), 1U);  // the pod's is closed
  const auto node = r.back(2, 200);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->domain, "node");
  EXPECT_EQ(node->first_node, 2);
  EXPECT_EQ(node->node_count, 1);
  EXPECT_EQ(node->detail, "");
  EXPECT_EQ(r.open_incidents(), 0U);
  // A node no incident sent (nothing logged when it left) returns nothing.
  EXPECT_FALSE(r.back(7, 300).has_value());
}

// 16 nodes of 8 A100 under leaves of 8 nodes, 8 spares (leaf 2); no random
// failures: node 9 fails at 9 h for 5 h, its leaf (nodes 8-15) at 10 h for 2 h.
models::scenario::Scenario leaf_under_repair() {
  return models::scenario::load_scenario_text(R"(
cluster:
  preset: selene-like
  gpus: 128
  network:
    rail_optimized: true
    tiers:
      - {name: leaf, radix: 16, oversubscription: 1}
      - {name: spine, radix: 16}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
faults:
  processes: []
  events:
    - {at: 9h, node: 9, component: gpu, repair: 5h}
    - {at: 10h, domain: leaf, id: 1, repair: 2h}
policies: [{hot_spares: 8, checkpoint_rule: fixed, checkpoint_interval: 100h}]
)",
                                              "leaf.yaml", kShipped);
}

TEST(RepairIncidents, ALeafComesBackAsOneEventItsLongerRepairAsAnother) {
  const auto s = leaf_under_repair();
  CampaignOptions o;
  o.days = 1;
  o.seeds = 1;
  o.event_seed = 0;
  std::vector<CampaignEvent> repaired;
  o.on_event = [&repaired](std::size_t, const CampaignEvent& e) {
    if (e.kind == EventKind::repaired) repaired.push_back(e);
  };
  run_campaign(s, a100(), o);
  ASSERT_EQ(repaired.size(), 2U);
  EXPECT_EQ(repaired[0].time_s, 12 * 3600);
  EXPECT_EQ(repaired[0].domain, "leaf");
  EXPECT_EQ(repaired[0].first_node, 8);
  EXPECT_EQ(repaired[0].node_count, 8);
  EXPECT_EQ(repaired[0].detail, "7 of its 8 nodes back; the others under a longer repair");
  EXPECT_EQ(repaired[1].time_s, 14 * 3600);
  EXPECT_EQ(repaired[1].domain, "node");
  EXPECT_EQ(repaired[1].component, "gpu");
  EXPECT_EQ(repaired[1].first_node, 9);
  EXPECT_EQ(repaired[1].node_count, 1);
}

CampaignEvent at(double time_s, EventKind kind, bool interrupts = false, double lost_work_s = 0) {
  CampaignEvent e;
  e.time_s = time_s;
  e.kind = kind;
  e.interrupts = interrupts;
  e.lost_work_s = lost_work_s;
  e.component = "gpu";
  e.domain = "node";
  e.first_node = 3;
  e.node_count = 1;
  return e;
}

TEST(FailureTimeline, DownUntilRunningAgainOrTheNextInterruptionOrTheEnd) {
  FailureTimeline t;
  t.add(at(100, EventKind::failure, true));
  t.add(at(100, EventKind::rollback, false, 20));
  t.add(at(400, EventKind::detected));
  t.add(at(700, EventKind::restart));
  t.add(at(1000, EventKind::running));
  t.add(at(1500, EventKind::failure, false));  // a spare: the job runs on
  // A failure during recovery: the recovery starts over, the next one's downtime.
  t.add(at(2000, EventKind::failure, true));
  t.add(at(2000, EventKind::rollback, false, 5));
  t.add(at(2300, EventKind::failure, true));
  t.add(at(2300, EventKind::rollback, false, 0));
  t.add(at(3000, EventKind::running));
  t.add(at(4500, EventKind::eviction, true));
  t.end(5000);
  ASSERT_EQ(t.kept().size(), 4U);
  EXPECT_EQ(t.interruptions(), 4);
  const auto& k = t.kept();
  EXPECT_EQ(k[0].start_s, 100);
  EXPECT_EQ(k[0].downtime_s, 900);
  EXPECT_EQ(k[0].lost_work_s, 20);
  EXPECT_EQ(k[0].cause, "gpu");
  EXPECT_EQ(k[0].first_node, 3);
  EXPECT_EQ(k[1].downtime_s, 300);
  EXPECT_EQ(k[1].lost_work_s, 5);
  EXPECT_EQ(k[2].downtime_s, 700);
  EXPECT_EQ(k[3].cause, "eviction");
  EXPECT_EQ(k[3].downtime_s, 500);  // still down when the run ended
  EXPECT_EQ(t.lost_s(), 920 + 305 + 700 + 500);
}

TEST(FailureTimeline, KeepsTheFirstInterruptionsAndCountsThemAll) {
  FailureTimeline t;
  const std::size_t n = FailureTimeline::kKept + 3;
  for (std::size_t i = 0; i < n; ++i) {
    t.add(at(10.0 * static_cast<double>(i), EventKind::failure, true));
    t.add(at(10.0 * static_cast<double>(i) + 1, EventKind::running));
  }
  t.end(1e9);
  EXPECT_EQ(t.kept().size(), FailureTimeline::kKept);
  EXPECT_EQ(t.interruptions(), static_cast<long>(n));
  EXPECT_DOUBLE_EQ(t.lost_s(), static_cast<double>(n));
}

// Random GPU and software failures and slow nodes on 16 nodes: the timeline
// of a run adds up to the hours its result loses to detection, waiting for
// repairs and restarts (the downtime), and to work rolled back.
TEST(FailureTimeline, AddsUpToTheRunsHoursLostByCause) {
  const auto s = models::scenario::load_scenario_text(R"(
cluster: {preset: selene-like, gpus: 128}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
faults:
  processes:
    - {component: gpu, per_1000_node_days: 200, distribution: weibull, shape: 0.8}
    - {component: software, per_1000_node_days: 100}
  stragglers:
    - {name: slow gpu, per_1000_node_days: 300, duration: 2h, slowdown: 1.3}
policies:
  - {name: wait, repair_time: 6h}
  - {name: spares, hot_spares: 4, repair_time: 6h}
  - {name: shrink, no_spare: shrink, repair_time: 6h, straggler_action: evict}
)",
                                                      "busy.yaml", kShipped);
  CampaignOptions o;
  o.days = 20;
  o.seeds = 2;
  o.event_seed = 1;
  std::vector<FailureTimeline> timelines(s.policies.size());
  o.on_event = [&timelines](std::size_t p, const CampaignEvent& e) { timelines[p].add(e); };
  const CampaignReport report = run_campaign(s, a100(), o);
  const auto cause_s = [](const RunResult& r, Cause c) {
    return r.seconds_by_cause[static_cast<std::size_t>(c)];
  };
  for (std::size_t p = 0; p < timelines.size(); ++p) {
    const RunResult& r = report.policies[p].runs[1];
    timelines[p].end(r.wall_s);
    double down = 0;
    double rolled_back = 0;
    for (const auto& i : timelines[p].kept()) {
      down += i.downtime_s;
      rolled_back += i.lost_work_s;
    }
    const double expected_down =
        cause_s(r, Cause::detection) + cause_s(r, Cause::repair_wait) + cause_s(r, Cause::restart);
    EXPECT_GT(r.interruptions, 10) << s.policies[p].name;
    EXPECT_EQ(timelines[p].interruptions(), r.interruptions) << s.policies[p].name;
    EXPECT_NEAR(down, expected_down, 1e-9 * r.wall_s) << s.policies[p].name;
    EXPECT_NEAR(rolled_back, cause_s(r, Cause::lost_work), 1e-9 * r.wall_s) << s.policies[p].name;
  }
}

}  // namespace
}  // namespace myriad::sim::campaign
