// The `myriad` command as a function, so that tests can run it in-process.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <istream>
#include <string>
#include <vector>

namespace myriad::cli {

// Exit codes of every verb.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // something went wrong while working
inline constexpr int kExitBadInput = 2;  // bad scenario, bad arguments

// The processes one command runs as (`mpirun -n N myriad plan ...`); without MPI,
// rank 0 of 1. `plan` and `sweep` split their candidates among the ranks and
// rank 0 merges and prints; the other verbs run whole on every rank, rank 0
// printing.
struct World {
  int rank = 0;
  int size = 1;
  // Every rank's `text` at rank 0, in rank order; elsewhere empty. Every rank calls it.
  std::function<std::vector<std::string>(const std::string&)> gather;
};

// What `main` reads from the process environment, handed down explicitly.
struct Environment {
  std::vector<std::filesystem::path> preset_path;  // from MYRIAD_PRESET_PATH, then built-in
  std::filesystem::path profile_dir;               // device profiles: calibration/profiles
  std::filesystem::path validation_dir;            // validation suites: scenarios/validation
  std::filesystem::path report_dir;  // the HTML report's script and its npm packages: tools/report
  std::istream* in = nullptr;        // standard input, for a scenario given as -
  bool terminal = false;  // standard error is a terminal: long work may draw its progress
  World world{};
};

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Environment& env);

}  // namespace myriad::cli
