// The `myriad` command. The only place that reads the process environment.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/cli.hpp"

#ifndef MYRIAD_SCENARIO_DIR
#error "MYRIAD_SCENARIO_DIR must name the shipped scenarios folder"
#endif

int main(int argc, char** argv) {
  myriad::cli::Environment env;
  if (const char* path = std::getenv("MYRIAD_PRESET_PATH"); path != nullptr) {
    std::string list = path;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) env.preset_path.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  env.preset_path.emplace_back(MYRIAD_SCENARIO_DIR);
  const std::vector<std::string> args(argv + 1, argv + argc);
  return myriad::cli::run(args, std::cout, std::cerr, env);
}
