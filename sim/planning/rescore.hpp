// A plan's best layouts re-scored by the slower engines (`myriad plan --rescore`):
// the step engine's step time (contention, stragglers) and the campaign engine's
// days under the scenario's failures and policies. sim/planning includes neither
// engine (step, campaign and plan are siblings): whoever runs them passes their
// results in, and these functions say what each result makes of the layout's
// figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/planning/growth.hpp"
#include "sim/planning/layout_search.hpp"

namespace myriad::sim {

// A mean over seeds and its 95 % half-width.
struct SeedSpread {
  double mean = 0;
  double half_width = 0;
};

// The campaign engine's outcome for a layout (its first policy set, over seeds).
struct CampaignOutcome {
  SeedSpread days;  // wall-clock days to the token target
  SeedSpread ettr;
  bool reached = true;      // every seed reached the token target
  double gpu_hours = 0;     // job and spares, the mean over seeds
  double tokens_per_s = 0;  // goodput, the mean over seeds
};

// A layout of the best K and the most faithful engine's figures for it.
struct Rescored {
  PlannedLayout layout;  // its metrics: the most faithful engine's figures
  int estimate_rank = 0;
  double estimated_step_s = 0;
  std::optional<double> simulated_step_s;
  std::string step_error;          // why the step engine could not play it
  std::optional<SeedSpread> days;  // campaign: wall-clock days to the target
  std::optional<SeedSpread> ettr;
  bool reached = true;  // every seed reached the token target
  std::string engine = "estimate";

  Rescored(const PlannedLayout& l, int rank)
      : layout(l), estimate_rank(rank), estimated_step_s(l.metrics.step_time_s) {}
  // The step engine's step over the estimate's (1 where it did not play): what a
  // campaign multiplies its analytic step times by.
  [[nodiscard]] double step_scale() const {
    return simulated_step_s ? *simulated_step_s / estimated_step_s : 1;
  }
};

// Which engines `--rescore` names ("step", "campaign").
struct RescoreEngines {
  bool step = false;
  bool campaign = false;
};
RescoreEngines rescore_engines(const std::vector<std::string>& names);

// The step engine played `s` (the layout applied) in `step_s`: step time, MFU,
// tokens/s, days, GPU-hours and cost become that step's (sim/analytic/step_rates.hpp).
void rescore_by_step(Rescored& r, const models::scenario::Scenario& s, double step_s);

// The campaign engine's outcome: days, tokens/s (goodput), GPU-hours (job and
// spares) and their cost at the cluster's price.
void rescore_by_campaign(Rescored& r, const models::scenario::Scenario& s,
                         const CampaignOutcome& c);

// Growth (training.growth): days, GPU-hours and cost with the small model's
// training added and the model's own shortened, the campaign's days likewise.
void add_growth(Rescored& r, const GrowthPhase& g);

// Ranked again by the most faithful figures (the deadline first); ties keep the
// estimate's order.
void rank_rescored(std::vector<Rescored>& best, const PlanOptions& options);

}  // namespace myriad::sim
