#include "sim/plan/layout_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/scenario/scenario_checks.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim {
namespace {

std::vector<int> powers_of_two(int up_to) {
  std::vector<int> out;
  for (int v = 1; v <= up_to; v *= 2) out.push_back(v);
  return out;
}

template <class T>
std::vector<T> or_base(const std::vector<T>& values, T base) {
  return values.empty() ? std::vector<T>{base} : values;
}

// Better first; ties by enumeration order, so the result does not depend on
// anything but the space.
bool better(const PlannedLayout& a, const PlannedLayout& b, const Objective& o) {
  const double x = a.metrics.objective(o.name);
  const double y = b.metrics.objective(o.name);
  if (x != y) return o.maximize ? x > y : x < y;
  return a.index < b.index;
}

}  // namespace

double LayoutMetrics::objective(const std::string& name) const {
  if (name == "gpu-hours") return gpu_hours;
  if (name == "cost") return cost;
  if (name == "gpus") return gpus;
  if (name == "step-time") return step_time_s;
  if (name == "tokens-per-s") return tokens_per_s;
  if (name == "mfu") return mfu;
  if (name == "memory") return memory;
  return days;
}

LayoutMetrics metrics_of(const scenario::Scenario& s, const StepReport& r) {
  LayoutMetrics m;
  m.gpus = s.cluster.gpus;
  m.step_time_s = r.step_time_s;
  m.mfu = r.mfu;
  m.tokens_per_s = r.tokens_per_s;
  m.days = r.days_to_target;
  m.gpu_hours = r.days_to_target * 24 * s.cluster.gpus;
  m.cost = s.cluster.price_per_gpu_hour > 0 ? m.gpu_hours * s.cluster.price_per_gpu_hour
                                            : std::numeric_limits<double>::quiet_NaN();
  m.memory = r.memory_usable() > 0 ? r.memory_needed() / r.memory_usable()
                                   : std::numeric_limits<double>::infinity();
  m.fits = r.fits;
  return m;
}

SearchSpace default_space(const scenario::Scenario& s) {
  SearchSpace space;
  space.tp = powers_of_two(s.cluster.gpus_per_node);
  space.pp = powers_of_two(std::min(s.model.layers, 64));
  space.virtual_stages = {1, 2, 3, 4, 5, 6, 8};
  space.cp = s.model.seq_length >= 8192 ? std::vector<int>{1, 2, 4} : std::vector<int>{1};
  space.ep = {1};
  if (s.model.is_moe()) {
    space.ep.clear();
    for (int e = 1; e <= s.model.moe.experts; e *= 2) {
      if (s.model.moe.experts % e == 0) space.ep.push_back(e);
    }
  }
  space.micro_batch = {1, 2, 4, 8};
  space.zero = {0, 1, 2, 3};
  space.global_batch = {s.parallelism.global_batch};
  space.recompute = {scenario::Recompute::none, scenario::Recompute::selective,
                     scenario::Recompute::full};
  space.placement = {scenario::Placement::tp_cp_dp_pp, scenario::Placement::tp_cp_pp_dp};
  return space;
}

std::size_t candidate_count(const SearchSpace& space) {
  std::size_t n = 1;
  for (std::size_t size :
       {space.tp.size(), space.pp.size(), space.virtual_stages.size(), space.cp.size(),
        space.ep.size(), space.micro_batch.size(), space.zero.size(), space.global_batch.size(),
        space.recompute.size(), space.placement.size()}) {
    n *= std::max<std::size_t>(size, 1);
  }
  return n;
}

