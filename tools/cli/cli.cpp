#include "tools/cli/cli.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <map>

#include "models/scenario/loader.hpp"
#include "models/scenario/text_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/report/html_report.hpp"

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

std::string scenario_name(const ScenarioOptions& options) {
  return options.scenario == "-" ? std::string("<stdin>") : options.scenario;
}

void add_profile_option(CLI::App& cmd, std::string& profile) {
  cmd.add_option("--profile", profile,
                 "device profile JSON (default: calibration/profiles/<the GPU's preset>.json)");
}

std::vector<std::filesystem::path> preset_path(const ScenarioOptions& options,
                                               const Environment& env) {
  std::vector<std::filesystem::path> out(options.preset_path.begin(), options.preset_path.end());
  out.insert(out.end(), env.preset_path.begin(), env.preset_path.end());
  return out;
}

namespace {

// All of standard input, refused past the size a scenario file may have.
std::string read_stdin(std::istream& in) {
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > models::kMaxScenarioBytes) {
      throw std::runtime_error(
          fmt::format("<stdin>: a scenario is at most {} MiB; standard input held more",
                      models::kMaxScenarioBytes >> 20));
    }
  }
  if (in.bad()) throw std::runtime_error("<stdin>: standard input could not be read");
  return text;
}

}  // namespace

std::optional<scenario::Scenario> load_for_cli(const ScenarioOptions& options, Streams io,
                                               const Environment& env, std::string* text) {
  try {
    const scenario::LoadOptions load{preset_path(options, env), options.overrides};
    scenario::Scenario s = [&] {
      if (options.scenario == "-") {
        if (env.in == nullptr) {
          throw std::runtime_error("<stdin>: no standard input to read the scenario from");
        }
        std::string input = read_stdin(*env.in);
        if (text != nullptr) *text = input;
        return scenario::load_scenario_text(input, scenario_name(options), load);
      }
      if (text == nullptr) return scenario::load_scenario(options.scenario, load);
      *text = models::read_text_file(options.scenario, "scenario", models::kMaxScenarioBytes);
      return scenario::load_scenario_text(*text, options.scenario, load);
    }();
    for (const auto& w : s.warnings) io.err << w.str() << '\n';
    return s;
  } catch (const scenario::ScenarioError& e) {
    io.err << e.what();
    return std::nullopt;
  } catch (const std::runtime_error& e) {  // unreadable, or too large
    io.err << fmt::format("myriad: error: {}\n", e.what());
    return std::nullopt;
  }
}

bool write_json(const std::string& path, const nlohmann::json& json, std::string_view verb,
                Streams io) {
  try {
    models::write_file_atomically(path, json.dump(2) + "\n", "the JSON report");
    return true;
  } catch (const std::runtime_error& e) {
    io.err << fmt::format("myriad {}: error: {}\n", verb, e.what());
    return false;
  }
}

bool write_html_report(const std::string& path, const nlohmann::json& data, std::string_view verb,
                       Streams io, const Environment& env) {
  try {
    models::write_file_atomically(path, report::html_page(data, env.report_dir), "the HTML report");
    return true;
  } catch (const std::exception& e) {
    io.err << fmt::format("myriad {}: error: --report: {}\n", verb, e.what());
    return false;
  }
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](const std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (ec != std::errc{} || ptr != end || !std::isfinite(v) || v < lo || v > hi) {
          return fmt::format("expected a number in [{:g}, {:g}], found '{}'", lo, hi,
                             models::printable(text));
        }
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

bool outputs_ok(std::string_view verb, const std::vector<OutputOption>& outputs,
                const std::vector<std::string>& inputs, Streams io) {
  bool ok = true;
  std::vector<std::string> taken = inputs;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    std::string problem = models::output_problem(path, taken);
    if (problem.empty() && std::find(taken.begin(), taken.end(), path) != taken.end()) {
      problem = "another input or output has that name";
    }
    if (!problem.empty()) {
      io.err << fmt::format("myriad {}: error: {} {}: {}\n", verb, flag, models::printable(path),
                            problem);
      ok = false;
    }
    taken.push_back(path);
  }
  return ok;
}

