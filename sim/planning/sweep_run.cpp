#include "sim/planning/sweep_run.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/planning/growth.hpp"

namespace myriad::sim {

std::vector<std::string> setting_values(const std::vector<std::string>& config) {
  std::vector<std::string> values;
  values.reserve(config.size());
  for (const auto& setting : config) values.push_back(setting.substr(setting.find('=') + 1));
  return values;
}

void evaluate_row(SweepRow& row, const models::scenario::Scenario& s, const DeviceProfile& profile,
                  bool keep) {
  const StepReport r = estimate(s, profile, Detail::summary);
  row.m = metrics_of(s, r);
  if (s.training.growth.given()) {
    // Days, GPU-hours and cost with the small model's training (growth_phase).
    try {
      row.m = with_growth(row.m, growth_phase(s, profile));
    } catch (const std::invalid_argument& e) {
      row.problem = e.what();
      return;
    }
  }
  if (keep)
    row.kept = std::make_shared<const std::pair<models::scenario::Scenario, StepReport>>(s, r);
}

namespace {

bool candidate(const SweepRow& r) { return r.valid() && r.m.fits; }

}  // namespace

bool front_needs_price(const std::vector<SweepRow>& rows,
                       const std::vector<Objective>& objectives) {
  const bool cost = std::any_of(objectives.begin(), objectives.end(),
                                [](const Objective& ob) { return ob.name == "cost"; });
  return cost && std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) {
           return candidate(r) && !std::isfinite(r.m.cost);
         });
}

void mark_front(std::vector<SweepRow>& rows, const std::vector<Objective>& objectives) {
  if (objectives.empty()) return;
  std::vector<bool> candidates;
  std::vector<std::vector<double>> points;
  for (const auto& r : rows) {
    candidates.push_back(candidate(r));
    std::vector<double> p;
    p.reserve(objectives.size());
    for (const auto& obj : objectives) p.push_back(r.m.objective(obj.name));
    points.push_back(std::move(p));
  }
  const std::vector<bool> front = pareto_front(points, objectives, candidates);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].front = front[i];
}

}  // namespace myriad::sim
