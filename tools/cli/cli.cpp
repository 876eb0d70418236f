#include "tools/cli/cli.hpp"

#include <fmt/format.h>

#include <iostream>
#include <map>

#include "tools/cli/commands.hpp"

namespace myriad::cli {

void add_scenario_options(CLI::App& cmd, ScenarioOptions& options) {
  cmd.add_option("scenario", options.scenario, "scenario YAML file")->required();
  cmd.add_option("--preset-path", options.preset_path,
                 "folder holding hardware/, clusters/ and models/ presets; searched before "
                 "MYRIAD_PRESET_PATH and the shipped scenarios/ (repeatable)");
}

std::vector<std::filesystem::path> preset_path(const ScenarioOptions& options,
                                               const Environment& env) {
  std::vector<std::filesystem::path> out(options.preset_path.begin(), options.preset_path.end());
  out.insert(out.end(), env.preset_path.begin(), env.preset_path.end());
  return out;
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Environment& env) {
  CLI::App app{"Myriad: simulate large language model training on large GPU clusters.", "myriad"};
  app.set_version_flag("--version", version_text,
                       "print the version, build and devices, then exit");
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 1 failure while working, 2 bad input or usage.");

  const Streams io{out, err};
  std::map<const CLI::App*, Action> actions;
  for (Command c : {add_check_command(app, io, env), add_explain_command(app, io)}) {
    c.app->set_version_flag("--version", version_text,
                            "print the version, build and devices, then exit");
    actions[c.app] = std::move(c.action);
  }

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitBadInput;
  }
  for (const auto* sub : app.get_subcommands()) {
    const auto it = actions.find(sub);
    if (it == actions.end()) continue;
    try {
      return it->second();
    } catch (const std::exception& e) {
      err << fmt::format("myriad {}: error: {}\n", sub->get_name(), e.what());
      return kExitFailure;
    }
  }
  return kExitBadInput;
}

}  // namespace myriad::cli
