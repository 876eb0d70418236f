// The CPU calibration grid's collectives (cpu_cases.cpp has the kernels): the
// schedules of kernels/collectives on the thread executor, each checked against
// the exact sums and blocks it must leave on every rank.
#pragma once

#include <cstdint>

#include "calibration/measure/cases.hpp"
#include "models/plan/collective.hpp"

namespace myriad::calibration {

struct CollectiveShape {
  models::CollectiveKind kind;
  models::CollectiveAlgorithm algorithm;
};

// `shape` over `ranks` threads, `bytes` per rank.
Case collective_case(const CollectiveShape& shape, int ranks, std::int64_t bytes);

}  // namespace myriad::calibration
