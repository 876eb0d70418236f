// The campaign's event log at scale: levels that leave out the checkpoint
// routine, and one event per repair incident rather than one a node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/campaign/campaign_event.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/repair_incidents.hpp"

namespace myriad::sim::campaign {
namespace {

const scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

const DeviceProfile& a100() {
  static const DeviceProfile p = load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json");
  return p;
}

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
scenario::Scenario leaf_under_repair() {
  return scenario::load_scenario_text(R"(
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

}  // namespace
}  // namespace myriad::sim::campaign
