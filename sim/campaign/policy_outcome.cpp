#include "sim/campaign/policy_outcome.hpp"

namespace myriad::sim::campaign {

PolicyOutcome policy_outcome(const PolicyReport& p, int gpus_per_node) {
  PolicyOutcome o;
  o.days = p.over_seeds([](const RunResult& run) { return run.wall_s / 86400; });
  o.ettr = p.over_seeds([](const RunResult& run) { return run.ettr(); });
  for (const auto& run : p.runs) o.reached = o.reached && run.reached_target;
  o.gpu_hours = p.over_seeds([gpus_per_node](const RunResult& run) {
                   return run.gpu_hours(gpus_per_node);
                 }).mean;
  o.tokens_per_s = p.over_seeds([](const RunResult& run) { return run.goodput(); }).mean;
  return o;
}

}  // namespace myriad::sim::campaign
