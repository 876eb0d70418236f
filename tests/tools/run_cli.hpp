// Runs the command line in this process, as `myriad ARGS...` would, with the
// source tree's scenarios, profiles and report assets.
#pragma once

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "myriad_source_paths.hpp"
#include "tools/cli/cli.hpp"

namespace myriad::cli::test_support {

struct Result {
  int code;
  std::string out;
  std::string err;
};

// `input`, where given, is standard input; `out_stream`, where given, takes
// standard output in place of Result::out.
inline Result run_cli(const std::vector<std::string>& args, const std::string* input = nullptr,
                      std::ostream* out_stream = nullptr) {
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in(input != nullptr ? *input : std::string());
  Environment env{{MYRIAD_SCENARIO_DIR},
                  MYRIAD_PROFILE_DIR,
                  std::string(MYRIAD_SCENARIO_DIR) + "/validation",
                  MYRIAD_REPORT_DIR};
  if (input != nullptr) env.in = &in;
  const int code = run(args, out_stream != nullptr ? *out_stream : out, err, env);
  return {code, out.str(), err.str()};
}

}  // namespace myriad::cli::test_support
