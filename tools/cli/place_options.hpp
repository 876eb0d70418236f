// `myriad place`: pipeline stages placed on devices, by each algorithm. Its options, as the command
// line fills them (place_options.cpp, CLI11), and the run that reads them (place_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct PlaceOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::vector<std::string> algorithms;
  bool no_simulate = false;
  std::string grain = "layer";
  std::string write_file;
  std::string json_file;
};

int run_place(const PlaceOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
