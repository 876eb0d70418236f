// `myriad estimate`'s command line: its subcommand and options (CLI11).
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/estimate_options.hpp"

namespace myriad::cli {

Command add_estimate_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<EstimateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "estimate",
      "Estimate a training step analytically: step time, MFU, tokens/s, where the "
      "time goes, memory per GPU.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  cmd->add_option("--json", options->json_file, "also write the report as JSON");
  return {cmd, [options, io, &env] { return run_estimate(*options, io, env); }};
}

}  // namespace myriad::cli
