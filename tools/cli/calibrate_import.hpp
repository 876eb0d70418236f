// `myriad calibrate import FORMAT FILE...`: nccl-tests output, Google Benchmark
// JSON or a PyTorch profiler (Kineto) trace as calibration rows
// (calibration/import/import.hpp), for `calibrate fit` and `calibrate check`. Its
// options are wired under `calibrate` in calibrate_options.cpp (CLI11).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct ImportOptions {
  std::string format;
  std::vector<std::string> files;
  std::string out;
  std::string backend = "cuda";
  std::string collective;
  std::string algorithm;  // else ring
  int ranks = 0;
  std::string profile;  // nccl-tests: the device profile whose links bound the busbw
  std::string family;
  std::string key;  // xla-gemm-table: the device key ("sm_90")
  bool append = false;
  std::string max_input_size;  // "8GiB"; else the format's cap (calibration/import/import.hpp)
};

int run_import(const ImportOptions& o, Streams io);

}  // namespace myriad::cli
