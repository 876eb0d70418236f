// `myriad sweep`'s command line: its subcommand and options (CLI11).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "sim/planning/sweep.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/sweep_options.hpp"

namespace myriad::cli {

Command add_sweep_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Estimate every configuration that --vary axes span over a scenario: a table, CSV or JSON "
      "Lines, and the Pareto front of chosen objectives.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  cmd->add_option("--vary", options->vary,
                  "KEY=V1,V2,... or KEY=FROM..TO[:STEP] or KEY=FROM..TO*FACTOR: an axis over "
                  "one scenario key, values read as in the file (repeatable; default: the "
                  "scenario's sweep section)")
      ->allow_extra_args(false);
  cmd->add_flag("--zip", options->zip,
                "advance every axis together (equal lengths) instead of their cartesian product");
  std::string objective_names;
  for (const auto& ob : sim::known_objectives()) {
    objective_names += (objective_names.empty() ? "" : ", ") + ob.name;
  }
  cmd->add_option("--pareto", options->pareto,
                  "OBJ,OBJ[,OBJ]: mark the configurations no other beats on all of these ("
                  "from: " +
                      objective_names + "); only valid ones that fit in memory count");
  cmd->add_option("--csv", options->csv_file, "also write the rows as CSV");
  cmd->add_option("--jsonl", options->jsonl_file, "also write the rows as JSON Lines");
  cmd->add_option("--report", options->report_file,
                  "also write an HTML report: every configuration in an interactive scatterplot "
                  "(axes, colour, brushing, a click for its breakdown, memory and scenario), the "
                  "Pareto front, the objective against each axis; works offline");
  cmd->add_option("--max-configs", options->max_configs,
                  fmt::format("refuse axes that span more configurations than this (at most {}: "
                              "a sweep estimates about 1,000 a second)",
                              sim::kMostSweepConfigs))
      ->check(CLI::Range(1, static_cast<int>(sim::kMostSweepConfigs)));
  return {cmd, [options, io, &env] { return run_sweep(*options, io, env); }};
}

}  // namespace myriad::cli
