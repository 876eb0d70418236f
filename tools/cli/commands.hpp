// One function per verb; each adds its subcommand and options to the app and
// returns the action to run once parsing succeeded. Only the `*_options.cpp` files
// and cli.cpp include CLI11; the runs they call see tools/cli/verb_support.hpp.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct Command {
  CLI::App* app;
  Action action;
};

// --scenario's positional path, --preset-path and --set, for scenario-reading verbs.
void add_scenario_options(CLI::App& cmd, ScenarioOptions& options);
// --profile FILE, for verbs that price work with a device profile.
void add_profile_option(CLI::App& cmd, std::string& profile);
// A check for a numeric option: finite and within [lo, hi] (CLI11's ranges let
// NaN through and print the type's limits in full).
CLI::Validator finite_range(double lo, double hi);

Command add_calibrate_command(CLI::App& app, Streams io, const Environment& env);
Command add_campaign_command(CLI::App& app, Streams io, const Environment& env);
Command add_check_command(CLI::App& app, Streams io, const Environment& env);
Command add_estimate_command(CLI::App& app, Streams io, const Environment& env);
Command add_validate_command(CLI::App& app, Streams io, const Environment& env);
Command add_simulate_command(CLI::App& app, Streams io, const Environment& env);
Command add_explain_command(CLI::App& app, Streams io, const Environment& env);
Command add_sweep_command(CLI::App& app, Streams io, const Environment& env);
Command add_plan_command(CLI::App& app, Streams io, const Environment& env);
Command add_place_command(CLI::App& app, Streams io, const Environment& env);
Command add_trace_command(CLI::App& app, Streams io, const Environment& env);

}  // namespace myriad::cli
