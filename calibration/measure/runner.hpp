// Times calibration cases with Google Benchmark: each case is prepared, run as
// one registered benchmark (repetitions of a timed loop long enough to trust the
// clock), checked once on known inputs, and released before the next, so that
// memory holds one case at a time. Progress goes to `progress` (one line per case).
#pragma once

#include <iosfwd>
#include <vector>

#include "calibration/measure/cases.hpp"

namespace myriad::calibration {

struct RunnerOptions {
  int repetitions = 5;       // samples per case; the median is what the fit reads
  double min_time_s = 0.02;  // each sample runs the kernel at least this long
};

// Rows with times and checks filled in, in the cases' order.
std::vector<Row> run_cases(const std::vector<Case>& cases, const RunnerOptions& options,
                           std::ostream& progress);

}  // namespace myriad::calibration
