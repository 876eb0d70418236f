#include "sim/analytic/fit_remedies.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/plan/step_plan.hpp"
#include "models/scenario/pipeline_checks.hpp"
#include "models/scenario/scenario_checks.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim {
namespace {

// Whether `r` needs at most `headroom` of its usable memory.
bool within(const StepReport& r, double headroom) {
  return r.memory_usable() > 0 && r.memory_needed() / r.memory_usable() <= headroom;
}

// Whether activations can go to the host at all: a host link and host memory on
// the GPU, and the profile's rates over that link.
bool host_takes_activations(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  const auto& gpu = s.cluster.gpu;
  return gpu.host_link_bw_Bps > 0 && gpu.host_memory_bytes > 0 &&
         profile.host_to_device_efficiency > 0 && profile.device_to_host_efficiency > 0;
}

// The smallest n in [lo, hi] for which `s` with `set(n)` fits in `headroom` of its
// usable memory, memory falling as n grows; with its estimate.
std::optional<LayersFit> fewest_that_fit(
    models::scenario::Scenario c, const DeviceProfile& profile, double headroom, int lo, int hi,
    const std::function<void(models::scenario::Scenario&, int)>& set) {
  std::optional<LayersFit> found;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    set(c, mid);
    StepReport r = estimate(c, profile, Detail::summary);
    if (within(r, headroom)) {
      found = LayersFit{mid, std::move(r)};
      hi = mid - 1;
    } else {
      lo = mid + 1;
    }
  }
  return found;
}

// The modules whose saved tensors the scenario's recomputation leaves, in the
// layer's order (offload_module_clash: the checks' rule).
std::vector<models::scenario::OffloadModule> offloadable_modules(
    const models::scenario::Scenario& s) {
  std::vector<models::scenario::OffloadModule> modules;
  for (const auto& [m, name] : models::scenario::kOffloadModuleNames) {
    if (models::scenario::offload_module_clash(s.parallelism, s.model.is_moe(), m).empty()) {
      modules.push_back(m);
    }
  }
  return modules;
}

}  // namespace

std::optional<LayersFit> fewest_recomputed_layers(const models::scenario::Scenario& s,
                                                  const DeviceProfile& profile, double headroom,
                                                  int from) {
  models::scenario::Scenario c = s;
  c.parallelism.recompute = models::scenario::Recompute::full;
  int most = 0;
  const models::ChunkGrid layers = models::plan_step(c).layers_by_chunk;
  for (std::size_t stage = 0; stage < layers.size(); ++stage) {
    for (const int n : layers[stage]) most = std::max(most, n);
  }
  // `most` recomputes every layer: recompute full itself.
  return fewest_that_fit(
      c, profile, headroom, std::max(1, from), most - 1,
      [](models::scenario::Scenario& x, int n) { x.parallelism.recompute_layers = n; });
}

std::optional<LayersFit> fewest_offloaded_layers(const models::scenario::Scenario& s,
                                                 const DeviceProfile& profile, double headroom,
                                                 int from) {
  const auto& p = s.parallelism;
  if (p.pp != 1 || p.recompute != models::scenario::Recompute::none ||
      !host_takes_activations(s, profile)) {
    return std::nullopt;
  }
  return fewest_that_fit(
      s, profile, headroom, std::max(1, from), s.model.layers - 1,
      [](models::scenario::Scenario& x, int n) { x.parallelism.offload_layers = n; });
}

std::optional<ModulesFit> offloaded_modules_that_fit(const models::scenario::Scenario& s,
                                                     const DeviceProfile& profile,
                                                     double headroom) {
  const auto& p = s.parallelism;
  if (p.offload_layers > 0 || p.recompute == models::scenario::Recompute::full ||
      !host_takes_activations(s, profile)) {
    return std::nullopt;
  }
  models::scenario::Scenario c = s;
  const auto fitting =
      [&](std::vector<models::scenario::OffloadModule> modules) -> std::optional<ModulesFit> {
    c.parallelism.offload_modules = modules;
    StepReport r = estimate(c, profile, Detail::summary);
    if (!within(r, headroom) || !r.host_fits()) return std::nullopt;
    return ModulesFit{std::move(modules), std::move(r)};
  };
  const std::vector<models::scenario::OffloadModule> every = offloadable_modules(s);
  if (every.empty()) return std::nullopt;
  std::optional<ModulesFit> best = fitting(every);
  if (!best) return std::nullopt;
  for (bool fewer = true; fewer && best->modules.size() > 1;) {
    fewer = false;
    std::optional<ModulesFit> next;
    for (std::size_t k = 0; k < best->modules.size(); ++k) {
      std::vector<models::scenario::OffloadModule> kept = best->modules;
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(k));
      std::optional<ModulesFit> f = fitting(std::move(kept));
      if (f && (!next || f->report.step_time_s < next->report.step_time_s)) next = std::move(f);
    }
    if (next && next->report.step_time_s <= best->report.step_time_s) {
      best = std::move(next);
      fewer = true;
    }
  }
  return best;
}

