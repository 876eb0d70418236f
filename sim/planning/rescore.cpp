#include "sim/planning/rescore.hpp"

#include <algorithm>

#include "models/transformer/model_stats.hpp"
#include "sim/analytic/step_rates.hpp"

namespace myriad::sim {

RescoreEngines rescore_engines(const std::vector<std::string>& names) {
  const auto has = [&](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  return {has("step"), has("campaign")};
}

void rescore_by_step(Rescored& r, const models::scenario::Scenario& s, double step_s) {
  LayoutMetrics& m = r.layout.metrics;
  r.simulated_step_s = step_s;
  m.step_time_s = step_s;
  m.set_rates(
      step_rates(s, models::model_flops_per_step(s), models::hardware_flops_per_step(s), step_s));
  r.engine = "step";
}

void rescore_by_campaign(Rescored& r, const models::scenario::Scenario& s,
                         const CampaignOutcome& c) {
  LayoutMetrics& m = r.layout.metrics;
  r.days = c.days;
  r.ettr = c.ettr;
  r.reached = c.reached;
  m.days = c.days.mean;
  m.tokens_per_s = c.tokens_per_s;
  m.gpu_hours = c.gpu_hours;
  m.cost = gpu_cost(s.cluster.price_per_gpu_hour, c.gpu_hours);
  r.engine = r.simulated_step_s ? "campaign on step" : "campaign";
}

void add_growth(Rescored& r, const GrowthPhase& g) {
  const double rest = 1 - g.saved_fraction;
  r.layout.metrics = with_growth(r.layout.metrics, g);
  if (r.days) r.days = SeedSpread{g.metrics.days + rest * r.days->mean, rest * r.days->half_width};
}

void rank_rescored(std::vector<Rescored>& best, const PlanOptions& options) {
  std::stable_sort(best.begin(), best.end(), [&](const Rescored& a, const Rescored& b) {
    return ranks_before(a.layout, b.layout, options);
  });
}

}  // namespace myriad::sim
