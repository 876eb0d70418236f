// A complete scenario: a training job on a cluster, presets resolved, units
// in SI, defaults applied, derived values filled in and checked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario/cluster_spec.hpp"
#include "models/scenario/diagnostics.hpp"
#include "models/scenario/model_spec.hpp"
#include "models/scenario/origins.hpp"
#include "models/scenario/parallel_spec.hpp"
#include "models/scenario/reliability_spec.hpp"
#include "models/scenario/sweep_spec.hpp"
#include "models/scenario/training_spec.hpp"

namespace myriad::models::scenario {

struct Scenario {
  std::string file;  // where it was loaded from
  std::string name;
  std::string description;
  ClusterSpec cluster;
  ModelSpec model;
  ParallelSpec parallelism;
  OverlapSpec overlap;
  TrainingSpec training;
  FaultsSpec faults;
  std::vector<PolicySpec> policies;  // one or more, compared side by side
  SweepSpec sweep;                   // what `myriad sweep` varies (it alone reads it)
  std::uint64_t seed = 0;

  Origins origins;  // where each value came from, by dotted key
  std::vector<Diagnostic> warnings;
};

}  // namespace myriad::models::scenario
