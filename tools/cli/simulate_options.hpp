// `myriad simulate`: the step engine's simulation of one step. Its options, as the command line
// fills them (simulate_options.cpp, CLI11), and the run that reads them (simulate_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "sim/step/step_engine.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct SimulateOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string json_file;
  std::string trace_file;
  std::string report_file;
  bool all_replicas = false;
  std::string log;
  // --workload TRACE: a Chakra trace played on the scenario's cluster instead of
  // the scenario's own step, its collectives over the scenario's `workload_group`.
  std::string workload;
  std::string workload_group = "dp";
  bool ignore_ctrl_deps = false;
};

int run_simulate(const SimulateOptions& o, Streams io, const Environment& env);
// The step engine's options the command line asks for (--all-replicas, --log).
sim::StepOptions step_options(const SimulateOptions& o);
// run_simulate with --workload (simulate_workload.cpp).
int run_simulate_workload(const SimulateOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
