// What-ifs that need a device-profile parameter the profile may not give.
#pragma once

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// Throws std::runtime_error naming the scenario, the profile and the missing
// parameter where the scenario asks for what the profile cannot price (sparse
// expert GEMMs, fused overlap).
void require_parameters(const models::scenario::Scenario& s, const DeviceProfile& p);

}  // namespace myriad::sim
