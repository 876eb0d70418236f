// `myriad check`: checks a scenario and prints it resolved. Its options, as the command line fills
// them (check_options.cpp, CLI11), and the run that reads them (check_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct CheckOptions {
  ScenarioOptions scenario;
  std::string json_file;
  bool origins = false;
  bool quiet = false;
};

int run_check(const CheckOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
