#include "sim/campaign/step_engine_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "models/plan/rank_layout.hpp"
#include "sim/campaign/step_time_cache.hpp"

namespace myriad::sim::campaign {

std::map<int, double> StepEngineFit::scale_by_dp(int job_dp) const {
  std::map<int, double> by_dp{{job_dp, simulated_step_s / analytic_step_s}};
  for (const auto& state : shrunk) by_dp[state.dp] = state.simulated_s / state.analytic_s;
  return by_dp;
}

namespace {

// The shrunk states a policy can pass through, largest first: each distinct
// data-parallel degree below the job's, with the fewest nodes that reach it.
std::vector<StepEngineFit::State> shrunk_states(const models::scenario::Scenario& s,
                                                StepTimeCache& analytic) {
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

// Shrunk states, where a policy shrinks: the largest ones, where a job short of a
// few nodes spends its time.
void plan_shrunk(const models::scenario::Scenario& s, StepTimeCache& analytic, int most,
                 StepEnginePlan& plan) {
  const bool shrinks = std::any_of(s.policies.begin(), s.policies.end(), [](const auto& p) {
    return p.no_spare == models::scenario::NoSpare::shrink;
  });
  if (!shrinks) return;
  auto states = shrunk_states(s, analytic);
  const auto played = std::min(states.size(), static_cast<std::size_t>(most));
  plan.fit.shrunk_not_played = static_cast<int>(states.size() - played);
  states.resize(played);
  for (const auto& state : states) {
    plan.steps.push_back(
        {fmt::format("the job shrunk to {} replica{}", state.dp, state.dp == 1 ? "" : "s"),
         analytic.at_dp(state.dp), std::nullopt});
  }
  plan.fit.shrunk = std::move(states);
}

// A straggler strikes any node alike, and what it costs depends on its pipeline
// stage (a stage with slack absorbs it): the first, a middle and the last stage
// are played, the middle one standing for all the others.
void plan_stragglers(const models::scenario::Scenario& s, StepEnginePlan& plan) {
  const int pp = s.parallelism.pp;
  if (pp <= 3) {
    for (int k = 0; k < pp; ++k) plan.stages.emplace_back(k, 1.0);
  } else {
    plan.stages = {{0, 1.0}, {pp / 2, pp - 2.0}, {pp - 1, 1.0}};
  }
  for (const auto& g : s.faults.stragglers) {
    for (const auto& [stage, weight] : plan.stages) {
      const int node = models::first_node(s, {stage, 0});
      plan.steps.push_back({fmt::format("straggler '{}', stage {}", g.name, stage), std::nullopt,
                            StepToPlay::Slow{node, g.slowdown, g.name, g.component}});
    }
  }
  for (const auto& [stage, weight] : plan.stages) plan.fit.stages.push_back(stage);
}

// Injected and replayed slow nodes: each at its own node's stage, one step per
// distinct (stage, slowdown, component).
void plan_slow_nodes(const models::scenario::Scenario& s, int job_nodes, StepEnginePlan& plan) {
  std::map<std::tuple<int, double, models::scenario::Component>, std::size_t> played;
  for (std::size_t i = 0; i < s.faults.events.size(); ++i) {
    const auto& e = s.faults.events[i];
    if (!(e.slowdown > 0) || e.id < 0 || e.id >= job_nodes) continue;
    const int stage = models::group_on_node(s, e.id).stage;
    const auto key = std::make_tuple(stage, e.slowdown, e.component);
    auto it = played.find(key);
    if (it == played.end()) {
      if (played.size() >= static_cast<std::size_t>(kMaxSlowNodeSteps)) {
        ++plan.fit.slow_nodes_not_played;
        continue;
      }
      plan.steps.push_back(
          {fmt::format("slow node {} (x{:.3g}, stage {})", e.id, e.slowdown, stage), std::nullopt,
           StepToPlay::Slow{e.id, e.slowdown, "injected", e.component}});
      it = played.emplace(key, plan.steps.size() - 1).first;
    }
    plan.slow_events.push_back({i, stage, it->second});
  }
}

}  // namespace

StepEnginePlan plan_step_engine_fit(const models::scenario::Scenario& s,
                                    const DeviceProfile& profile, int shrunk_states_played) {
  StepEnginePlan plan;
  StepTimeCache analytic(s, profile);
  plan.fit.analytic_step_s = analytic.step_time_s(analytic.job_nodes());
  plan.steps.push_back({"the healthy step", std::nullopt, std::nullopt});
  plan_shrunk(s, analytic, shrunk_states_played, plan);
  plan_stragglers(s, plan);
  plan_slow_nodes(s, analytic.job_nodes(), plan);
  return plan;
}

StepEngineFit fit_step_engine(models::scenario::Scenario& s, const StepEnginePlan& plan,
                              const std::vector<double>& played) {
  if (played.size() != plan.steps.size()) {
    throw std::invalid_argument(fmt::format("fit_step_engine: {} step times for {} steps",
                                            played.size(), plan.steps.size()));
  }
  StepEngineFit fit = plan.fit;
  std::size_t next = 0;
  fit.simulated_step_s = played[next++];
  for (auto& state : fit.shrunk) state.simulated_s = played[next++];
  // A slow step over the healthy one, never below 1.
  const auto factor = [&](std::size_t step) {
    return std::max(1.0, played[step] / fit.simulated_step_s);
  };
  const int pp = s.parallelism.pp;
  for (auto& g : s.faults.stragglers) {
    double sum = 0;
    std::vector<double> by_stage;
    for (const auto& [stage, weight] : plan.stages) {
      by_stage.push_back(factor(next++));
      sum += weight * by_stage.back();
    }
    fit.given.push_back(g.slowdown);
    fit.by_stage.push_back(std::move(by_stage));
    g.slowdown = sum / pp;
    fit.effective.push_back(g.slowdown);
  }
  for (const auto& e : plan.slow_events) {
    auto& event = s.faults.events[e.event];
    const double effective = factor(e.step);
    fit.slow_nodes.push_back({e.event, event.id, e.stage, event.slowdown, effective});
    event.slowdown = effective;
  }
  return fit;
}

}  // namespace myriad::sim::campaign
