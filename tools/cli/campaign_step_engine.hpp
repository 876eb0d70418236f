// `myriad campaign --step-engine simulate`: the healthy step and each
// straggler process's slow step played on the step engine before the campaign.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/campaign/step_engine_fit.hpp"
#include "sim/cost/device_profile.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

using sim::campaign::StepEngineFit;

// Plays the steps of sim::campaign::plan_step_engine_fit on the step engine (in
// child processes: call it with no other thread running) and fits them
// (sim::campaign::fit_step_engine), which sets each straggler process's and
// injected slow node's slowdown in `s` to its step-engine factor;
// `shrunk_states` is how many shrunk states (largest first) to play when a
// policy shrinks. Nothing, with the reason on io.err, when the step engine
// cannot play them.
std::optional<StepEngineFit> fit_to_step_engine(models::scenario::Scenario& s,
                                                const sim::DeviceProfile& profile,
                                                int shrunk_states, Streams io);
// The lines the report prints, and its JSON, for a fit of `s`.
std::string step_engine_text(const models::scenario::Scenario& s, const StepEngineFit& fit);
nlohmann::json step_engine_json(const models::scenario::Scenario& s, const StepEngineFit& fit);

}  // namespace myriad::cli
