// The optimizer step's time: a memory-bound pass over the optimizer shard a rank
// updates (the closed form, and stage_costs for the step program, take it).
#pragma once

#include "models/plan/step_plan.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

double optimizer_time(const models::scenario::Scenario& s, const models::StepPlan& plan,
                      const DeviceProfile& p);

}  // namespace myriad::sim
