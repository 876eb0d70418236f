// Step times of the distinct cluster states a campaign passes through, each
// computed once by the analytic engine. A state is the number of nodes the job
// runs on: fewer nodes after an eviction without spares means fewer
// data-parallel replicas. Stragglers are applied on top by the engine (the
// slowest rank sets a synchronous job's pace), so they need no entry here.
#pragma once

#include <map>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim::campaign {

class StepTimeCache {
 public:
  // `scale` multiplies every step time: the step engine's healthy step over the
  // analytic engine's, where a caller has both (plan --rescore step,campaign).
  StepTimeCache(const scenario::Scenario& s, const DeviceProfile& profile, double scale = 1);

  // Seconds per step on `nodes` nodes; 0 when no data-parallel degree fits.
  double step_time_s(int nodes);
  [[nodiscard]] double tokens_per_step() const { return tokens_per_step_; }
  [[nodiscard]] int job_nodes() const { return job_nodes_; }
  // Fewest nodes the job can run on (one data-parallel replica).
  [[nodiscard]] int min_nodes() const { return min_nodes_; }
  [[nodiscard]] std::size_t states() const { return cache_.size(); }

 private:
  const scenario::Scenario& scenario_;
  const DeviceProfile& profile_;
  double scale_ = 1;
  double tokens_per_step_ = 0;
  int job_nodes_ = 0;
  int min_nodes_ = 1;
  std::map<int, double> cache_;
};

}  // namespace myriad::sim::campaign
