// `myriad validate`'s command line: its subcommand and options (CLI11).
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/validate_options.hpp"

namespace myriad::cli {

Command add_validate_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd =
      app.add_subcommand("validate",
                         "Compare the analytic engine's predictions with published tables "
                         "(scenarios/validation/): per row and per suite.");
  cmd->add_option("suites", options->suites,
                  "suite names (files in scenarios/validation/) or paths; all when left out");
  cmd->add_option("--preset-path", options->preset_path, "extra preset folder (repeatable)");
  cmd->add_option("--json", options->json_file, "also write the results as JSON");
  cmd->add_flag("--leave-one-out", options->leave_one_out,
                "also fit the device profile's assumed parameters on all suites but one and "
                "predict that one, for each suite: how well the model generalizes");
  return {cmd, [options, io, &env] { return run_validate(*options, io, env); }};
}

}  // namespace myriad::cli
