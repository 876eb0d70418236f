// `myriad campaign --step-engine simulate`: the healthy step and each
// straggler process's slow step played on the step engine before the campaign.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

// `--step-engine simulate`: the healthy step, the largest shrunk states (when a
// policy shrinks), each straggler process's slow step and each injected slow
// node's, played on the step engine (each in a child process: SimGrid runs once
// per process) before the campaign's threads start. The campaign then runs on
// the step engine's pace (each state's analytic step time scaled by the
// played state nearest to it) and on each slow node's effective factor (a slow
// node rarely slows the whole step by its full slowdown: the pipeline and
// overlap absorb part of it).
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

// Plays the steps (in child processes: call it with no other thread running)
// and sets each straggler process's and injected slow node's slowdown in `s` to
// its step-engine factor; `shrunk_states` is how many shrunk states (largest
// first) to play when a policy shrinks. Nothing, with the reason on io.err,
// when the step engine cannot play them.
std::optional<StepEngineFit> fit_to_step_engine(scenario::Scenario& s,
                                                const sim::DeviceProfile& profile,
                                                int shrunk_states, Streams io);
// The lines the report prints, and its JSON, for a fit of `s`.
std::string step_engine_text(const scenario::Scenario& s, const StepEngineFit& fit);
nlohmann::json step_engine_json(const scenario::Scenario& s, const StepEngineFit& fit);

}  // namespace myriad::cli
