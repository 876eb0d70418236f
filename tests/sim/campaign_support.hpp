// What the campaign tests share: the shipped A100 profile, one seed of one
// policy with its events, and the events of one kind.
#pragma once

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

}  // namespace myriad::sim::campaign::support
