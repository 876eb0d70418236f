// The model-growth what-if (training.growth): the model grown from a smaller one
// trained first, which saves part of its own training to the same loss. The small
// model trains on the scenario's cluster, with the scenario's global batch, in the
// fastest layout a search finds for it; then the model trains on (1 - saved
// fraction) of its tokens. Days, GPU-hours and cost add up the two.
#pragma once

#include <cstddef>
#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/planning/layout_search.hpp"

namespace myriad::sim {

struct GrowthPhase {
  std::string from;                  // the small model's preset
  models::scenario::Scenario small;  // the small model's training, in its layout
  LayoutMetrics metrics;             // its figures: days and GPU-hours for growth.tokens
  std::size_t layouts = 0;           // layouts searched for it
  double saved_fraction = 0;
  std::string source;
};

// The small model's training for `s` (which must have training.growth). Throws
// std::invalid_argument when the small model is not smaller or no layout of it
// fits the cluster.
GrowthPhase plan_growth(const models::scenario::Scenario& s, const DeviceProfile& profile);

// The same as plan_growth, its search remembered for the last few small-model
// jobs asked about (a sweep asks once a row, a plan once).
GrowthPhase growth_phase(const models::scenario::Scenario& s, const DeviceProfile& profile);

// The model's own figures with growth: days, GPU-hours and cost of the small
// model's training plus (1 - saved fraction) of the model's.
LayoutMetrics with_growth(const LayoutMetrics& grown, const GrowthPhase& g);

// "tp 1 cp 2 pp 1 dp 1024": the degrees above 1 (tp, pp and dp always).
std::string layout_text(const models::scenario::ParallelSpec& p);

// One line for reports: "grown from llama3-8b (1 T tokens, 3.2 days), saving 30 % of
// the model's own training (source: ...)".
std::string describe_growth(const GrowthPhase& g);

}  // namespace myriad::sim
