// What a report says about the network beyond its numbers (StepReport::
// network_notes): what the fabric's oversubscription and ECMP hashing do to the
// data-parallel and pipeline traffic and to expert all-to-alls, where SHARP's
// aggregation trees go round fewer communicators than want them, and how much
// network traffic shares the host link with activation offload's copies.
#pragma once

#include <string>
#include <vector>

#include "models/plan/step_plan.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/analytic/pricer.hpp"

namespace myriad::sim {

std::vector<std::string> network_notes(const models::scenario::Scenario& s,
                                       const models::StepPlan& plan, const Pricer& pricer);

}  // namespace myriad::sim
