#include "sim/analytic/optimizer_time.hpp"

#include "models/ops/op.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::sim {

double optimizer_time(const models::scenario::Scenario& s, const models::StepPlan& plan,
                      const DeviceProfile& p) {
  // The distributed optimizer updates a 1/(dp x cp) shard of the dense parameters
  // and a 1/(expert dp) shard of the trained expert ones.
  const double expert = plan.expert_params_at_max * plan.expert_trained;
  const double dense = plan.params_max - plan.expert_params_at_max;
  const bool sharded = s.parallelism.zero >= 1;
  const double params =
      dense / (sharded ? plan.dense_dp : 1) + expert / (sharded ? plan.expert_dp : 1);
  // Bytes per parameter: read the fp32 gradient and the optimizer states (master
  // weights and moments), write the states back and the bf16 weights, and read the
  // gradient once more for the clipping norm: 34 B for Adam.
  double bytes_per_param = 4 + 2 * models::optimizer_bytes_per_param(s.training) + 2 + 4;
  if (s.training.optimizer == models::scenario::Optimizer::lamb)
    bytes_per_param += 8;  // trust ratios
  models::Op op = models::make_elementwise("optimizer", params * bytes_per_param);
  op.cls = models::OpClass::optimizer;
  return compute_cost(op, p).time_s;
}

}  // namespace myriad::sim
