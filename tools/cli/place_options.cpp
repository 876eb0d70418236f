// `myriad place`'s command line: its subcommand and options (CLI11).
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/place_options.hpp"

namespace myriad::cli {

Command add_place_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<PlaceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "place",
      "Place the pipeline's layers on its stages: Baechi's m-TOPO, m-ETF and m-SCT on the "
      "pipeline unrolled over micro-batches, beside the uniform split and the time-balanced "
      "one; each priced by the analytic and the step engine, the best written back as "
      "parallelism.stage_layers.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  cmd->add_option("--algo", options->algorithms,
                  "uniform, m-topo, m-etf, m-sct, balanced or all (the default); may be given "
                  "more than once");
  cmd->add_flag("--no-simulate", options->no_simulate,
                "price the placements with the analytic engine only (the step engine plays each "
                "distinct split in a child process)");
  cmd->add_option("--grain", options->grain,
                  "layer (the default) or op: also place the pipeline op by op (a layer's norms, "
                  "GEMMs, attention, each with its backward), priced on the op graph")
      ->check(CLI::IsMember({"layer", "op"}));
  cmd->add_option("--write", options->write_file,
                  "write the scenario, resolved, with the chosen placement as "
                  "parallelism.stage_layers: the one --algo names, or the fastest that fits");
  cmd->add_option("--json", options->json_file, "also write every placement as JSON");
  return {cmd, [options, io, &env] { return run_place(*options, io, env); }};
}

}  // namespace myriad::cli
