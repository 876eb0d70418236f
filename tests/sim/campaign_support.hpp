// What the campaign tests share: the shipped A100 profile, one seed of one
// policy with its events, and the events of one kind.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "myriad_source_paths.hpp"
#include "sim/campaign/campaign_event.hpp"
#include "sim/campaign/campaign_report.hpp"

namespace myriad::sim::campaign::support {

inline const DeviceProfile& a100() {
  static const DeviceProfile p = load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json");
  return p;
}

// Runs one seed (the event seed, 0) of the first policy, collecting its events.
inline RunResult run_logged(const models::scenario::Scenario& s, std::vector<CampaignEvent>& events,
                            double days = 1) {
  CampaignOptions o;
  o.days = days;
  o.seeds = 1;
  o.event_seed = 0;
  o.on_event = [&events](std::size_t policy, const CampaignEvent& e) {
    if (policy == 0) events.push_back(e);
  };
  return run_campaign(s, a100(), o).policies[0].runs[0];
}

inline std::vector<CampaignEvent> of_kind(const std::vector<CampaignEvent>& events, EventKind k) {
  std::vector<CampaignEvent> out;
  for (const auto& e : events) {
    if (e.kind == k) out.push_back(e);
  }
  return out;
}

inline double seconds_of(const RunResult& r, Cause c) {
  return r.seconds_by_cause[static_cast<std::size_t>(c)];
}

// A plane, spine or up port out for `window_s` at `degraded_s` a step against
// `healthy_s`: the job ran on (no interruption, no restart), the excess counted
// to the fabric, and one failure of a switch logged as `domain` `id`, with no
// nodes, not stopping the job, and `detail`.
inline void expect_fabric_slowdown(const RunResult& r, const std::vector<CampaignEvent>& events,
                                   double window_s, double healthy_s, double degraded_s,
                                   const std::string& domain, int id, const std::string& detail) {
  EXPECT_EQ(r.interruptions, 0);
  EXPECT_NEAR(seconds_of(r, Cause::fabric), window_s * (1 - healthy_s / degraded_s), 1e-6);
  EXPECT_EQ(seconds_of(r, Cause::restart), 0);
  EXPECT_EQ(r.failures_by_component[static_cast<std::size_t>(models::scenario::Component::switch_)],
            1);
  const auto failures = of_kind(events, EventKind::failure);
  ASSERT_EQ(failures.size(), 1U);
  EXPECT_EQ(failures[0].domain, domain);
  EXPECT_EQ(failures[0].id, id);
  EXPECT_EQ(failures[0].node_count, 0);
  EXPECT_FALSE(failures[0].interrupts);
  EXPECT_EQ(failures[0].duration_s, window_s);
  EXPECT_EQ(failures[0].detail, detail);
}

}  // namespace myriad::sim::campaign::support