std::optional<sim::DeviceProfile> profile_for(const scenario::Scenario& s, const std::string& path,
                                              Streams io, const Environment& env,
                                              ProfileCache* cache) {
  std::string file = path;
  const scenario::GpuSpec& gpu = s.cluster.gpu;
  if (file.empty()) {
    if (gpu.profile.empty()) {
      io.err << fmt::format(
          "{}: error: cluster.gpu.profile: '{}' has no hardware preset, so no device profile is "
          "known for it: name one (`profile: H100` borrows the H100's achieved rates; "
          "`myriad explain profiles` lists them), or give a file with --profile\n",
          s.file, gpu.name);
      return std::nullopt;
    }
    file = (env.profile_dir / (gpu.profile + ".json")).string();
    if (!std::filesystem::exists(file)) {
      io.err << fmt::format(
          "{}: error: cluster.gpu.profile: no device profile '{}' ({} does not exist); "
          "`myriad explain profiles` lists those there are, and `profile: NAME` borrows one\n",
          s.file, gpu.profile, file);
      return std::nullopt;
    }
  }
  try {
    const auto cached = cache != nullptr ? cache->find(file) : ProfileCache::iterator{};
    const bool hit = cache != nullptr && cached != cache->end();
    if (cache != nullptr && !hit) cache->emplace(file, sim::load_profile(file));
    sim::DeviceProfile profile =
        sim::on_hardware(cache != nullptr ? cache->at(file) : sim::load_profile(file), gpu);
    if (s.training.precision == scenario::Precision::fp8 && profile.gemm_fp8_efficiency <= 0) {
      io.err << fmt::format(
          "{}: error: training.precision: fp8 GEMMs cannot be priced with {}: its "
          "gemm_fp8_efficiency is 0 ({} has no fp8 measurement); give a profile of an fp8 GPU "
          "with --profile or cluster.gpu.profile\n",
          s.file, profile.file, profile.device);
      return std::nullopt;
    }
    return profile;
  } catch (const std::runtime_error& e) {
    io.err << "error: " << e.what() << '\n';
    return std::nullopt;
  }
}

std::string profile_line(const sim::DeviceProfile& p) {
  std::string line = fmt::format("  device profile: {} ({})\n", p.file, p.kind);
  if (p.borrowed()) {
    line += fmt::format(
        "  borrowed: efficiencies achieved on {}, priced on {}'s peaks and link rates\n", p.device,
        p.hardware);
  }
  line += fmt::format("  nvlink: {}\n", sim::nvlink_algorithm_note(p));
  return line;
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
  for (Command c : {add_check_command(app, io, env), add_estimate_command(app, io, env),
                    add_simulate_command(app, io, env), add_campaign_command(app, io, env),
                    add_validate_command(app, io, env), add_calibrate_command(app, io, env),
                    add_sweep_command(app, io, env), add_plan_command(app, io, env),
                    add_place_command(app, io, env), add_explain_command(app, io, env)}) {
    c.app->set_version_flag("--version", version_text,
                            "print the version, build and devices, then exit");
    actions[c.app] = std::move(c.action);
  }

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  // Help and version are output too: not reaching the reader is a failure.
  const auto printed = [&](int code) {
    out.flush();
    if (out) return code;
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
    int code = kExitFailure;
    try {
      code = it->second();
    } catch (const std::bad_alloc&) {
      err << fmt::format(
          "myriad {}: error: out of memory while working; a smaller job, fewer "
          "seeds or threads, or more memory\n",
          sub->get_name());
      return kExitFailure;
    } catch (const std::exception& e) {
      err << fmt::format("myriad {}: error: {}\n", sub->get_name(), e.what());
      return kExitFailure;
    }
    // A report that did not reach its reader is a failure (a full disk, a closed pipe).
    out.flush();
    if (!out) {
      err << fmt::format("myriad {}: error: cannot write to standard output\n", sub->get_name());
      return kExitFailure;
    }
    return code;
  }
  return kExitBadInput;
}

}  // namespace myriad::cli
