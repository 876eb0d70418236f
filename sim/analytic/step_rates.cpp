#include "sim/analytic/step_rates.hpp"

#include <limits>

namespace myriad::sim {

StepRates step_rates(const models::scenario::Scenario& s, double model_flops, double hardware_flops,
                     double step_time_s) {
  StepRates r;
  const double gpu_seconds = step_time_s * s.cluster.gpus;
  r.mfu = model_flops / (gpu_seconds * s.cluster.gpu.bf16_flops);
  r.hfu = hardware_flops / (gpu_seconds * s.cluster.gpu.bf16_flops);
  if (s.training.precision == models::scenario::Precision::fp8) {
    r.mfu_fp8 = model_flops / (gpu_seconds * s.cluster.gpu.fp8_flops);
  }
  r.tokens_per_s =
      static_cast<double>(s.parallelism.global_batch) * s.model.seq_length / step_time_s;
  r.days = s.training.tokens / r.tokens_per_s / 86400;
  r.gpu_hours = r.days * 24 * s.cluster.gpus;
  r.cost = gpu_cost(s.cluster.price_per_gpu_hour, r.gpu_hours);
  return r;
}

double gpu_cost(double price_per_gpu_hour, double gpu_hours) {
  return price_per_gpu_hour > 0 ? gpu_hours * price_per_gpu_hour
                                : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace myriad::sim
