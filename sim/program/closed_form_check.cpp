#include "sim/program/closed_form_check.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"

namespace myriad::sim {

ClosedFormCheck check_closed_form(const models::scenario::Scenario& s, const DeviceProfile& profile,
                                  double estimated_s) {
  ClosedFormCheck c;
  c.program_step_s = evaluate_program(build_step_program(s, profile)).step_time_s;
  c.gap = estimated_s > 0 ? c.program_step_s / estimated_s - 1 : 0;
  if (std::abs(c.gap) <= 0.01) return c;
  c.note = fmt::format(
      "note: the step program, played without contention, takes {:.4f} s, {:+.1f} % beside this "
      "estimate{}; `myriad simulate` plays it with the network",
      c.program_step_s, 100 * c.gap,
      s.parallelism.pp > 1 && s.parallelism.virtual_stages == 1 && s.overlap.dp
          ? ": with 1F1B, the closed form counts what the overlapped reductions take of each "
            "stage's last backward by the stages as slow as the slowest, not in the schedule's "
            "order (docs/analytic-engine.md)"
          : "");
  return c;
}

}  // namespace myriad::sim
