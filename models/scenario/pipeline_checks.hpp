// The pipeline's cross-checks: stages, their layers and chunks, the schedule;
// part of check() in scenario_checks.hpp.
#pragma once

#include "models/scenario/checker.hpp"

namespace myriad::models::scenario {

void check_pipeline(const Checker& c);

}  // namespace myriad::models::scenario
