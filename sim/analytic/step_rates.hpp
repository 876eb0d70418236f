// What a step time means for the job: MFU and HFU against the GPUs' peaks,
// tokens per second and days to the token target. One function derives them,
// for the analytic engine's step time, the step engine's, or a rescored plan's.
#pragma once

#include "models/scenario/scenario.hpp"

namespace myriad::sim {

struct StepRates {
  double mfu = 0;      // model FLOPs over the bf16 peak of all GPUs
  double hfu = 0;      // hardware FLOPs (with recomputation) likewise
  double mfu_fp8 = 0;  // fp8 training: model FLOPs over the fp8 peak; 0 otherwise
  double tokens_per_s = 0;
  double days = 0;  // to training.tokens at this rate
};

// `model_flops` and `hardware_flops` per step (models/transformer/model_stats.hpp).
StepRates step_rates(const scenario::Scenario& s, double model_flops, double hardware_flops,
                     double step_time_s);

}  // namespace myriad::sim
