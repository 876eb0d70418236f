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

// What an event costs the engine, by kind, in seconds of one core: measured on
// the 2-core development machine, 2026-12-04, on the 405B campaign example
// (`campaign --threads 1`, user time over the events counted here): a straggler
// onset or end 1.0 us (the slowest node is found again), a failure clock
// 0.27 us, a checkpoint 0.14 us (no queue: the loop's own timer).
constexpr double kStragglerEventCost_s = 1.0e-6;
constexpr double kFailureEventCost_s = 0.27e-6;
constexpr double kCheckpointCost_s = 0.14e-6;
// The bounds: a run at most 10 s of computing, a campaign (every seed and
// policy set) at most 10 minutes of one core, fewer minutes on more threads.
constexpr double kMaxRunCompute_s = 10;
constexpr double kMaxCampaignCompute_s = 600;

struct WorkShare {
  std::string key;  // the scenario key that drives it, e.g. faults.stragglers[0].per_1000_node_days
  double events = 0;
  double cost_s = 0;  // what one costs (k*Cost_s above)
};

struct RunWork {
  double duration_s = 0;  // the shortest the run can last: the horizon, or the token target's
                          // compute time when it comes first
  std::vector<WorkShare> shares;
  [[nodiscard]] double events() const;
  [[nodiscard]] double compute_s() const;          // the events at their cost
  [[nodiscard]] const WorkShare& largest() const;  // by cost
};

// The events of one run of `policy` (policies[index]) over `duration_s` of
// simulated time, with `job_nodes` nodes in the job.
RunWork run_work(const models::scenario::Scenario& s, const ResolvedPolicy& policy,
                 std::size_t index, int job_nodes, double duration_s);

// Throws std::invalid_argument naming the figure, the bound and the key when a
// run, or the whole campaign (`runs` of them per policy set), is past its bound.
void check_campaign_work(const std::vector<RunWork>& by_policy,
                         const std::vector<std::string>& policy_names, std::size_t seeds);

}  // namespace myriad::sim::campaign
