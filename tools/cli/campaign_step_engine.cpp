#include "tools/cli/campaign_step_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "models/plan/placement.hpp"
#include "sim/campaign/step_time_cache.hpp"
#include "sim/step/step_in_child.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {

std::optional<StepEngineFit> fit_to_step_engine(scenario::Scenario& s,
                                                const sim::DeviceProfile& profile, Streams io) {
  StepEngineFit fit;
  sim::campaign::StepTimeCache analytic(s, profile);
  fit.analytic_step_s = analytic.step_time_s(analytic.job_nodes());
  sim::StepOptions healthy;
  healthy.stragglers = std::vector<sim::Straggler>{};
  io.err << "campaign: the healthy step on the step engine\n";
  const sim::ChildStep h = sim::simulate_step_in_child(s, profile, healthy);
  if (!h.ok || !(h.step_time_s > 0)) {
    io.err << fmt::format("myriad campaign: error: --step-engine simulate: {}\n", h.error);
    return std::nullopt;
  }
  fit.simulated_step_s = h.step_time_s;
  // A straggler strikes any node alike, and what it costs depends on its
  // pipeline stage (a stage with slack absorbs it): the first, a middle and the
  // last stage are played, the middle one standing for all the others.
  const int pp = s.parallelism.pp;
  std::vector<std::pair<int, double>> stages;  // stage, weight
  if (pp <= 3) {
    for (int k = 0; k < pp; ++k) stages.emplace_back(k, 1.0);
  } else {
    stages = {{0, 1.0}, {pp / 2, pp - 2.0}, {pp - 1, 1.0}};
  }
  for (auto& g : s.faults.stragglers) {
    double factor = 0;
    std::vector<double> by_stage;
    for (const auto& [stage, weight] : stages) {
      sim::StepOptions slow;
      const int node = models::first_node(s, {stage, 0});
      slow.stragglers = std::vector<sim::Straggler>{{node, g.slowdown, g.name, g.component}};
      io.err << fmt::format("campaign: straggler '{}' on the step engine, stage {}\n", g.name,
                            stage);
      const sim::ChildStep x = sim::simulate_step_in_child(s, profile, slow);
      if (!x.ok || !(x.step_time_s > 0)) {
        io.err << fmt::format(
            "myriad campaign: error: --step-engine simulate: straggler '{}': {}\n", g.name,
            x.error);
        return std::nullopt;
      }
      by_stage.push_back(std::max(1.0, x.step_time_s / h.step_time_s));
      factor += weight * by_stage.back();
    }
    fit.given.push_back(g.slowdown);
    fit.by_stage.push_back(by_stage);
    g.slowdown = factor / pp;
    fit.effective.push_back(g.slowdown);
  }
  for (const auto& [stage, weight] : stages) fit.stages.push_back(stage);
  return fit;
}

std::string step_engine_text(const scenario::Scenario& s, const StepEngineFit& fit) {
  std::string out = fmt::format(
      "  step engine: healthy step {} (analytic {}, {:+.1f} %), every state scaled alike\n",
      seconds(fit.simulated_step_s), seconds(fit.analytic_step_s),
      100 * (fit.simulated_step_s / fit.analytic_step_s - 1));
  for (std::size_t i = 0; i < fit.given.size(); ++i) {
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < fit.stages.size(); ++k) {
      parts.push_back(fmt::format("stage {} {:.3f}x", fit.stages[k], fit.by_stage[i][k]));
    }
    out += fmt::format(
        "  straggler '{}': slowdown {:.3g} given, step {:.3f}x on the step engine on average "
        "over the stages ({})\n",
        s.faults.stragglers[i].name, fit.given[i], fit.effective[i], fmt::join(parts, ", "));
  }
  return out;
}

nlohmann::json step_engine_json(const scenario::Scenario& s, const StepEngineFit& fit) {
  nlohmann::json stragglers = nlohmann::json::array();
  for (std::size_t i = 0; i < fit.given.size(); ++i) {
    nlohmann::json by_stage = nlohmann::json::object();
    for (std::size_t k = 0; k < fit.stages.size(); ++k) {
      by_stage[std::to_string(fit.stages[k])] = fit.by_stage[i][k];
    }
    stragglers.push_back({{"name", s.faults.stragglers[i].name},
                          {"slowdown_given", fit.given[i]},
                          {"step_factor_simulated", fit.effective[i]},
                          {"step_factor_by_stage", by_stage}});
  }
  return {{"analytic_step_s", fit.analytic_step_s},
          {"simulated_step_s", fit.simulated_step_s},
          {"stragglers", stragglers}};
}

}  // namespace myriad::cli
