// What would make a layout fit when it does not (issue 38: "when a published
// layout is refused, the report says what would make it fit"): the single changes
// a user tries first, each estimated on the same GPU, with the memory it needs and
// what it costs the step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

struct FitRemedy {
  std::string key;           // the scenario key it changes: "parallelism.recompute"
  std::string value;         // its new value, as --set takes it: "selective"
  std::string with{};        // a change it needs with it, as --set takes it, or ""
  double memory_needed = 0;  // bytes a GPU of the fullest stage needs with it
  double memory_usable = 0;
  double step_time_s = 0;  // the step with it
  bool host_fits = true;   // offloaded activations within the host's memory
  [[nodiscard]] bool fits() const { return memory_needed <= memory_usable && host_fits; }
};

// Partial recomputation's bisection (memory falls as more of each chunk's layers
// are recomputed): the fewest layers of each model chunk, `from` on, that full
// recomputation must cover for `s` to need at most `headroom` of its usable
// memory, fewer than every layer of its largest chunk; with their estimate.
// None where even one fewer than every layer needs more.
struct LayersFit {
  int layers = 0;  // parallelism.recompute_layers (offload_layers)
  StepReport report;
};
std::optional<LayersFit> fewest_recomputed_layers(const models::scenario::Scenario& s,
                                                  const DeviceProfile& profile, double headroom,
                                                  int from = 1);

// Activation offload's bisection (memory falls as more layers go to the host):
// the fewest layers, `from` on and fewer than the model's, whose activations
// `s` must offload to need at most `headroom` of its usable memory with the
// offloaded ones in the host's (parallelism.offload_layers); with their estimate.
// None where no count fits, or where offload does not apply (pp above 1,
// recomputation, no host link or host memory, a profile without its rates).
std::optional<LayersFit> fewest_offloaded_layers(const models::scenario::Scenario& s,
                                                 const DeviceProfile& profile, double headroom,
                                                 int from = 1);

// Fine-grained activation offload that fits (parallelism.offload_modules, any
// pipeline and schedule): every module the scenario's recomputation leaves, if `s`
// then needs at most `headroom` of its usable memory with the host's share within
// the host's memory; then, one at a time, the module whose return to the GPU gives
// the shortest step while it still fits, as long as the step gets no longer (at
// equal steps the fewer modules, less host memory and PCIe traffic); with its
// estimate. None where even every module does not fit, or where offload does not
// apply (whole layers offloaded, full recomputation, no host link or host memory,
// a profile without its rates, no module left by the recomputation).
struct ModulesFit {
  std::vector<models::scenario::OffloadModule> modules;
  StepReport report;
};
std::optional<ModulesFit> offloaded_modules_that_fit(const models::scenario::Scenario& s,
                                                     const DeviceProfile& profile, double headroom);

// In this order, each alone and only where it applies and the scenario's checks
// accept it: selective, then full recomputation, then the fewest layers a chunk
// full recomputation needs to cover to fit (parallelism.recompute_layers, where
// fewer than all fit), the fewest layers to offload (parallelism.offload_layers,
// on a pipeline of one stage without recomputation), the modules to offload
// (offloaded_modules_that_fit, else every module the recomputation leaves); ZeRO 1 from 0, else
// ZeRO 3 (over dp * cp > 1 ranks); half the micro-batch (twice the micro-batches); DeepSeek-V3's
// recomputations. A change that saves no memory is left out, unless it makes offloaded activations
// fit the host's (fewer layers offloaded, where too many overflow it).
std::vector<FitRemedy> fit_remedies(const models::scenario::Scenario& s,
                                    const DeviceProfile& profile);

}  // namespace myriad::sim
