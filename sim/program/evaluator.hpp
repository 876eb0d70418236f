// The step program played without SimGrid: one replica, on a network where
// nothing contends, as an event list over the program's tasks (issue 37).
//
// What it models, exactly: each stage's compute stream runs its tasks one at a
// time in program order, its data-parallel stream likewise, and let-go sends on
// the network at once; a task starts when its stream is free and its
// dependencies are met (an end, or a start plus a lag). Every task takes its
// uncontended duration, except that a pass or the optimizer runs at
// (1 - overlap_share) of the compute rate while a collective that takes a
// share runs beside it on the same stage (the step engine's max-min sharing of
// a host's rate between the compute and the communication kernels). Flows do
// not share links: contention is the step engine's.
//
// It is the oracle of the closed form (sim/analytic/estimator.hpp): both read
// the same priced costs, so where they differ, the closed form's schedule
// rules (bubble, data-parallel exposure) are what differs.
#pragma once

#include <vector>

#include "sim/program/critical_path.hpp"
#include "sim/program/step_program.hpp"

namespace myriad::sim {

struct TaskTimes {
  double start_s = -1;
  double end_s = -1;
};

struct ProgramRun {
  double step_time_s = 0;
  std::vector<std::vector<Span>> timelines;   // [stage]: the compute stream's spans
  std::vector<std::vector<TaskTimes>> times;  // [stage][task]
  std::vector<BreakdownPart> breakdown;       // as `estimate` breaks a step down
  std::size_t events = 0;                     // times the clock moved
};

// Throws std::logic_error if the program cannot finish (a dependency cycle).
ProgramRun evaluate_program(const StepProgram& p);

}  // namespace myriad::sim
