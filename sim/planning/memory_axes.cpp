#include "sim/planning/memory_axes.hpp"

#include <optional>

#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"

namespace myriad::sim {

bool fewest_recomputed(const models::scenario::Scenario& s, const DeviceProfile& profile,
                       double headroom, PlannedLayout& l) {
  if (l.parallelism.recompute != models::scenario::Recompute::full ||
      l.parallelism.recompute_layers > 0 || !(l.metrics.memory <= headroom)) {
    return false;
  }
  models::scenario::Scenario c = s;
  c.parallelism = l.parallelism;
  const std::optional<LayersFit> fewer = fewest_recomputed_layers(c, profile, headroom);
  if (!fewer) return false;
  c.parallelism.recompute_layers = l.parallelism.recompute_layers = fewer->layers;
  l.metrics = metrics_of(c, fewer->report);
  return true;
}

bool fewest_offloaded(const models::scenario::Scenario& s, const DeviceProfile& profile,
                      double headroom, PlannedLayout& l) {
  if (l.metrics.memory <= headroom) return false;
  models::scenario::Scenario c = s;
  c.parallelism = l.parallelism;
  // Layers or modules, not both (the checks refuse them together; modules are
  // not tried on a layout offloading layers).
  const std::optional<LayersFit> layers =
      c.parallelism.offload_modules.empty()
          ? fewest_offloaded_layers(c, profile, headroom, c.parallelism.offload_layers + 1)
          : std::nullopt;
  const std::optional<ModulesFit> modules = offloaded_modules_that_fit(c, profile, headroom);
  if (modules && (!layers || modules->report.step_time_s < layers->report.step_time_s)) {
    c.parallelism.offload_modules = l.parallelism.offload_modules = modules->modules;
    l.metrics = metrics_of(c, modules->report);
    return true;
  }
  if (!layers) return false;
  c.parallelism.offload_layers = l.parallelism.offload_layers = layers->layers;
  l.metrics = metrics_of(c, layers->report);
  return true;
}

}  // namespace myriad::sim
