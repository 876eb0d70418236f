// `myriad place --grain op`: the pipeline placed op by op (sim/stage_split/op_grain.hpp),
// beside the layer splits found at layer grain, all priced on the op graph.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>
#include <vector>

#include "sim/stage_split/pipeline_split.hpp"

namespace myriad::cli {

// Prints the op-grain section and returns it as JSON. `layer_splits` are the
// layer-grain placements' splits (algorithm, stage layers; empty when it had
// none), placed on the op graph as they are; `algorithms` those Baechi's placers
// run op by op.
nlohmann::json print_op_grain(
    const models::scenario::Scenario& s, const sim::DeviceProfile& profile,
    const sim::PipelineGraph& units,
    const std::vector<std::pair<sim::StageSplit, std::vector<int>>>& layer_splits,
    const std::vector<sim::StageSplit>& algorithms, std::ostream& out);

}  // namespace myriad::cli
