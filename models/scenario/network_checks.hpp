// The scale-out network's settings against each other (scenario_checks.cpp's
// cluster checks end with them): tiers that attach the cluster's NICs, up ports
// and planes out of service that leave a path, in-network reduction, the
// topology and PXN on rails, queue pairs only where flows are hashed.
#pragma once

#include "models/scenario/checker.hpp"

namespace myriad::models::scenario {

void check_network(const Checker& c);

}  // namespace myriad::models::scenario