PlanResult search_layouts(const scenario::Scenario& base, const DeviceProfile& measured,
                          const SearchSpace& space, const PlanOptions& options) {
  // Put on the scenario's GPU once, not once per candidate.
  const DeviceProfile profile = on_hardware(measured, base.cluster.gpu);
  const auto& p0 = base.parallelism;
  const auto tps = or_base(space.tp, p0.tp);
  const auto pps = or_base(space.pp, p0.pp);
  const auto vs = or_base(space.virtual_stages, p0.virtual_stages);
  const auto cps = or_base(space.cp, p0.cp);
  const auto eps = or_base(space.ep, p0.ep);
  const auto mbs = or_base(space.micro_batch, p0.micro_batch);
  const auto zeros = or_base(space.zero, p0.zero);
  const auto batches = or_base(space.global_batch, p0.global_batch);
  const auto recomputes = or_base(space.recompute, p0.recompute);
  const auto placements = or_base(space.placement, p0.placement);

  PlanResult result;
  // The layouts kept: a heap whose top is the worst of them.
  const auto worse_first = [&](const PlannedLayout& a, const PlannedLayout& b) {
    return better(a, b, options.objective);
  };
  std::vector<PlannedLayout> kept;
  scenario::Scenario s = base;
  const scenario::Location where{base.file, 0, 0};
  for (int tp : tps)
    for (int pp : pps)
      for (int v : vs)
        for (int cp : cps)
          for (int ep : eps)
            for (int mb : mbs)
              for (int zero : zeros)
                for (int batch : batches)
                  for (auto recompute : recomputes)
                    for (auto placement : placements) {
                      const std::size_t index = result.candidates++;
                      if (options.progress && result.candidates % options.progress_every == 0) {
                        options.progress(result.candidates);
                      }
                      scenario::ParallelSpec p = p0;
                      p.tp = tp;
                      p.sp = tp > 1;
                      p.pp = pp;
                      p.virtual_stages = v;
                      p.first_stage_layers = 0;
                      p.last_stage_layers = 0;
                      p.cp = cp;
                      p.ep = ep;
                      p.micro_batch = mb;
                      p.zero = zero;
                      p.global_batch = batch;
                      p.recompute = recompute;
                      p.placement = placement;
                      apply_layout(s, p);
                      scenario::Diagnostics d;
                      scenario::check(s, where, d);
                      if (d.has_errors()) {
                        ++result.pruned;
                        const scenario::Diagnostic& first = *d.first_error();
                        auto& [count, example] = result.pruned_by[first.key];
                        if (count++ == 0) example = first.message;
                        continue;
                      }
                      ++result.evaluated;
                      const PlannedLayout l{index, s.parallelism,
                                            metrics_of(s, estimate(s, profile, Detail::summary))};
                      if (options.on_evaluated) options.on_evaluated(index, s.parallelism);
                      if (!(l.metrics.memory <= options.headroom)) {
                        ++result.over_memory;
                        continue;
                      }
                      const auto same = std::find_if(kept.begin(), kept.end(), [&](const auto& k) {
                        return k.metrics.step_time_s == l.metrics.step_time_s &&
                               k.metrics.memory == l.metrics.memory;
                      });
                      if (same != kept.end()) {
                        ++same->alike;
                        continue;
                      }
                      if (kept.size() < options.top) {
                        kept.push_back(l);
                        std::push_heap(kept.begin(), kept.end(), worse_first);
                      } else if (options.top > 0 && better(l, kept.front(), options.objective)) {
                        std::pop_heap(kept.begin(), kept.end(), worse_first);
                        kept.back() = l;
                        std::push_heap(kept.begin(), kept.end(), worse_first);
                      }
                    }
  std::sort(kept.begin(), kept.end(), worse_first);
  result.top = std::move(kept);
  return result;
}

void apply_layout(scenario::Scenario& s, const scenario::ParallelSpec& p) {
  s.parallelism = p;
  // Derived afresh: a layout's dp and schedule follow from its other keys.
  s.origins.erase("parallelism.dp");
  s.origins.erase("parallelism.schedule");
  scenario::derive(s);
}

std::vector<std::string> layout_overrides(const scenario::ParallelSpec& p) {
  return {
      fmt::format("parallelism.tp={}", p.tp),
      fmt::format("parallelism.sp={}", p.sp ? "true" : "false"),
      fmt::format("parallelism.pp={}", p.pp),
      fmt::format("parallelism.virtual_stages={}", p.virtual_stages),
      fmt::format("parallelism.cp={}", p.cp),
      fmt::format("parallelism.ep={}", p.ep),
      fmt::format("parallelism.micro_batch={}", p.micro_batch),
      fmt::format("parallelism.global_batch={}", p.global_batch),
      fmt::format("parallelism.zero={}", p.zero),
      fmt::format("parallelism.recompute={}",
                  models::name_in(scenario::kRecomputeNames, p.recompute)),
      fmt::format("parallelism.placement={}",
                  models::name_in(scenario::kPlacementNames, p.placement)),
  };
}

}  // namespace myriad::sim
