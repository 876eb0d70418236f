#include "tools/cli/campaign_step_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "models/plan/placement.hpp"
#include "sim/campaign/step_time_cache.hpp"
#include "sim/step/step_in_child.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {

std::map<int, double> StepEngineFit::scale_by_dp(int job_dp) const {
  std::map<int, double> by_dp{{job_dp, simulated_step_s / analytic_step_s}};
  for (const auto& state : shrunk) by_dp[state.dp] = state.simulated_s / state.analytic_s;
  return by_dp;
}

namespace {

// One step on the step engine, in a child process; nothing, with the reason on
// io.err, when it cannot be played.
std::optional<double> play(const scenario::Scenario& s, const sim::DeviceProfile& profile,
                           std::vector<sim::Straggler> slow, const std::string& what, Streams io) {
  io.err << fmt::format("campaign: {} on the step engine\n", what);
  sim::StepOptions options;
  options.stragglers = std::move(slow);
  const sim::ChildStep x = sim::simulate_step_in_child(s, profile, options);
  if (!x.ok || !(x.step_time_s > 0)) {
    io.err << fmt::format("myriad campaign: error: --step-engine simulate: {}: {}\n", what,
                          x.error);
    return std::nullopt;
  }
  return x.step_time_s;
}

// The shrunk states a policy can pass through, largest first: each distinct
// data-parallel degree below the job's, with the fewest nodes that reach it.
std::vector<StepEngineFit::State> shrunk_states(const scenario::Scenario& s,
                                                sim::campaign::StepTimeCache& analytic) {
  std::vector<StepEngineFit::State> states;
  int last = s.parallelism.dp;
  for (int nodes = analytic.job_nodes() - 1; nodes >= analytic.min_nodes(); --nodes) {
    const int dp = analytic.dp_on(nodes);
    if (dp <= 0) break;
    if (dp == last) {
      if (!states.empty()) states.back().nodes = nodes;
      continue;
    }
    states.push_back({dp, nodes, nodes, analytic.step_time_s(nodes), 0});
    last = dp;
  }
  return states;
}

}  // namespace

std::optional<StepEngineFit> fit_to_step_engine(scenario::Scenario& s,
                                                const sim::DeviceProfile& profile,
                                                int shrunk_states_played, Streams io) {
  StepEngineFit fit;
  sim::campaign::StepTimeCache analytic(s, profile);
  fit.analytic_step_s = analytic.step_time_s(analytic.job_nodes());
  const auto healthy = play(s, profile, {}, "the healthy step", io);
  if (!healthy) return std::nullopt;
  fit.simulated_step_s = *healthy;
  // Shrunk states, where a policy shrinks: the largest ones, where a job
  // short of a few nodes spends its time.
  const bool shrinks = std::any_of(s.policies.begin(), s.policies.end(), [](const auto& p) {
    return p.no_spare == scenario::NoSpare::shrink;
  });
  if (shrinks) {
    auto states = shrunk_states(s, analytic);
    const auto played = std::min(states.size(), static_cast<std::size_t>(shrunk_states_played));
    fit.shrunk_not_played = static_cast<int>(states.size() - played);
    states.resize(played);
    for (auto& state : states) {
      const auto t = play(
          analytic.at_dp(state.dp), profile, {},
          fmt::format("the job shrunk to {} replica{}", state.dp, state.dp == 1 ? "" : "s"), io);
      if (!t) return std::nullopt;
      state.simulated_s = *t;
    }
    fit.shrunk = std::move(states);
  }
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
      const int node = models::first_node(s, {stage, 0});
      const auto t = play(s, profile, {{node, g.slowdown, g.name, g.component}},
                          fmt::format("straggler '{}', stage {}", g.name, stage), io);
      if (!t) return std::nullopt;
      by_stage.push_back(std::max(1.0, *t / fit.simulated_step_s));
      factor += weight * by_stage.back();
    }
    fit.given.push_back(g.slowdown);
    fit.by_stage.push_back(by_stage);
    g.slowdown = factor / pp;
    fit.effective.push_back(g.slowdown);
  }
  for (const auto& [stage, weight] : stages) fit.stages.push_back(stage);
  // Injected and replayed slow nodes: each at its own node's stage, one step
  // per distinct (stage, slowdown, component).
  std::map<std::tuple<int, double, scenario::Component>, double> played;
  const int job_nodes = analytic.job_nodes();
  for (std::size_t i = 0; i < s.faults.events.size(); ++i) {
    auto& e = s.faults.events[i];
    if (!(e.slowdown > 0) || e.id < 0 || e.id >= job_nodes) continue;
    const int stage = models::group_on_node(s, e.id).stage;
    const auto key = std::make_tuple(stage, e.slowdown, e.component);
    auto it = played.find(key);
    if (it == played.end()) {
      if (played.size() >= static_cast<std::size_t>(kMaxSlowNodeSteps)) {
        ++fit.slow_nodes_not_played;
        continue;
      }
      const auto t =
          play(s, profile, {{e.id, e.slowdown, "injected", e.component}},
               fmt::format("slow node {} (x{:.3g}, stage {})", e.id, e.slowdown, stage), io);
      if (!t) return std::nullopt;
      it = played.emplace(key, std::max(1.0, *t / fit.simulated_step_s)).first;
    }
    fit.slow_nodes.push_back({i, e.id, stage, e.slowdown, it->second});
    e.slowdown = it->second;
  }
  return fit;
}

std::string step_engine_text(const scenario::Scenario& s, const StepEngineFit& fit) {
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
        fit.slow_nodes_not_played, kMaxSlowNodeSteps);
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
