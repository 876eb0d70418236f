// A sweep's rows as data (`myriad sweep`): each configuration the axes span
// (sweep.hpp) and what the analytic engine made of it, growth included, and the
// Pareto front of the objectives among the rows. Loading each configuration's
// scenario, MPI and printing are the command line's (tools/cli/sweep_command.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/planning/layout_search.hpp"
#include "sim/planning/sweep.hpp"

namespace myriad::sim {

// One configuration and what the analytic engine made of it.
struct SweepRow {
  std::vector<std::string> values;  // one per axis, as given
  std::string problem;              // why it has no result; empty when it has one
  LayoutMetrics m;
  bool front = false;
  // Kept for the HTML report only: the scenario and the engine's report.
  std::shared_ptr<const std::pair<models::scenario::Scenario, StepReport>> kept;

  [[nodiscard]] bool valid() const { return problem.empty(); }
};

// The values of `key=value` settings, in order.
std::vector<std::string> setting_values(const std::vector<std::string>& config);

// The row's figures for `s` on `profile`: the estimate's, with the small model's
// training where the scenario grows the model (the problem, where it cannot);
// the scenario and the report kept where `keep`.
void evaluate_row(SweepRow& row, const models::scenario::Scenario& s, const DeviceProfile& profile,
                  bool keep);

// Whether cost is among `objectives` and a row that could be on the front has no price.
bool front_needs_price(const std::vector<SweepRow>& rows, const std::vector<Objective>& objectives);

// Marks the rows on the Pareto front of `objectives` among the valid rows that fit
// in memory (none without objectives).
void mark_front(std::vector<SweepRow>& rows, const std::vector<Objective>& objectives);

}  // namespace myriad::sim