std::vector<FitRemedy> fit_remedies(const models::scenario::Scenario& s,
                                    const DeviceProfile& profile) {
  using models::scenario::Recompute;
  using models::scenario::Scenario;
  const auto& p = s.parallelism;
  std::vector<std::pair<FitRemedy, std::function<void(Scenario&)>>> changes;
  if (p.recompute == Recompute::none) {
    changes.push_back({{"parallelism.recompute", "selective"},
                       [](Scenario& c) { c.parallelism.recompute = Recompute::selective; }});
  }
  if (p.recompute != Recompute::full || p.recompute_layers > 0) {
    changes.push_back({{"parallelism.recompute", "full"}, [](Scenario& c) {
                         c.parallelism.recompute = Recompute::full;
                         c.parallelism.recompute_layers = 0;
                       }});
  }
  // Full recomputation does not go with DeepSeek-V3's recomputations nor with
  // activation offload (the checks refuse them).
  const bool partial = p.recompute == Recompute::full && p.recompute_layers > 0;
  const std::optional<LayersFit> fewer =
      p.recompute_moe_act || p.recompute_norms_and_up || p.offload_layers > 0
          ? std::nullopt
          : fewest_recomputed_layers(s, profile, 1.0, partial ? p.recompute_layers + 1 : 1);
  if (fewer) {
    const bool was_full = p.recompute == Recompute::full;
    changes.push_back({{"parallelism.recompute_layers", std::to_string(fewer->layers),
                        was_full ? "" : "parallelism.recompute=full"},
                       [n = fewer->layers](Scenario& c) {
                         c.parallelism.recompute = Recompute::full;
                         c.parallelism.recompute_layers = n;
                       }});
  }
  // From one layer: where the host overflows, fewer layers than the scenario's.
  const std::optional<LayersFit> offloaded = fewest_offloaded_layers(s, profile, 1.0, 1);
  if (offloaded && offloaded->layers != p.offload_layers) {
    changes.push_back({{"parallelism.offload_layers", std::to_string(offloaded->layers)},
                       [n = offloaded->layers](Scenario& c) { c.parallelism.offload_layers = n; }});
  }
  // Fine-grained offload (any pipeline): the modules that fit at the shortest
  // step, else every module whose saved tensors the scenario's recomputation
  // leaves (the most it can send to the host).
  if (p.offload_modules.empty() && p.offload_layers == 0 && p.recompute != Recompute::full) {
    const std::optional<ModulesFit> fit = offloaded_modules_that_fit(s, profile, 1.0);
    const std::vector<models::scenario::OffloadModule> modules =
        fit ? fit->modules : offloadable_modules(s);
    changes.push_back(
        {{"parallelism.offload_modules", models::scenario::offload_modules_text(modules)},
         [modules](Scenario& c) { c.parallelism.offload_modules = modules; }});
  }
  // Each further ZeRO stage: the distributed optimizer (1), gradients sharded too
  // and so reduce-scattered every micro-batch (2), parameters sharded too and
  // gathered layer by layer in every micro-batch (3); the engines price each.
  if (p.dp * p.cp > 1) {
    for (int next = p.zero + 1; next <= 3; ++next) {
      changes.push_back({{"parallelism.zero", std::to_string(next)},
                         [next](Scenario& c) { c.parallelism.zero = next; }});
    }
  }
  if (p.micro_batch > 1 && p.micro_batch % 2 == 0) {
    changes.push_back({{"parallelism.micro_batch", std::to_string(p.micro_batch / 2)},
                       [](Scenario& c) { c.parallelism.micro_batch /= 2; }});
  }
  // DeepSeek-V3's recomputations (s3.2.3, s3.3.3), where the model has what they redo.
  if (s.model.is_mla() && p.recompute == Recompute::none && !p.recompute_norms_and_up) {
    changes.push_back({{"parallelism.recompute_norms_and_up", "true"},
                       [](Scenario& c) { c.parallelism.recompute_norms_and_up = true; }});
  }
  if (s.model.is_moe() && p.recompute != Recompute::full && !p.recompute_moe_act) {
    changes.push_back({{"parallelism.recompute_moe_act", "true"},
                       [](Scenario& c) { c.parallelism.recompute_moe_act = true; }});
  }
  const StepReport as_is = estimate(s, profile, Detail::summary);
  const double before = as_is.memory_needed();
  std::vector<FitRemedy> out;
  const models::scenario::Location where{s.file, 0, 0};
  for (auto& [remedy, apply] : changes) {
    Scenario changed = s;
    apply(changed);
    models::scenario::Diagnostics d;
    models::scenario::check(changed, where, d);
    if (d.has_errors()) continue;
    const StepReport r = estimate(changed, profile, Detail::summary);
    // Kept where it saves HBM, or where it makes offloaded activations fit the host.
    const bool host_saved = !as_is.host_fits() && r.host_fits();
    if (r.memory_needed() >= before && !host_saved) continue;
    remedy.memory_needed = r.memory_needed();
    remedy.host_fits = r.host_fits();
    remedy.memory_usable = r.memory_usable();
    remedy.step_time_s = r.step_time_s;
    out.push_back(std::move(remedy));
  }
  return out;
}

}  // namespace myriad::sim
