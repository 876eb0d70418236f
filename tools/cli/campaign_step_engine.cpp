#include "tools/cli/campaign_step_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sim/step/step_in_child.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {

namespace {

// One step on the step engine, in a child process; nothing, with the reason on
// io.err, when it cannot be played.
std::optional<double> play(const models::scenario::Scenario& s, const sim::DeviceProfile& profile,
                           const sim::campaign::StepToPlay& step, Streams io) {
  io.err << fmt::format("campaign: {} on the step engine\n", step.what);
  sim::StepOptions options;
  options.stragglers = std::vector<sim::Straggler>{};
  if (step.slow) {
    options.stragglers->push_back(
        {step.slow->node, step.slow->slowdown, step.slow->name, step.slow->component});
  }
  const sim::ChildStep x =
      sim::simulate_step_in_child(step.shrunk ? *step.shrunk : s, profile, options);
  if (!x.ok || !(x.step_time_s > 0)) {
    io.err << fmt::format("myriad campaign: error: --step-engine simulate: {}: {}\n", step.what,
                          x.error);
    return std::nullopt;
  }
  return x.step_time_s;
}

}  // namespace

std::optional<StepEngineFit> fit_to_step_engine(models::scenario::Scenario& s,
                                                const sim::DeviceProfile& profile,
                                                int shrunk_states, Streams io) {
  const sim::campaign::StepEnginePlan plan =
      sim::campaign::plan_step_engine_fit(s, profile, shrunk_states);
  std::vector<double> played;
  for (const auto& step : plan.steps) {
    const auto t = play(s, profile, step, io);
    if (!t) return std::nullopt;
    played.push_back(*t);
  }
  return sim::campaign::fit_step_engine(s, plan, played);
}

std::string step_engine_text(const models::scenario::Scenario& s, const StepEngineFit& fit) {
  std::string out = fmt::format("  step engine: healthy step {} (analytic {}, {:+.1f} %){}\n",
                                seconds(fit.simulated_step_s), seconds(fit.analytic_step_s),
                                100 * (fit.simulated_step_s / fit.analytic_step_s - 1),
                                fit.shrunk.empty() ? ", every state scaled alike" : "");
  for (const auto& state : fit.shrunk) {
    out += fmt::format(
        "  shrunk to {} replica{} ({} to {} nodes): step {} (analytic {}, {:+.1f} %)\n", state.dp,
        state.dp == 1 ? "" : "s", state.nodes, state.most_nodes, seconds(state.simulated_s),
        seconds(state.analytic_s), 100 * (state.simulated_s / state.analytic_s - 1));
  }
  if (fit.shrunk_not_played > 0) {
    out += fmt::format(
        "  {} smaller shrunk state{} not played: scaled as the smallest played one "
        "(--step-engine-states)\n",
        fit.shrunk_not_played, fit.shrunk_not_played == 1 ? "" : "s");
  }
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
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < std::min(kShown, fit.slow_nodes.size()); ++i) {
    const auto& n = fit.slow_nodes[i];
    out += fmt::format("  slow node {} (event {}, stage {}): slowdown {:.3g} given, step {:.3f}x\n",
                       n.node, n.event, n.stage, n.given, n.effective);
  }
  if (fit.slow_nodes.size() > kShown) {
    out += fmt::format("  ... and {} more slow nodes (--json lists them all)\n",
                       fit.slow_nodes.size() - kShown);
  }
  if (fit.slow_nodes_not_played > 0) {
    out += fmt::format(
        "  {} slow-node events beyond {} distinct steps not played: their slowdown as given\n",
        fit.slow_nodes_not_played, sim::campaign::kMaxSlowNodeSteps);
  }
  return out;
}

nlohmann::json step_engine_json(const models::scenario::Scenario& s, const StepEngineFit& fit) {
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
  nlohmann::json shrunk = nlohmann::json::array();
  for (const auto& state : fit.shrunk) {
    shrunk.push_back({{"dp", state.dp},
                      {"nodes", state.nodes},
                      {"most_nodes", state.most_nodes},
                      {"analytic_step_s", state.analytic_s},
                      {"simulated_step_s", state.simulated_s}});
  }
  nlohmann::json slow_nodes = nlohmann::json::array();
  for (const auto& n : fit.slow_nodes) {
    slow_nodes.push_back({{"event", n.event},
                          {"node", n.node},
                          {"stage", n.stage},
                          {"slowdown_given", n.given},
                          {"step_factor_simulated", n.effective}});
  }
  return {{"analytic_step_s", fit.analytic_step_s},
          {"simulated_step_s", fit.simulated_step_s},
          {"shrunk_states", shrunk},
          {"shrunk_states_not_played", fit.shrunk_not_played},
          {"stragglers", stragglers},
          {"slow_nodes", slow_nodes},
          {"slow_nodes_not_played", fit.slow_nodes_not_played}};
}

}  // namespace myriad::cli
