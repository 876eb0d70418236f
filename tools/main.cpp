// The `myriad` command. The only place that reads the process environment.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/cli.hpp"

#if !defined(MYRIAD_SCENARIO_DIR) || !defined(MYRIAD_PROFILE_DIR) || !defined(MYRIAD_REPORT_DIR)
#error "MYRIAD_SCENARIO_DIR, MYRIAD_PROFILE_DIR and MYRIAD_REPORT_DIR must name the shipped data folders"
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
  env.profile_dir = MYRIAD_PROFILE_DIR;
  env.validation_dir = std::string(MYRIAD_SCENARIO_DIR) + "/validation";
  env.report_dir = MYRIAD_REPORT_DIR;
  env.in = &std::cin;
  env.terminal = isatty(STDERR_FILENO) != 0;
  const std::vector<std::string> args(argv + 1, argv + argc);
  return myriad::cli::run(args, std::cout, std::cerr, env);
}
