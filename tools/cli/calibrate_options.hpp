// `myriad calibrate`: measure the kernels and collectives, fit a device profile, check
// its predictions, or all three (loop). Its options, as the command line fills them
// (calibrate_options.cpp, CLI11), and the run that reads them (calibrate_command.cpp).
#pragma once

#include <string>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

// What `check` and `loop` hold the mean composite error to unless told otherwise.
constexpr double kDefaultMaxError = 0.15;

struct CalibrateOptions {
  // measure
  std::string backend = "cpu";
  std::string grid = "small";
  std::string out = "calibration-run";
  int repetitions = 5;
  double min_time_s = 0.02;
  // fit
  std::string rows;
  std::string profile_out;
  std::string base;
  std::string device;
  bool leave_out_failed = false;
  std::string attention_kernel;
  std::string reference;       // fit --reference: cudnn or myriad
  std::string loop_reference;  // loop --reference
  // check
  std::string profile;
  std::string check_rows;
  std::string json_file;
  std::string measured_from;
  double max_error = kDefaultMaxError;
};

// Which of calibrate's runs the command line asked for.
enum class CalibrateRun { measure, fit, check, loop };

// The loop sets the kernel the profile describes in `o` before it fits.
int run_calibrate(CalibrateOptions& o, CalibrateRun what, Streams io);

}  // namespace myriad::cli
