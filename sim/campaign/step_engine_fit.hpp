// The campaign on the step engine's pace (`myriad campaign --step-engine simulate`):
// the healthy step, the largest shrunk states (when a policy shrinks), each
// straggler process's slow step and each injected slow node's, played on the step
// engine before the campaign. The campaign then runs each cluster state's
// analytic step time scaled by the played state nearest to it, and each slow
// node at its effective factor (a slow node rarely slows the whole step by its
// full slowdown: the pipeline and overlap absorb part of it).
//
// sim/campaign does not include the step engine (step and campaign are
// siblings): plan_step_engine_fit says which steps to play, whoever runs
// simulate_step plays them in that order, and fit_step_engine turns their times
// into the fit.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim::campaign {

struct StepEngineFit {
  double analytic_step_s = 0;
  double simulated_step_s = 0;
  struct State {
    int dp = 0;
    int nodes = 0;       // the fewest nodes the job runs at this degree on
    int most_nodes = 0;  // and the most
    double analytic_s = 0;
    double simulated_s = 0;
  };
  std::vector<State> shrunk;                  // the shrunk states played, largest first
  int shrunk_not_played = 0;                  // smaller states, at the nearest played one's ratio
  std::vector<double> given;                  // each straggler process's slowdown, as given
  std::vector<double> effective;              // the step engine's slow step over its healthy one
  std::vector<int> stages;                    // the pipeline stages played with a slow node
  std::vector<std::vector<double>> by_stage;  // each straggler's factor on each of them
  struct SlowNode {
    std::size_t event = 0;  // index in faults.events
    int node = 0;
    int stage = 0;
    double given = 0;
    double effective = 0;
  };
  std::vector<SlowNode> slow_nodes;  // injected or replayed slow nodes, played at their node
  int slow_nodes_not_played = 0;     // beyond kMaxSlowNodeSteps: their slowdown as given
  // The step engine's step over the analytic one, by data-parallel degree.
  [[nodiscard]] std::map<int, double> scale_by_dp(int job_dp) const;
};

// At most this many distinct slow-node steps (stage, slowdown, component) are
// played; a replayed log with more keeps the rest's slowdowns as given.
constexpr int kMaxSlowNodeSteps = 24;

// One step for the step engine to play: the job, or one of its shrunk states,
// healthy or with one slow node.
struct StepToPlay {
  std::string what;                                  // "the healthy step", "straggler 'x', stage 3"
  std::optional<models::scenario::Scenario> shrunk;  // a shrunk state's scenario; else the job's
  struct Slow {
    int node = 0;
    double slowdown = 1;
    std::string name;  // the straggler process's, or "injected"
    models::scenario::Component component = models::scenario::Component::gpu;
  };
  std::optional<Slow> slow;  // none: healthy
};

// The steps a fit of `s` plays, in order (the healthy step first), and what it
// keeps to read their times.
struct StepEnginePlan {
  std::vector<StepToPlay> steps;
  StepEngineFit fit;  // the analytic figures and the states, before the played times
  // The stages a straggler is played on and the share of the pp stages each
  // stands for (the first, a middle one for all the middle ones, the last).
  std::vector<std::pair<int, double>> stages;
  // Each slow-node event played: its index in faults.events, its node's stage and
  // the step (in `steps`) that played its (stage, slowdown, component).
  struct SlowEvent {
    std::size_t event = 0;
    int stage = 0;
    std::size_t step = 0;
  };
  std::vector<SlowEvent> slow_events;
};

// `shrunk_states` is how many shrunk states (largest first) to play when a policy shrinks.
StepEnginePlan plan_step_engine_fit(const models::scenario::Scenario& s,
                                    const DeviceProfile& profile, int shrunk_states);

// The fit from the step engine's time of each of plan.steps (`played`, in order),
// and each straggler process's and slow node's slowdown in `s` set to its
// step-engine factor. Throws std::invalid_argument when `played` does not match.
StepEngineFit fit_step_engine(models::scenario::Scenario& s, const StepEnginePlan& plan,
                              const std::vector<double>& played);

}  // namespace myriad::sim::campaign
