#include "sim/campaign/resolved_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/fabric_domains.hpp"
#include "models/transformer/model_stats.hpp"

namespace myriad::sim::campaign {

double job_failure_rate(const models::scenario::Scenario& s, int nodes) {
  double rate = 0;
  for (const auto& p : s.faults.processes) {
    // A plane, a spine or an up port failing slows the job without stopping it.
    if (p.domain == models::scenario::Domain::plane || models::scenario::is_fabric_port(p.domain)) {
      continue;
    }
    const int span = std::max(1, models::scenario::domain_nodes(s, p.domain));
    const int domains = (nodes + span - 1) / span;
    rate += p.rate_per_domain_s() * domains;
  }
  return rate * s.faults.rate_scale;
}

double young_interval(double cost_s, double mtbf_s) { return std::sqrt(2 * cost_s * mtbf_s); }

// Daly, "A higher order estimate of the optimum checkpoint interval for restart
// dumps", FGCS 22 (2006), eq. 37.
double daly_interval(double cost_s, double mtbf_s) {
  if (cost_s >= 2 * mtbf_s) return mtbf_s;
  const double r = cost_s / (2 * mtbf_s);
  return young_interval(cost_s, mtbf_s) * (1 + std::sqrt(r) / 3 + r / 9) - cost_s;
}

namespace {

// A checkpoint of the model: bf16 weights and the optimizer's fp32 state.
double model_checkpoint_bytes(const models::scenario::Scenario& s) {
  const double params = models::param_counts(s.model).total;
  return params * (2 + models::optimizer_bytes_per_param(s.training));
}

}  // namespace

// What a GPU holds comes from models/plan/memory (weights, optimizer state by
// ZeRO stage). Balanced: weights replicated over the data-parallel replicas
// (dp x cp; all but ZeRO-3) are split among them, and so is an optimizer state
// that is not sharded (ZeRO-0), as Megatron-LM's fully parallel save splits
// each replicated shard's writes over the data-parallel group; each GPU then
// copies its share of the checkpoint. Held: each GPU copies all it holds. The
// slowest rank sets the stall, since the next step's collectives wait for it.
double snapshot_bytes_per_gpu(const models::scenario::Scenario& s,
                              const models::scenario::PolicySpec& p, double checkpoint_bytes) {
  const models::StepPlan plan = models::plan_step(s);
  const int zero = s.parallelism.zero;
  const double replicas = plan.dense_dp;
  const double weight_copies = zero >= 3 ? 1 : replicas;
  const double optimizer_copies = zero >= 1 ? 1 : replicas;
  double most = 0;
  for (int stage = 0; stage < s.parallelism.pp; ++stage) {
    const models::MemoryBreakdown m = models::stage_memory(s, plan, stage);
    const double bytes = p.checkpoint_snapshot == models::scenario::CheckpointSnapshot::held
                             ? m.weights + m.optimizer
                             : m.weights / weight_copies + m.optimizer / optimizer_copies;
    most = std::max(most, bytes);
  }
  return most * checkpoint_bytes / model_checkpoint_bytes(s);
}

ResolvedPolicy resolve_policy(const models::scenario::Scenario& s,
                              const models::scenario::PolicySpec& p) {
  ResolvedPolicy r;
  r.spec = &p;
  r.checkpoint_bytes = p.checkpoint_bytes > 0 ? p.checkpoint_bytes : model_checkpoint_bytes(s);
  // Other jobs' share of the storage leaves the rest to this one, both ways.
  const double free = 1 - p.storage_background_load;
  r.write_Bps = p.storage_write_bw_Bps * free;
  // The blocking stage. Checkpoints are taken between steps, where a
  // synchronous step has already drained its pipeline and collectives, so no
  // drain is added. Every GPU copies its part over its own link (PCIe), and a
  // node's GPUs together at most at its host memory's bandwidth (MegaScale,
  // NSDI'24: the first, blocking stage copies GPU state to pinned host memory).
  r.snapshot_bytes_per_gpu = snapshot_bytes_per_gpu(s, p, r.checkpoint_bytes);
  r.snapshot_s =
      std::max(r.snapshot_bytes_per_gpu / p.host_copy_bw_Bps,
               s.cluster.gpus_per_node * r.snapshot_bytes_per_gpu / p.host_memory_bw_Bps);
  r.coordination_s = p.checkpoint_coordination_s;
  const double stage_s = r.coordination_s + r.snapshot_s;
  const double upload_s = r.checkpoint_bytes / r.write_Bps;
  r.stall_s = p.async_upload ? stage_s : stage_s + upload_s;
  r.upload_s = p.async_upload ? upload_s : 0;
  const int nodes = s.cluster.gpus / s.cluster.gpus_per_node;
  r.storage_load_s = r.checkpoint_bytes / (p.storage_read_bw_Bps * free);
  if (p.in_memory) {
    // Each node sends its shard to its peer and loads it back from there.
    r.peer_copy_s = r.checkpoint_bytes / (nodes * p.peer_bw_Bps);
    r.load_s = r.peer_copy_s;
  } else {
    r.load_s = r.storage_load_s;
  }
  const double rate = job_failure_rate(s, nodes);
  r.job_mtbf_s = rate > 0 ? 1 / rate : std::numeric_limits<double>::infinity();
  // Steps 1 + s times slower for one upload lose upload x s / (1 + s) of training.
  const double slowed = p.upload_slowdown / (1 + p.upload_slowdown);
  r.cost_s = r.stall_s + (p.in_memory ? 0 : slowed * r.upload_s);
  switch (p.checkpoint_rule) {
    case models::scenario::CheckpointRule::fixed:
      r.rule_interval_s = p.checkpoint_interval_s;
      break;
    case models::scenario::CheckpointRule::young:
      r.rule_interval_s = young_interval(r.cost_s, r.job_mtbf_s);
      break;
    case models::scenario::CheckpointRule::daly:
      r.rule_interval_s = daly_interval(r.cost_s, r.job_mtbf_s);
      break;
  }
  r.interval_s = r.rule_interval_s;
  // A rule's interval shorter than the background work of one checkpoint would
  // only queue, skip or block checkpoints: the storage sets the pace. A fixed
  // interval is the user's; upload_overlap says what happens.
  const double floor = p.in_memory ? r.peer_copy_s : r.upload_s;
  if (p.checkpoint_rule != models::scenario::CheckpointRule::fixed && r.interval_s < floor) {
    r.interval_s = floor;
    r.raised = true;
  }
  if (p.in_memory) {
    r.persistent_every = p.persistent_every;
    if (r.persistent_every <= 0) {  // the fewest checkpoints that span one upload
      r.persistent_every =
          r.interval_s > 0 ? std::max(1, static_cast<int>(std::ceil(upload_s / r.interval_s))) : 1;
    }
  }
  r.detect_s = p.detection_s + p.diagnosis_s;
  const double start = p.job_start_s + p.communicator_init_s + p.warmup_s;
  r.restart_s = start + r.load_s;
  r.storage_restart_s = start + r.storage_load_s;
  return r;
}

}  // namespace myriad::sim::campaign
