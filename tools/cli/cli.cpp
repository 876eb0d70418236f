#include "tools/cli/cli.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>

#include "models/scenario/text_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/printable_streambuf.hpp"

namespace myriad::cli {

void add_scenario_options(CLI::App& cmd, ScenarioOptions& options) {
  cmd.add_option("scenario", options.scenario, "scenario YAML file, or - to read it from stdin")
      ->required();
  cmd.add_option("--preset-path", options.preset_path,
                 "folder holding hardware/, clusters/ and models/ presets; searched before "
                 "MYRIAD_PRESET_PATH and the shipped scenarios/ (repeatable)");
  cmd.add_option("--set", options.overrides,
                 "KEY.PATH=VALUE: set one key of the scenario, read and checked as in the file "
                 "(units, ranges); lists by index, e.g. cluster.network.tiers.0.oversubscription="
                 "3:1 (repeatable, later wins)")
      ->allow_extra_args(false);
}

void add_profile_option(CLI::App& cmd, std::string& profile) {
  cmd.add_option("--profile", profile,
                 "device profile JSON (default: calibration/profiles/<the GPU's preset>.json)");
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](const std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (ec != std::errc{} || ptr != end || !std::isfinite(v) || v < lo || v > hi) {
          return fmt::format("expected a number in [{:g}, {:g}], found '{}'", lo, hi,
                             models::scenario::printable(text));
        }
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

namespace {

// Runs a verb's action: an exception is the verb's failure, said; so is a report
// that did not reach its reader (a full disk, a closed pipe).
int run_verb(const std::string& name, const Action& action, std::ostream& out, std::ostream& err,
             const std::ostream& raw_out) {
  int code = kExitFailure;
  try {
    code = action();
  } catch (const std::bad_alloc&) {
    // Said without allocating where it can be: memory may still be short.
    err << "myriad " << name
        << ": error: out of memory while working; a smaller job, fewer seeds or threads, or "
           "more memory\n"
        << std::flush;
    if (!err) {
      constexpr std::string_view kSaid = "myriad: error: out of memory while working\n";
      [[maybe_unused]] const auto ignored = ::write(STDERR_FILENO, kSaid.data(), kSaid.size());
    }
    return kExitFailure;
  } catch (const std::exception& e) {
    err << fmt::format("myriad {}: error: {}\n", name, e.what());
    return kExitFailure;
  } catch (...) {
    err << "myriad " << name << ": error: an unexpected failure\n";
    return kExitFailure;
  }
  out.flush();
  if (!out || !raw_out) {
    err << fmt::format("myriad {}: error: cannot write to standard output\n", name);
    return kExitFailure;
  }
  return code;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& raw_out, std::ostream& raw_err,
        const Environment& env) {
  // Everything printed goes through the one escaping point; files are written apart.
  PrintableStreambuf out_buffer(raw_out.rdbuf());
  PrintableStreambuf err_buffer(raw_err.rdbuf());
  std::ostream out(&out_buffer);
  std::ostream err(&err_buffer);
  err.tie(raw_err.tie());  // as std::cerr, standard output first: the lines keep their order
  CLI::App app{"Myriad: simulate large language model training on large GPU clusters.", "myriad"};
  app.set_version_flag("--version", version_text,
                       "print the version, build and devices, then exit");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 failure while working, 2 bad input or usage; interrupted, the "
      "signal's (130 for Ctrl-C), after removing unfinished outputs.");

  const Streams io{out, err, raw_err};
  std::map<const CLI::App*, Action> actions;
  for (Command c : {add_check_command(app, io, env), add_estimate_command(app, io, env),
                    add_simulate_command(app, io, env), add_campaign_command(app, io, env),
                    add_validate_command(app, io, env), add_calibrate_command(app, io, env),
                    add_sweep_command(app, io, env), add_plan_command(app, io, env),
                    add_place_command(app, io, env), add_trace_command(app, io, env),
                    add_explain_command(app, io, env)}) {
    c.app->set_version_flag("--version", version_text,
                            "print the version, build and devices, then exit");
    actions[c.app] = std::move(c.action);
  }

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  // Help and version are output too: not reaching the reader is a failure.
  const auto printed = [&](int code) {
    out.flush();
    if (out && raw_out) return code;
    err << "myriad: error: cannot write to standard output\n";
    return kExitFailure;
  };
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return printed(app.exit(e, out, err));
  } catch (const CLI::CallForAllHelp& e) {
    return printed(app.exit(e, out, err));
  } catch (const CLI::CallForVersion& e) {
    return printed(app.exit(e, out, err));
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitBadInput;
  }
  for (const auto* sub : app.get_subcommands()) {
    const auto it = actions.find(sub);
    if (it == actions.end()) continue;
    return run_verb(sub->get_name(), it->second, out, err, raw_out);
  }
  return kExitBadInput;
}

}  // namespace myriad::cli
