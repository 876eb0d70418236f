// `myriad estimate`: the analytic engine's report of one step. Its options, as the command line
// fills them (estimate_options.cpp, CLI11), and the run that reads them (estimate_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct EstimateOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string json_file;
};

int run_estimate(const EstimateOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
