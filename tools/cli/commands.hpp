// One function per verb; each adds its subcommand and options to the app and
// returns the action to run once parsing succeeded.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>

#include "tools/cli/cli.hpp"

namespace myriad::cli {

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

using Action = std::function<int()>;

struct Command {
  CLI::App* app;
  Action action;
};

// Options every scenario-reading verb shares.
struct ScenarioOptions {
  std::string scenario;
  std::vector<std::string> preset_path;
};

void add_scenario_options(CLI::App& cmd, ScenarioOptions& options);
std::vector<std::filesystem::path> preset_path(const ScenarioOptions& options,
                                               const Environment& env);

Command add_check_command(CLI::App& app, Streams io, const Environment& env);
Command add_explain_command(CLI::App& app, Streams io);

// "myriad 0.1.0 (commit ..., SimGrid 3.32, CUDA ...)".
std::string version_text();

}  // namespace myriad::cli
