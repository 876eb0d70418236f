// The report of one training step as `estimate` prints and writes it: headline,
// breakdown, memory, collectives and compute ops. `simulate` prints the same
// report for its simulated step and adds what only the simulation knows.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/planning/growth.hpp"

namespace myriad::cli {

// The terminal report: scenario line, headline, breakdown, memory, collectives, ops.
// What the network's settings change, a line each: the topology, in-network
// reduction, planes and up ports out of service; `layouts_vary` (a search) leaves
// out what depends on where a layout's groups sit.
std::string network_lines(const models::scenario::Scenario& s, bool layouts_vary);

std::string step_report_text(const models::scenario::Scenario& s, const sim::DeviceProfile& profile,
                             const sim::StepReport& r);

// The same as JSON: scenario, profile, step_time_s, mfu, hfu, tokens_per_s,
// days_to_target, model_flops_per_step, breakdown, memory, collectives.
// The growth what-if (training.growth) beside the estimate: the small model's
// training, the model's shortened one, both in all and what growing saves, as a
// table and as JSON.
std::string growth_text(const models::scenario::Scenario& s, const sim::GrowthPhase& g,
                        const sim::StepReport& r);
nlohmann::json growth_json(const models::scenario::Scenario& s, const sim::GrowthPhase& g,
                           const sim::StepReport& r);

nlohmann::json step_report_json(const models::scenario::Scenario& s,
                                const sim::DeviceProfile& profile, const sim::StepReport& r);

// Under a layout that does not fit: each change that would save memory, as the
// --set that makes it, what it needs and what it does to the step (`r`'s).
std::string fit_remedies_text(const sim::StepReport& r,
                              const std::vector<sim::FitRemedy>& remedies);
nlohmann::json fit_remedies_json(const std::vector<sim::FitRemedy>& remedies);

}  // namespace myriad::cli
