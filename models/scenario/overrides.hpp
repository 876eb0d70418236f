// Scenario keys given on the command line: `--set key.path=value`, laid over
// the scenario's tree, so a value set this way is read, converted and checked
// exactly as the same value in the file (units, ranges, unknown keys), and
// problems name it as `--set key.path`. Overrides that choose a preset
// (`model.preset=llama3-70b`, `cluster.gpu=H100`) apply before the presets are
// resolved; the others after, over what the presets gave, so that a list a
// preset holds can be reached by index.
#pragma once

#include <string>
#include <vector>

#include "models/scenario/config_tree.hpp"
#include "models/scenario/diagnostics.hpp"

namespace myriad::models::scenario {

// Applies each `key.path=value` in order (a later one wins). The path walks maps
// by key and lists by index (`cluster.network.tiers.0.oversubscription=3:1`),
// creating maps that do not exist yet; a GPU given by its preset name alone
// (`gpu: H100`) opens into `{preset: H100}`. The value is YAML: `8`, `400GB/s`,
// `true`, `[1, 2]` or `{tp: true}`. Malformed overrides are reported to
// `diagnostics`; the others still apply.
enum class OverridePhase { presets, values };

// An override that switched a section to another preset than the scenario's
// (`--set cluster.preset=gb200-nvl72` on a llama3-like cluster). The loader then
// takes from the new preset every key of the section it defines, even where the
// scenario's file set that key (the file's value belonged with the old preset:
// 2,048 GPUs of a Llama-3-like cluster are not whole GB200 racks), unless an
// override of the same command sets it; it warns for each such key. Naming the
// preset the section already had switches nothing.
struct PresetSwitch {
  std::string section;  // dotted: "cluster", "cluster.gpu", "model"
  std::string from;     // the preset the scenario named there ("" for none)
  std::string to;
  std::string by;  // the override's path, for messages: "cluster.preset"
};
struct PresetSwitches {
  std::vector<PresetSwitch> switched;
  std::vector<std::string> set;  // every path the command's overrides set, in either phase
  // The switch of `section`, or null.
  [[nodiscard]] const PresetSwitch* of(const std::string& section) const;
  // Whether an override set `path` or a key under it.
  [[nodiscard]] bool sets(const std::string& path) const;
};

// Returns, in the presets phase, the switches it made (nothing in the values phase).
PresetSwitches apply_overrides(ConfigNode& root, const std::vector<std::string>& overrides,
                               OverridePhase phase, Diagnostics& diagnostics);

}  // namespace myriad::models::scenario
