// The step engine in a child process: SimGrid runs one engine per process
// (step_engine.hpp), so a caller that simulates several scenarios (plan's best
// layouts) plays each in a fork of itself and reads back what it needs.
#pragma once

#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/step/step_engine.hpp"

namespace myriad::sim {

struct ChildStep {
  bool ok = false;
  double step_time_s = 0;
  double wait_s = 0;  // the most a stage of replica 0 waited on inputs and sends
  std::string error;  // why not, when !ok (the engine's message, or how the child ended)
};

// simulate_step(s, profile, options) in a fork of this process. POSIX only;
// call it with no other thread running.
ChildStep simulate_step_in_child(const models::scenario::Scenario& s, const DeviceProfile& profile,
                                 const StepOptions& options = {});

}  // namespace myriad::sim
