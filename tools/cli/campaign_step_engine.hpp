// `myriad campaign --step-engine simulate`: the healthy step and each
// straggler process's slow step played on the step engine before the campaign.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "tools/cli/commands.hpp"

namespace myriad::cli {

// `--step-engine simulate`: the healthy step and each straggler process's slow
// step played on the step engine (each in a child process: SimGrid runs once per
// process), before the campaign's threads start. The campaign then runs on the
// step engine's healthy pace (every state's analytic step time scaled by it)
// and on each straggler's effective factor (a slow node rarely slows the whole
// step by its full slowdown: the pipeline and overlap absorb part of it).
struct StepEngineFit {
  double analytic_step_s = 0;
  double simulated_step_s = 0;
  std::vector<double> given;                  // each straggler process's slowdown, as given
  std::vector<double> effective;              // the step engine's slow step over its healthy one
  std::vector<int> stages;                    // the pipeline stages played with a slow node
  std::vector<std::vector<double>> by_stage;  // each straggler's factor on each of them
};

// Plays the steps (in child processes: call it with no other thread running)
// and sets each straggler process's slowdown in `s` to its step-engine factor;
// nothing, with the reason on io.err, when the step engine cannot play them.
std::optional<StepEngineFit> fit_to_step_engine(scenario::Scenario& s,
                                                const sim::DeviceProfile& profile, Streams io);
// The lines the report prints, and its JSON, for a fit of `s`.
std::string step_engine_text(const scenario::Scenario& s, const StepEngineFit& fit);
nlohmann::json step_engine_json(const scenario::Scenario& s, const StepEngineFit& fit);

}  // namespace myriad::cli
