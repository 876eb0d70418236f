// `myriad simulate`'s command line: its subcommand and options (CLI11).
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/simulate_options.hpp"

namespace myriad::cli {

Command add_simulate_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Play one training step on SimGrid (pipeline schedule, pipeline and data-parallel flows "
      "on the scenario's fat tree, stragglers) and compare it with the analytic estimate.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  cmd->add_option("--json", options->json_file,
                  "also write the result as JSON: estimate's fields, then the simulation's");
  cmd->add_option("--trace", options->trace_file,
                  "write a Chrome/Perfetto trace: one track per stage of replica 0");
  cmd->add_option("--report", options->report_file,
                  "also write an HTML report: the step's breakdown by engine and each stage's "
                  "waiting; works offline");
  cmd->add_flag("--all-replicas", options->all_replicas,
                "simulate every data-parallel replica, not one per stage and its mirrored ring "
                "neighbours (same result without contention or stragglers, which turn it on; "
                "slower)");
  cmd->add_option("--log", options->log,
                  "the step engine's log on stderr: verbose (each stage's end) or debug (every "
                  "pipeline message and layer collective played as flows, too)")
      ->check(CLI::IsMember({"verbose", "debug"}));
  cmd->add_option("--workload", options->workload,
                  "play a measured workload instead of the scenario's step: Chakra execution "
                  "traces (a manifest, a folder or one .et file; `myriad trace` writes and reads "
                  "them), one file a pipeline stage, every data-parallel replica running them "
                  "on the scenario's cluster. Compute keeps its traced time; collectives with a "
                  "size go over the scenario's --workload-group (data-parallel: the replicas' "
                  "rings, as flows), sends between the stages' hosts");
  cmd->add_option("--workload-group", options->workload_group,
                  "the group a workload's collectives run over (default dp)")
      ->check(CLI::IsMember({"dp", "tp", "cp", "ep"}));
  cmd->add_flag("--ignore-ctrl-deps", options->ignore_ctrl_deps,
                "read a workload's ctrl deps as Chakra's feeder does (traces converted from "
                "PyTorch record parent operators as ctrl deps)");
  return {cmd, [options, io, &env] { return run_simulate(*options, io, env); }};
}

}  // namespace myriad::cli
