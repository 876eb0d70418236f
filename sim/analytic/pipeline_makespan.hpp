// How long a pipeline's passes take, played in the schedule's order: each pass
// starts when its stage is done with the pass before it and its input has
// arrived, so the step is the longest path through the schedule's graph
// (models::schedule_graph). This is what the step program's evaluator plays for
// the passes and pipeline transfers, without the data-parallel traffic; the
// closed form takes an interleaved pipeline's time from it, since a chunk that
// holds the embedding or the head paces the schedule's rounds in a way no
// per-stage formula counts (docs/analytic-engine.md).
#pragma once

#include <span>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/step_plan.hpp"

namespace myriad::sim {

// What the step engine plays, priced as the analytic engine prices it: per
// micro-batch, the forward and the backward (with recomputation) time of one
// layer, the embedding and the LM head, their tensor-, context- and
// expert-parallel collectives' exposed time included.
struct PassTimes {
  double forward = 0;
  double backward = 0;
};

struct PipelineTransfer {
  double seconds = 0;   // one transfer between neighbouring stages
  bool let_go = false;  // overlap.pp: the sender goes on while it is in flight
};

// When the first stage runs each chunk's first forward and ends its last
// backward (ScheduleGraph::first_forward, last_backward), from the step's start.
struct PipelineMarks {
  std::vector<double> first_forward_start;  // [chunk]
  std::vector<double> last_backward_end;    // [chunk]
};

// durations[slot]: a pass's time by ScheduleGraph::Node::slot. A blocking transfer
// keeps its sender as long as it takes; either way its receiver waits for it.
double pipeline_makespan(const models::ScheduleGraph& graph, std::span<const double> durations,
                         PipelineTransfer transfer, PipelineMarks* marks = nullptr);

// An interleaved pipeline's passes and transfers, played in the schedule's order:
// chunk c of stage s holds layers_by_stage[s] / v layers, the first stage's
// first chunk the embedding, the last stage's last chunk the head (the step
// program's passes, StepProgram::pass_time).
double interleaved_pipeline_time(const models::StepPlan& plan, PassTimes layer, PassTimes embedding,
                                 PassTimes head, PipelineTransfer transfer,
                                 PipelineMarks* marks = nullptr);

// The graph for (pp, v, m), built once per thread and kept for the next ones a
// search asks for (the last few layouts' graphs).
const models::ScheduleGraph& cached_schedule_graph(int pp, int virtual_stages, int micro_batches);

}  // namespace myriad::sim
