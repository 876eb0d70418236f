// What a step time means for the job: MFU and HFU against the GPUs' peaks,
// tokens per second, days to the token target, and the GPU-hours and dollars
// those days hold the cluster. One function derives them, for the analytic
// engine's step time, the step engine's, or a rescored plan's.
#pragma once

#include "models/scenario/scenario.hpp"

namespace myriad::sim {

struct StepRates {
  double mfu = 0;      // model FLOPs over the bf16 peak of all GPUs
  double hfu = 0;      // hardware FLOPs (with recomputation) likewise
  double mfu_fp8 = 0;  // fp8 training: model FLOPs over the fp8 peak; 0 otherwise
  double tokens_per_s = 0;
  double days = 0;       // to training.tokens at this rate
  double gpu_hours = 0;  // the cluster's GPUs over those days
  double cost = 0;       // dollars (gpu_cost); NaN without a price per GPU-hour
  // The MFU a report leads with: against the peak of the precision the GEMMs run at.
  [[nodiscard]] double headline_mfu() const { return mfu_fp8 > 0 ? mfu_fp8 : mfu; }
};

// `model_flops` and `hardware_flops` per step (models/transformer/model_stats.hpp).
StepRates step_rates(const models::scenario::Scenario& s, double model_flops, double hardware_flops,
                     double step_time_s);

// The dollars of `gpu_hours` at `price_per_gpu_hour` (cluster.price_per_gpu_hour);
// NaN without a price (0). What a campaign's GPU-hours (job and spares) cost, as
// step_rates prices its own.
double gpu_cost(double price_per_gpu_hour, double gpu_hours);

}  // namespace myriad::sim
