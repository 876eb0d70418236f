// Derivations and cross-checks of the `faults` and `policies` sections; part of
// derive() and check() in scenario_checks.hpp.
#pragma once

#include <cstddef>

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

// The failure mix of Llama 3 405B (arXiv:2407.21783 Table 5): the 419 unexpected
// interruptions of a 54-day snapshot on 2,048 nodes of 8 H100, by component.
std::vector<FailureProcessSpec> llama3_failure_mix();
// How many processes that is (built once).
std::size_t llama3_failure_mix_size();

// Reads faults.replay (a CSV, relative to the scenario file) into
// faults.replayed; problems name the file, line and column.
void load_fault_replay(Scenario& s, Diagnostics& d);

void derive_reliability(Scenario& s);
void check_reliability(const Scenario& s, const Location& file, Diagnostics& d);

}  // namespace myriad::models::scenario
