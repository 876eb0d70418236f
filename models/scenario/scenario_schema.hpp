// The scenario's keys, described once (see schema.hpp): parsing, defaults,
// printing and `myriad explain` all come from these descriptions.
#pragma once

#include "models/scenario/scenario.hpp"
#include "models/scenario/schema.hpp"

namespace myriad::models::scenario {

const Schema<GpuSpec>& gpu_schema();
const Schema<ClusterSpec>& cluster_schema();
const Schema<ModelSpec>& model_schema();
const Schema<FaultsSpec>& faults_schema();
const Schema<PolicySpec>& policy_schema();
const Schema<Scenario>& scenario_schema();

// Every section's documentation, rooted at the scenario.
SectionDoc scenario_doc();

}  // namespace myriad::models::scenario
