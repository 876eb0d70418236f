// `myriad check`'s command line: its subcommand and options (CLI11).
#include <memory>

#include "tools/cli/check_options.hpp"
#include "tools/cli/commands.hpp"

namespace myriad::cli {

Command add_check_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd =
      app.add_subcommand("check",
                         "Load a scenario, resolve its presets and check it; print it resolved, in "
                         "canonical units (SI: s, B, B/s, FLOP/s), or every problem found.");
  add_scenario_options(*cmd, options->scenario);
  cmd->add_option("--json", options->json_file, "also write the resolved scenario as JSON");
  cmd->add_flag("--origins", options->origins,
                "note beside each value where it came from (file:line:column, default, derived)");
  cmd->add_flag("--quiet,-q", options->quiet, "print only problems");
  return {cmd, [options, io, &env] { return run_check(*options, io, env); }};
}

}  // namespace myriad::cli
