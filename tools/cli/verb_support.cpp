// What every verb's run shares (verb_support.hpp): loading the scenario and its
// profile, checking and writing outputs.
#include "tools/cli/verb_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "models/scenario/loader.hpp"
#include "models/scenario/text_file.hpp"
#include "models/scenario/units.hpp"
#include "tools/report/html_report.hpp"

namespace myriad::cli {

std::string scenario_name(const ScenarioOptions& options) {
  return options.scenario == "-" ? std::string("<stdin>") : options.scenario;
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
    if (text.size() > models::scenario::kMaxScenarioBytes) {
      throw std::runtime_error(
          fmt::format("<stdin>: a scenario is at most {} MiB; standard input held more",
                      models::scenario::kMaxScenarioBytes >> 20));
    }
  }
  if (in.bad()) throw std::runtime_error("<stdin>: standard input could not be read");
  return text;
}

}  // namespace

std::optional<models::scenario::Scenario> load_for_cli(const ScenarioOptions& options, Streams io,
                                                       const Environment& env, std::string* text,
                                                       const VerbOutputs* outputs,
                                                       bool layout_searched) {
  try {
    models::scenario::LoadOptions load{preset_path(options, env), options.overrides};
    load.layout_searched = layout_searched;
    models::scenario::Scenario s = [&] {
      if (options.scenario == "-") {
        if (env.in == nullptr) {
          throw std::runtime_error("<stdin>: no standard input to read the scenario from");
        }
        std::string input = read_stdin(*env.in);
        if (text != nullptr) *text = input;
        return models::scenario::load_scenario_text(input, scenario_name(options), load);
      }
      if (text == nullptr) return models::scenario::load_scenario(options.scenario, load);
      *text = models::scenario::read_text_file(options.scenario, "scenario",
                                               models::scenario::kMaxScenarioBytes);
      return models::scenario::load_scenario_text(*text, options.scenario, load);
    }();
    for (const auto& w : s.warnings) io.err << w.str() << '\n';
    if (outputs != nullptr &&
        !outputs_ok(outputs->verb, outputs->outputs, models::scenario::scenario_inputs(s), io)) {
      return std::nullopt;
    }
    return s;
  } catch (const models::scenario::ScenarioError& e) {
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
    models::scenario::write_file_atomically(path, json.dump(2) + "\n", "the JSON report");
    return true;
  } catch (const std::runtime_error& e) {
    io.err << fmt::format("myriad {}: error: {}\n", verb, e.what());
    return false;
  }
}

bool write_html_report(const std::string& path, const nlohmann::json& data, std::string_view verb,
                       Streams io, const Environment& env) {
  try {
    models::scenario::write_file_atomically(path, report::html_page(data, env.report_dir),
                                            "the HTML report");
    return true;
  } catch (const std::exception& e) {
    io.err << fmt::format("myriad {}: error: --report: {}\n", verb, e.what());
    return false;
  }
}

ProgressLine::ProgressLine(Streams io, const Environment& env, std::string verb)
    : out_(io.progress), on_(env.terminal), verb_(std::move(verb)) {}

ProgressLine::~ProgressLine() {
  if (drawn_) out_ << "\r\033[K" << std::flush;
}

void ProgressLine::update(std::size_t done, std::size_t total, std::string_view what) {
  if (!on_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  out_ << fmt::format("\r{}: {} of {} {} ({:.0f} %)", verb_, done, total, what,
                      100.0 * static_cast<double>(done) / static_cast<double>(total))
       << std::flush;
}

bool outputs_ok(std::string_view verb, const std::vector<OutputOption>& outputs,
                const std::vector<std::string>& inputs, Streams io) {
  bool ok = true;
  std::vector<std::string> taken = inputs;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    std::string problem = models::scenario::output_problem(path, taken);
    if (problem.empty() && std::find(taken.begin(), taken.end(), path) != taken.end()) {
      problem = "another input or output has that name";
    }
    if (!problem.empty()) {
      io.err << fmt::format("myriad {}: error: {} {}: {}\n", verb, flag,
                            models::scenario::printable(path), problem);
      ok = false;
    }
    taken.push_back(path);
  }
  return ok;
}

std::optional<sim::DeviceProfile> profile_for(const models::scenario::Scenario& s,
                                              const std::string& path, Streams io,
                                              const Environment& env, ProfileCache* cache) {
  std::string file = path;
  const models::scenario::GpuSpec& gpu = s.cluster.gpu;
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
    if (s.training.precision == models::scenario::Precision::fp8 &&
        profile.gemm_fp8_efficiency <= 0) {
      io.err << fmt::format(
          "{}: error: training.precision: fp8 GEMMs cannot be priced with {}: its "
          "gemm_fp8_efficiency is 0 ({} has no fp8 measurement); give a profile of an fp8 GPU "
          "with --profile or cluster.gpu.profile\n",
          s.file, profile.file, profile.device);
      return std::nullopt;
    }
    // Usable memory is the capacity less what the profile reserves (CUDA context,
    // cuBLAS workspaces, NCCL buffers): with none left, no weight fits and every
    // figure of memory is negative.
    if (!(gpu.hbm_bytes > profile.memory_reserved_bytes)) {
      const auto origin = s.origins.find("cluster.gpu.hbm_capacity");
      const bool located = origin != s.origins.end() && origin->second.in_file();
      io.err << fmt::format(
          "{}: error: cluster.gpu.hbm_capacity: expected more than the {} that {} reserves "
          "(CUDA context, workspaces, NCCL buffers), found {}: no memory would be left for "
          "weights, optimizer states or activations\n",
          located ? origin->second.str() : s.file,
          models::scenario::format_human(profile.memory_reserved_bytes,
                                         models::scenario::Dimension::bytes),
          profile.file,
          models::scenario::format_human(gpu.hbm_bytes, models::scenario::Dimension::bytes));
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

}  // namespace myriad::cli
