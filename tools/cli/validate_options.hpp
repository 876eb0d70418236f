// `myriad validate`: the engines against published tables. Its options, as the command line fills
// them (validate_options.cpp, CLI11), and the run that reads them (validate_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct ValidateOptions {
  std::vector<std::string> suites;
  std::vector<std::string> preset_path;
  std::string json_file;
  bool leave_one_out = false;
};

int run_validate(const ValidateOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
