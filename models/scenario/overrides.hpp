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

namespace myriad::scenario {

// Applies each `key.path=value` in order (a later one wins). The path walks maps
// by key and lists by index (`cluster.network.tiers.0.oversubscription=3:1`),
// creating maps that do not exist yet; a GPU given by its preset name alone
// (`gpu: H100`) opens into `{preset: H100}`. The value is YAML: `8`, `400GB/s`,
// `true`, `[1, 2]` or `{tp: true}`. Malformed overrides are reported to
// `diagnostics`; the others still apply.
enum class OverridePhase { presets, values };
void apply_overrides(ConfigNode& root, const std::vector<std::string>& overrides,
                     OverridePhase phase, Diagnostics& diagnostics);

}  // namespace myriad::scenario
