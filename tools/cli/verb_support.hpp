// What every verb's run shares, without the command line library: the streams,
// the scenario and profile it reads, the outputs it writes. Each verb is two files:
// `<verb>_command.cpp`, the run (this header and `<verb>_options.hpp`), and
// `<verb>_options.cpp`, its options wired to CLI11 (tools/cli/commands.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "tools/cli/cli.hpp"

namespace myriad::cli {

// Standard output and error, for text meant for a terminal: both escape control
// bytes (tools/cli/printable_streambuf.hpp), so input echoed in a report or a
// message cannot drive the terminal. `progress` is standard error as it is, for
// the progress line Myriad draws itself (\r, erase line) when it is a terminal.
struct Streams {
  std::ostream& out;
  std::ostream& err;
  std::ostream& progress;
};

using Action = std::function<int()>;

// A progress line on standard error while it is a terminal (nothing otherwise):
// "VERB: DONE of TOTAL WHAT (P %)", redrawn at most five times a second, erased
// when the work ends (the destructor).
class ProgressLine {
 public:
  ProgressLine(Streams io, const Environment& env, std::string verb);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void update(std::size_t done, std::size_t total, std::string_view what);

 private:
  std::ostream& out_;
  bool on_ = false;
  bool drawn_ = false;
  std::string verb_;
  std::chrono::steady_clock::time_point last_{};
};

// Options every scenario-reading verb shares (add_scenario_options, commands.hpp).
struct ScenarioOptions {
  std::string scenario;  // a path, or "-" for standard input
  std::vector<std::string> preset_path;
  std::vector<std::string> overrides;  // --set key.path=value, in order
};

// How messages name the scenario: its path, or <stdin>.
std::string scenario_name(const ScenarioOptions& options);

// Writes `json` to `path` whole or not at all (models::scenario::write_file_atomically);
// on failure says why for `verb` and returns false.
bool write_json(const std::string& path, const nlohmann::json& json, std::string_view verb,
                Streams io);
// Writes the HTML report of `data` (tools/report/html_report.hpp) whole or not at
// all; on failure (a missing npm package, an unwritable path) tells why.
bool write_html_report(const std::string& path, const nlohmann::json& data, std::string_view verb,
                       Streams io, const Environment& env);
// An output option and the path it names (empty: not given).
struct OutputOption {
  std::string_view flag;
  std::string path;
};
// Checks every output before the work starts (models::scenario::output_problem): each an
// existing, writable folder, none an input or another output. Prints each problem
// for `verb`; false when there is one (the verb then exits kExitBadInput).
bool outputs_ok(std::string_view verb, const std::vector<OutputOption>& outputs,
                const std::vector<std::string>& inputs, Streams io);
// A verb's outputs, for load_for_cli to check against the files the scenario
// read (its presets and failure replay, which only loading reveals).
struct VerbOutputs {
  std::string_view verb;
  std::vector<OutputOption> outputs;
};
// Loads the scenario, printing warnings, or every problem (then nothing returns);
// with `text`, also hands back the scenario's text as read (file or stdin); with
// `outputs`, refuses (printing why) when one of them is a file the scenario read;
// with `layout_searched`, the scenario's own layout may be invalid (plan:
// models::scenario::LoadOptions::layout_searched).
std::optional<models::scenario::Scenario> load_for_cli(const ScenarioOptions& options, Streams io,
                                                       const Environment& env,
                                                       std::string* text = nullptr,
                                                       const VerbOutputs* outputs = nullptr,
                                                       bool layout_searched = false);
// The device profile for the scenario's GPU, put on that GPU (sim::on_hardware):
// `path` when given, else the one cluster.gpu.profile names (by default the GPU's
// hardware preset). Prints why when there is none.
// Loaded device profiles by file, for verbs that price many scenarios.
using ProfileCache = std::map<std::string, sim::DeviceProfile>;
std::optional<sim::DeviceProfile> profile_for(const models::scenario::Scenario& s,
                                              const std::string& path, Streams io,
                                              const Environment& env,
                                              ProfileCache* cache = nullptr);

// Which profile a report used, and whether its rates were borrowed from another GPU.
std::string profile_line(const sim::DeviceProfile& p);
std::vector<std::filesystem::path> preset_path(const ScenarioOptions& options,
                                               const Environment& env);

// "myriad 0.1.0 (commit ..., SimGrid 3.32, CUDA ...)".
std::string version_text();

}  // namespace myriad::cli
