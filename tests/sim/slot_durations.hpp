// A step program's pass times by slot of its schedule's graph (ScheduleGraph::slot,
// pair_slot): what the closed form's sweeps take, for tests holding them to the
// program's evaluator.
#pragma once

#include <utility>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "sim/program/step_program.hpp"

namespace myriad::sim::testing {

inline std::vector<double> slot_durations(const StepProgram& program,
                                          const models::ScheduleGraph& g) {
  std::vector<double> d(static_cast<std::size_t>(g.slots()));
  for (int stage = 0; stage < program.pp; ++stage) {
    for (int c = 0; c < program.v; ++c) {
      for (const auto& [forward, part] :
           {std::pair{true, models::PassPart::whole}, std::pair{false, models::PassPart::whole},
            std::pair{false, models::PassPart::input},
            std::pair{false, models::PassPart::weight}}) {
        const models::PipelineTask t{forward, c, 0, part};
        const auto k = static_cast<std::size_t>(g.slot(stage, t));
        if (k < d.size()) d[k] = program.pass_time(stage, t);
      }
      if (models::pairs_passes(g.schedule)) {  // F of chunk c with B of chunk b
        for (int b = 0; b < program.v; ++b) {
          d[static_cast<std::size_t>(g.pair_slot(stage, c, b))] =
              program.fb_time(stage, {true, c, 0}, {false, b, 0});
        }
      }
    }
  }
  return d;
}

}  // namespace myriad::sim::testing
