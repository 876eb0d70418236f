// The schedule graphs a search asks for, built once per thread and kept
// (models::schedule_graph builds them; pipeline_makespan.hpp sweeps them).
#pragma once

#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/step_plan.hpp"

namespace myriad::sim {

// The graph for (schedule, pp, v, m), built once per thread and kept for the next
// ones a search asks for (up to about 2M passes' graphs, the least recently asked
// for dropped first; a reference stays good for the next 7 graphs asked for);
// without a schedule, 1F1B or interleaved by v.
const models::ScheduleGraph& cached_schedule_graph(models::scenario::Schedule schedule, int pp,
                                                   int virtual_stages, int micro_batches);
const models::ScheduleGraph& cached_schedule_graph(int pp, int virtual_stages, int micro_batches);
// The plan's.
const models::ScheduleGraph& cached_schedule_graph(const models::StepPlan& plan);

}  // namespace myriad::sim
