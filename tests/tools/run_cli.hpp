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

// The source tree's scenarios, profiles, validation tables and report assets.
inline Environment test_environment() {
  return Environment{{MYRIAD_SCENARIO_DIR},
                     MYRIAD_PROFILE_DIR,
                     std::string(MYRIAD_SCENARIO_DIR) + "/validation",
                     MYRIAD_REPORT_DIR};
}

// The text of an HTML report's embedded data (its <script id="myriad-data">
// element), or "" when the page has none.
inline std::string report_data_text(const std::string& html) {
  const std::string open = "<script id=\"myriad-data\" type=\"application/json\">";
  const auto at = html.find(open);
  if (at == std::string::npos) return "";
  const auto end = html.find("</script>", at);
  return html.substr(at + open.size(), end - at - open.size());
}

// `input`, where given, is standard input; `out_stream`, where given, takes
// standard output in place of Result::out.
inline Result run_cli(const std::vector<std::string>& args, const std::string* input = nullptr,
                      std::ostream* out_stream = nullptr) {
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in(input != nullptr ? *input : std::string());
  Environment env = test_environment();
  if (input != nullptr) env.in = &in;
  const int code = run(args, out_stream != nullptr ? *out_stream : out, err, env);
  return {code, out.str(), err.str()};
}

}  // namespace myriad::cli::test_support
