// The `myriad` command as a function, so that tests can run it in-process.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <istream>
#include <string>
#include <vector>

namespace myriad::cli {

// Exit codes of every verb.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // something went wrong while working
inline constexpr int kExitBadInput = 2;  // bad scenario, bad arguments

// What `main` reads from the process environment, handed down explicitly.
struct Environment {
  std::vector<std::filesystem::path> preset_path;  // from MYRIAD_PRESET_PATH, then built-in
  std::filesystem::path profile_dir;               // device profiles: calibration/profiles
  std::filesystem::path validation_dir;            // validation suites: scenarios/validation
  std::filesystem::path report_dir;  // the HTML report's script and its npm packages: tools/report
  std::istream* in = nullptr;        // standard input, for a scenario given as -
  bool terminal = false;  // standard error is a terminal: long work may draw its progress
};

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Environment& env);

}  // namespace myriad::cli
