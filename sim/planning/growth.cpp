#include "sim/planning/growth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <utility>

#include "models/scenario/loader.hpp"
#include "models/scenario/resolved.hpp"
#include "models/scenario/units.hpp"
#include "models/transformer/model_stats.hpp"

namespace myriad::sim {
namespace {

std::string count(double n) {
  return models::scenario::format_human(n, models::scenario::Dimension::count);
}

// The small model's job: the scenario with its model and token target replaced.
models::scenario::Scenario small_job(const models::scenario::Scenario& s) {
  const models::scenario::GrowthSpec& g = s.training.growth;
  models::scenario::Scenario small = s;
  small.name = fmt::format("{} (grown from)", g.from);
  small.model = g.model;
  small.training.tokens = g.tokens;
  small.training.growth = {};
  std::erase_if(small.origins, [](const auto& o) {
    return o.first.starts_with("model.") || o.first.starts_with("training.growth.");
  });
  return small;
}

}  // namespace

GrowthPhase plan_growth(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  const models::scenario::GrowthSpec& g = s.training.growth;
  if (!g.given()) throw std::invalid_argument("the scenario has no training.growth");
  const double small_params = models::param_counts(g.model).total;
  const double params = models::param_counts(s.model).total;
  if (!(small_params < params)) {
    throw std::invalid_argument(fmt::format(
        "training.growth.from: {} has {} parameters, not fewer than the model's {}: growth starts "
        "from a smaller model",
        g.from, count(small_params), count(params)));
  }
  GrowthPhase phase;
  phase.small = small_job(s);
  phase.from = g.from;
  phase.saved_fraction = g.saved_fraction;
  phase.source = g.source;
  PlanOptions options;
  options.top = 1;
  const SearchSpace space = default_space(phase.small);
  const PlanResult found = search_layouts(phase.small, profile, space, options);
  phase.layouts = found.candidates;
  if (found.top.empty()) {
    throw std::invalid_argument(fmt::format(
        "training.growth.from: no layout of {} on these {} GPUs with a global batch of {} fits "
        "within {:.0f} % of memory ({} layouts searched, {} valid)",
        g.from, s.cluster.gpus, s.parallelism.global_batch, 100 * options.headroom,
        found.candidates, found.evaluated));
  }
  apply_layout(phase.small, found.top.front().parallelism);
  phase.metrics = found.top.front().metrics;
  return phase;
}

GrowthPhase growth_phase(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  // The small model's search, keyed by what it reads (its job, resolved, and the
  // profile); the saving and its source are the scenario's own.
  const std::string key =
      models::scenario::to_json(models::scenario::resolve_for_output(small_job(s))).dump() +
      profile.device + profile.file;
  thread_local std::deque<std::pair<std::string, GrowthPhase>> memo;
  const auto found =
      std::find_if(memo.begin(), memo.end(), [&](const auto& m) { return m.first == key; });
  GrowthPhase phase = found != memo.end() ? found->second : plan_growth(s, profile);
  if (found == memo.end()) {
    if (memo.size() == 8) memo.pop_front();
    memo.emplace_back(key, phase);
  }
  phase.saved_fraction = s.training.growth.saved_fraction;
  phase.source = s.training.growth.source;
  return phase;
}

std::string layout_text(const models::scenario::ParallelSpec& p) {
  std::string out = fmt::format("tp {}", p.tp);
  if (p.cp > 1) out += fmt::format(" cp {}", p.cp);
  if (p.ep > 1) out += fmt::format(" ep {}", p.ep);
  out += fmt::format(" pp {}", p.pp);
  if (p.virtual_stages > 1) out += fmt::format(" (v {})", p.virtual_stages);
  return out + fmt::format(" dp {}", p.dp);
}

LayoutMetrics with_growth(const LayoutMetrics& grown, const GrowthPhase& g) {
  const double own = 1 - g.saved_fraction;
  LayoutMetrics m = grown;
  m.days = g.metrics.days + own * grown.days;
  m.gpu_hours = g.metrics.gpu_hours + own * grown.gpu_hours;
  m.cost = g.metrics.cost + own * grown.cost;
  return m;
}

std::string describe_growth(const GrowthPhase& g) {
  const auto& p = g.small.parallelism;
  return fmt::format(
      "grown from {} ({} tokens in {:.1f} days at tp {} pp {} dp {}, the fastest of {} layouts), "
      "saving {:.0f} % of the model's own training (source: {})",
      g.from, count(g.small.training.tokens), g.metrics.days, p.tp, p.pp, p.dp, g.layouts,
      100 * g.saved_fraction, g.source);
}

}  // namespace myriad::sim
