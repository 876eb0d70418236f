// `myriad explain`'s command line: its subcommand and option (CLI11).
#include <memory>
#include <string>

#include "tools/cli/commands.hpp"
#include "tools/cli/explain_options.hpp"

namespace myriad::cli {

Command add_explain_command(CLI::App& app, Streams io, const Environment& env) {
  auto section = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Describe every scenario key: type, unit, default and meaning.");
  cmd->add_option("section", *section,
                  "a section (cluster, cluster.network, model.moe, parallelism, ...) or a key "
                  "(parallelism.tp), `presets` (every preset and the profile each GPU takes) or "
                  "`profiles` (every device profile and where its rates come from); all keys "
                  "when left out");
  return {cmd, [section, io, &env] { return run_explain(*section, io, env); }};
}

}  // namespace myriad::cli
