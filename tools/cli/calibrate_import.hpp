// `myriad calibrate import FORMAT FILE...`: nccl-tests output, Google Benchmark
// JSON or a PyTorch profiler (Kineto) trace as calibration rows
// (calibration/import/import.hpp), for `calibrate fit` and `calibrate check`.
#pragma once

#include "tools/cli/commands.hpp"

namespace myriad::cli {

// The subcommand, under `calibrate`.
Command add_calibrate_import(CLI::App& calibrate, Streams io);

}  // namespace myriad::cli
