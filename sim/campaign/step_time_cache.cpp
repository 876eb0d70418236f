#include "sim/campaign/step_time_cache.hpp"

#include "sim/analytic/estimator.hpp"

namespace myriad::sim::campaign {

StepTimeCache::StepTimeCache(const scenario::Scenario& s, const DeviceProfile& profile,
                             double scale)
    : scenario_(s), profile_(profile), scale_(scale) {
  const auto& p = s.parallelism;
  tokens_per_step_ = static_cast<double>(p.global_batch) * s.model.seq_length;
  job_nodes_ = s.cluster.gpus / s.cluster.gpus_per_node;
  const int replica_gpus = p.tp * p.pp * p.cp;
  min_nodes_ = (replica_gpus + s.cluster.gpus_per_node - 1) / s.cluster.gpus_per_node;
}

double StepTimeCache::step_time_s(int nodes) {
  const auto it = cache_.find(nodes);
  if (it != cache_.end()) return it->second;
  // The same global batch on fewer replicas: the largest dp that divides it,
  // each replica running more micro-batches (gradient accumulation).
  scenario::Scenario s = scenario_;
  const auto& p = s.parallelism;
  const int replica_gpus = p.tp * p.pp * p.cp;
  int dp = nodes * s.cluster.gpus_per_node / replica_gpus;
  if (nodes == job_nodes_) dp = p.dp;
  while (dp > 0 && p.global_batch % (p.micro_batch * dp) != 0) --dp;
  double t = 0;
  if (dp > 0) {
    s.parallelism.dp = dp;
    s.cluster.gpus = dp * replica_gpus;
    t = scale_ * estimate(s, profile_).step_time_s;
  }
  cache_.emplace(nodes, t);
  return t;
}

}  // namespace myriad::sim::campaign
