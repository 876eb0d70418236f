// Step times of the distinct cluster states a campaign passes through, each
// computed once by the analytic engine. A state is the number of nodes the job
// runs on: fewer nodes after an eviction without spares means fewer
// data-parallel replicas; and the planes of a multi-plane fabric out of
// service (each NIC at (planes - down) / planes of its bandwidth); and the up
// ports out on the worst switch of each tier (fabric_ports.hpp). Stragglers are applied on top by
// the engine (the slowest rank sets a synchronous job's pace), so they need no entry here.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim::campaign {

class StepTimeCache {
 public:
  // `scale` multiplies every step time: the step engine's healthy step over the
  // analytic engine's, where a caller has both (plan --rescore step,campaign).
  // `scale_by_dp`, where given, holds that ratio for states the step engine
  // played (by data-parallel degree); a state it did not play takes the ratio
  // of the nearest one it did.
  StepTimeCache(const models::scenario::Scenario& s, const DeviceProfile& profile, double scale = 1,
                std::map<int, double> scale_by_dp = {});

  // Seconds per step on `nodes` nodes, with `planes_down` planes of a
  // multi-plane fabric out of service and, where given, uplinks_down[i] up
  // ports out on each switch of tier i (in place of the scenario's); 0 when no
  // data-parallel degree fits.
  double step_time_s(int nodes, int planes_down = 0, const std::vector<int>& uplinks_down = {});
  // The data-parallel degree the job runs at on `nodes` nodes: the largest that
  // fits and divides the global batch (0: none).
  [[nodiscard]] int dp_on(int nodes) const;
  // The scenario of the job shrunk to data-parallel degree `dp` (the same
  // global batch, more micro-batches per replica).
  [[nodiscard]] models::scenario::Scenario at_dp(int dp) const;
  [[nodiscard]] double scale_at(int dp) const;
  [[nodiscard]] double tokens_per_step() const { return tokens_per_step_; }
  [[nodiscard]] int job_nodes() const { return job_nodes_; }
  // Fewest nodes the job can run on (one data-parallel replica).
  [[nodiscard]] int min_nodes() const { return min_nodes_; }
  [[nodiscard]] std::size_t states() const { return cache_.size(); }

 private:
  const models::scenario::Scenario& scenario_;
  const DeviceProfile& profile_;
  double scale_ = 1;
  std::map<int, double> scale_by_dp_;
  double tokens_per_step_ = 0;
  int job_nodes_ = 0;
  int min_nodes_ = 1;
  // By nodes, planes down, up ports out (looked up without copying them).
  std::map<std::tuple<int, int, std::vector<int>>, double, std::less<>> cache_;
};

}  // namespace myriad::sim::campaign
