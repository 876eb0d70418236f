// The closed form (sim/analytic/estimator.hpp) beside the step program it stands
// for, played by the evaluator: what `estimate` says when the two are apart. The
// closed form is held to the evaluator within 1 % for one-stage and 1F1B layouts
// (StepProgram.ClosedFormAgreesWithTheEvaluatorOnRandomLayouts), not yet for every
// interleaved one, so a report should say when a layout is one of those.
#pragma once

#include <optional>
#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

struct ClosedFormCheck {
  double program_step_s = 0;  // the step program, played without contention
  double gap = 0;             // program_step_s / the estimate's - 1
  // A sentence for the report when they are more than 1 % apart; empty otherwise.
  std::string note;
};

// Builds and plays the scenario's step program (milliseconds) and compares it
// with `estimated_s`, the closed form's step.
ClosedFormCheck check_closed_form(const models::scenario::Scenario& s, const DeviceProfile& profile,
                                  double estimated_s);

}  // namespace myriad::sim
