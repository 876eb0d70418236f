// Times calibration cases in passes over the whole grid: each pass prepares
// every case afresh, times it once (Google Benchmark on the host clock, or the
// device's own events) and releases it before the next, so that memory holds one
// case at a time. A case's samples are therefore a pass apart (seconds), not
// back to back, and the fastest is kept.
//
// Why: on a shared virtual machine, interference arrives in phases of about a
// second that slow a kernel by up to 45% (measured here, 2026-11-29: a causal
// attention forward at seq 512 ran in 33 or 46-49 ms depending on when it ran,
// on either vCPU, with or without huge pages). Back-to-back repetitions all fall
// in one phase, so their median is as noisy as one sample; samples spread over
// passes rarely all do, and interference only ever adds time.
//
// The first pass sizes each case's loop (at least min_time_s), checks the
// result on known inputs and prints one progress line per case; later passes
// reuse the loop size and print one line each.
#pragma once

#include <iosfwd>
#include <vector>

#include "calibration/measure/cases.hpp"

namespace myriad::calibration {

struct RunnerOptions {
  int repetitions = 5;       // passes over the grid: samples per case; the fastest is kept
  double min_time_s = 0.02;  // each sample runs the kernel at least this long
};

// Rows with times and checks filled in, in the cases' order.
std::vector<Row> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                           std::ostream& progress);

}  // namespace myriad::calibration
