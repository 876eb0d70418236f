// `myriad sweep`: the scenario's axes varied, a row per configuration. Its options, as the command
// line fills them (sweep_options.cpp, CLI11), and the run that reads them (sweep_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct SweepOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::vector<std::string> vary;
  bool zip = false;
  std::string pareto;
  std::string csv_file;
  std::string jsonl_file;
  std::string report_file;
  int max_configs = 100000;  // at most sim::kMostSweepConfigs
};

int run_sweep(const SweepOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
