// Loading a scenario: read the YAML, resolve presets, parse every section by
// its schema, derive what was left to derive, and check the whole for
// impossible combinations. Every problem is collected and reported at once.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/config_tree.hpp"
#include "models/scenario/diagnostics.hpp"
#include "models/scenario/preset_library.hpp"
#include "models/scenario/resolved.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

struct LoadOptions {
  LoadOptions() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): {{folders}} reads as the options
  LoadOptions(std::vector<std::filesystem::path> presets, std::vector<std::string> sets = {})
      : preset_path(std::move(presets)), overrides(std::move(sets)) {}

  std::vector<std::filesystem::path> preset_path;  // folders holding hardware/, clusters/, models/
  // `key.path=value`, laid over the scenario in order before its presets are
  // resolved (overrides.hpp): `--set` on the command line.
  std::vector<std::string> overrides;
  // The caller searches the layouts (`myriad plan`): the scenario's own parallelism
  // is a template there, so what the checks find wrong with it under a `parallelism.`
  // key (a batch dp does not divide at another GPU count) is a warning that says so,
  // not an error. The model, cluster and training must still be valid.
  bool layout_searched = false;
};

// Throws ScenarioError with every problem found; warnings ride on the result.
Scenario load_scenario(const std::string& path, const LoadOptions& options);
// Same from text; `name` stands for the file in messages.
Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const LoadOptions& options);

// Same from a tree already read (a validation suite's case laid over its base).
Scenario load_scenario_tree(ConfigNode root, const std::string& name, const LoadOptions& options);

// Checks one preset file on its own: known keys, well-formed values, presets
// it builds on. Keys a scenario would add are not required.
// Every file the scenario was read from: the scenario itself, its presets and
// its failure replay (none of them may be an output).
std::vector<std::string> scenario_inputs(const Scenario& s);

Diagnostics check_preset(PresetKind kind, const std::string& name, const LoadOptions& options);

// The resolved scenario, ready to print as YAML or JSON.
Resolved resolve_for_output(const Scenario& scenario);

}  // namespace myriad::models::scenario
