#include "sim/campaign/step_time_cache.hpp"

#include <cmath>
#include <utility>

#include "sim/analytic/estimator.hpp"

namespace myriad::sim::campaign {

StepTimeCache::StepTimeCache(const models::scenario::Scenario& s, const DeviceProfile& profile,
                             double scale, std::map<int, double> scale_by_dp)
    : scenario_(s), profile_(profile), scale_(scale), scale_by_dp_(std::move(scale_by_dp)) {
  const auto& p = s.parallelism;
  tokens_per_step_ = static_cast<double>(p.global_batch) * s.model.seq_length;
  job_nodes_ = s.cluster.gpus / s.cluster.gpus_per_node;
  const int replica_gpus = p.tp * p.pp * p.cp;
  min_nodes_ = (replica_gpus + s.cluster.gpus_per_node - 1) / s.cluster.gpus_per_node;
}

int StepTimeCache::dp_on(int nodes) const {
  const auto& p = scenario_.parallelism;
  if (nodes == job_nodes_) return p.dp;
  const int replica_gpus = p.tp * p.pp * p.cp;
  int dp = nodes * scenario_.cluster.gpus_per_node / replica_gpus;
  while (dp > 0 && p.global_batch % (p.micro_batch * dp) != 0) --dp;
  return dp;
}

models::scenario::Scenario StepTimeCache::at_dp(int dp) const {
  models::scenario::Scenario s = scenario_;
  const auto& p = s.parallelism;
  s.cluster.gpus = dp * p.tp * p.pp * p.cp;
  s.parallelism.dp = dp;
  return s;
}

double StepTimeCache::scale_at(int dp) const {
  if (scale_by_dp_.empty()) return scale_;
  // The nearest state played, by ratio of degrees (a tie goes to the larger).
  double best = scale_;
  double distance = INFINITY;
  for (const auto& [played, ratio] : scale_by_dp_) {
    const double d = std::abs(std::log(static_cast<double>(played) / dp));
    if (d <= distance) {
      distance = d;
      best = ratio;
    }
  }
  return best;
}

double StepTimeCache::step_time_s(int nodes, int planes_down,
                                  const std::vector<int>& uplinks_down) {
  const auto it = cache_.find(std::tie(nodes, planes_down, uplinks_down));
  if (it != cache_.end()) return it->second;
  // The same global batch on fewer replicas: the largest dp that divides it,
  // each replica running more micro-batches (gradient accumulation).
  const int dp = dp_on(nodes);
  double t = 0;
  if (dp > 0) {
    models::scenario::Scenario s = at_dp(dp);
    s.cluster.network.planes_down = planes_down;
    auto& tiers = s.cluster.network.tiers;
    for (std::size_t i = 0; i < uplinks_down.size() && i < tiers.size(); ++i) {
      tiers[i].uplinks_down = uplinks_down[i];
    }
    t = scale_at(dp) * estimate(s, profile_).step_time_s;
  }
  cache_.emplace(std::tuple{nodes, planes_down, uplinks_down}, t);
  return t;
}

}  // namespace myriad::sim::campaign
