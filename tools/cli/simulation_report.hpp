// What `simulate` reports beyond the step report `estimate` prints: the
// simulated step beside the estimate, waiting per rank group, the critical
// path, per-link mean utilization and stragglers.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/step/step_engine.hpp"

namespace myriad::cli {

// The analytic report with the simulated step's time, rates and breakdown in
// place of the estimated ones (memory, collectives and ops stay: the same plan).
sim::StepReport simulated_step_report(const models::scenario::Scenario& s,
                                      const sim::StepReport& analytic,
                                      const sim::StepSimulation& simulated);

std::string simulation_text(const models::scenario::Scenario& s, const sim::StepReport& analytic,
                            const sim::StepSimulation& simulated);

// Fields added to the step report's JSON; deterministic (no wall time).
nlohmann::json simulation_json(const models::scenario::Scenario& s, const sim::StepReport& analytic,
                               const sim::StepSimulation& simulated);

// Chrome trace-event format (Perfetto opens it): one track per pipeline stage of
// data-parallel replica 0, its tasks, waits, transfers and data-parallel phases as slices.
nlohmann::json chrome_trace(const sim::StepSimulation& simulated);

}  // namespace myriad::cli
