// `myriad simulate`: the step engine's simulation of one step. Its options, as the command line
// fills them (simulate_options.cpp, CLI11), and the run that reads them (simulate_command.cpp).
#pragma once

#include <string>
#include <vector>

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
};

int run_simulate(const SimulateOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
