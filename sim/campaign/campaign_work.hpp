// How much work a campaign is before it starts: the events one run (a policy
// set and a seed) must at least handle, from the rates, the node count, the
// checkpoint interval and the duration, with the scenario key behind each share.
// Each failure clock, straggler onset and end, and checkpoint in the window is
// an event the engine handles (recoveries, repairs and uploads add more), so a
// campaign refused on these counts could not have finished within the bound.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/campaign/resolved_policy.hpp"

namespace myriad::sim::campaign {

// One run may handle this many events at most (a few seconds on one core at
// about 1-2 us an event); a whole campaign, every seed and policy set, 50 times
// that. Measured figures: docs/performance.md.
constexpr double kMaxEventsPerRun = 2e6;
constexpr double kMaxCampaignEvents = 1e8;

struct WorkShare {
  std::string key;  // the scenario key that drives it, e.g. faults.stragglers[0].per_1000_node_days
  double events = 0;
};

struct RunWork {
  double duration_s = 0;  // the shortest the run can last: the horizon, or the token target's
                          // compute time when it comes first
  std::vector<WorkShare> shares;
  [[nodiscard]] double events() const;
  [[nodiscard]] const WorkShare& largest() const;
};

// The events of one run of `policy` (policies[index]) over `duration_s` of
// simulated time, with `job_nodes` nodes in the job.
RunWork run_work(const scenario::Scenario& s, const ResolvedPolicy& policy, std::size_t index,
                 int job_nodes, double duration_s);

// Throws std::invalid_argument naming the figure, the bound and the key when a
// run, or the whole campaign (`runs` of them per policy set), is past its bound.
void check_campaign_work(const std::vector<RunWork>& by_policy,
                         const std::vector<std::string>& policy_names, std::size_t seeds);

}  // namespace myriad::sim::campaign
