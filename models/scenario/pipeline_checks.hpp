// The pipeline's cross-checks: stages, their layers and chunks, the schedule;
// part of check() in scenario_checks.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/checker.hpp"

namespace myriad::models::scenario {

void check_pipeline(const Checker& c);

// Why fine-grained offload cannot take module `m` beside the rest of the layout
// (a layer without it, or a recomputation that already keeps less of its
// tensors; whole-layer recomputation and layer offload refuse every module and
// are the checks' own); empty where it can. The checks, the fit remedy and the
// layout search read it.
std::string offload_module_clash(const ParallelSpec& p, bool moe, OffloadModule m);

// Modules' names joined by `separator`: "attn_norm core_attn".
std::string offload_module_names(const std::vector<OffloadModule>& modules,
                                 std::string_view separator);
// As a --set value takes them: [attn_norm,core_attn].
std::string offload_modules_text(const std::vector<OffloadModule>& modules);

}  // namespace myriad::models::scenario
