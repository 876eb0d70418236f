#include "sim/campaign/resolved_policy.hpp"

#include <cmath>
#include <limits>

#include "models/plan/step_plan.hpp"
#include "models/transformer/model_stats.hpp"

namespace myriad::sim::campaign {

double node_failure_rate(const scenario::FaultsSpec& f) {
  double rate = 0;
  for (const auto& p : f.processes) rate += p.rate_per_node_s();
  return rate;
}

double young_interval(double cost_s, double mtbf_s) { return std::sqrt(2 * cost_s * mtbf_s); }

// Daly, "A higher order estimate of the optimum checkpoint interval for restart
// dumps", FGCS 22 (2006), eq. 37.
double daly_interval(double cost_s, double mtbf_s) {
  if (cost_s >= 2 * mtbf_s) return mtbf_s;
  const double r = cost_s / (2 * mtbf_s);
  return young_interval(cost_s, mtbf_s) * (1 + std::sqrt(r) / 3 + r / 9) - cost_s;
}

ResolvedPolicy resolve_policy(const scenario::Scenario& s, const scenario::PolicySpec& p) {
  ResolvedPolicy r;
  r.spec = &p;
  r.checkpoint_bytes = p.checkpoint_bytes;
  if (r.checkpoint_bytes <= 0) {
    const double params = models::param_counts(s.model).total;
    r.checkpoint_bytes = params * (2 + models::optimizer_bytes_per_param(s.training.optimizer));
  }
  // Sharded save: each GPU stages its 1/gpus share over its own host link.
  const double stage_s = r.checkpoint_bytes / (s.cluster.gpus * p.host_copy_bw_Bps);
  const double upload_s = r.checkpoint_bytes / p.storage_write_bw_Bps;
  r.stall_s = p.async_upload ? stage_s : stage_s + upload_s;
  r.upload_s = p.async_upload ? upload_s : 0;
  const int nodes = s.cluster.gpus / s.cluster.gpus_per_node;
  r.load_s = p.in_memory ? r.checkpoint_bytes / (nodes * p.peer_bw_Bps)
                         : r.checkpoint_bytes / p.storage_read_bw_Bps;
  const double rate = node_failure_rate(s.faults) * nodes;
  r.job_mtbf_s = rate > 0 ? 1 / rate : std::numeric_limits<double>::infinity();
  switch (p.checkpoint_rule) {
    case scenario::CheckpointRule::fixed:
      r.interval_s = p.checkpoint_interval_s;
      break;
    case scenario::CheckpointRule::young:
      r.interval_s = young_interval(r.stall_s, r.job_mtbf_s);
      break;
    case scenario::CheckpointRule::daly:
      r.interval_s = daly_interval(r.stall_s, r.job_mtbf_s);
      break;
  }
  r.detect_s = p.detection_s + p.diagnosis_s;
  r.restart_s = p.job_start_s + p.communicator_init_s + r.load_s + p.warmup_s;
  return r;
}

}  // namespace myriad::sim::campaign
