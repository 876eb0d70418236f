// How long a pipeline's passes take, played in the schedule's order: each pass
// starts when its stage is done with the pass before it and its input has
// arrived, so the step is the longest path through the schedule's graph
// (models::schedule_graph). This is what the step program's evaluator plays for
// the passes and pipeline transfers, without the data-parallel traffic; the
// closed form takes an interleaved pipeline's time from it (and a 1F1B one's of
// up to kSweptPasses passes), since a chunk that holds the embedding or the head
// paces the schedule's rounds in a way no per-stage formula counts
// (docs/analytic-engine.md). pipeline_with_dp plays the data-parallel streams
// beside the passes too.
#pragma once

#include <span>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/step_plan.hpp"
#include "sim/analytic/dp_stream.hpp"
#include "sim/analytic/pair_passes.hpp"
#include "sim/analytic/schedule_graph_cache.hpp"

namespace myriad::sim {

// A pipeline's kinds of pass: a layer's, an MoE model's dense layer's (where
// StepPlan::dense_by_chunk has any), what a recomputed layer of each kind runs
// again under partial recomputation (StepPlan::recomputed_by_chunk), the
// embedding's and the head's.
struct PassKinds {
  PassTimes layer;
  PassTimes dense;
  PassTimes recompute;
  PassTimes dense_recompute;
  PassTimes embedding;
  PassTimes head;
  double overlap_share = 0;  // for DualPipe's F&B passes (fb_time)
  // Activation offload's waits, on the chunk that holds the embedding (a pipeline
  // of one stage: activation_offload.hpp).
  PassTimes offload = {};
};

struct PipelineTransfer {
  double seconds = 0;   // one transfer between neighbouring stages
  bool let_go = false;  // overlap.pp: the sender goes on while it is in flight
};

// durations[slot]: a pass's time by ScheduleGraph::Node::slot. A blocking transfer
// keeps its sender as long as it takes; either way its receiver waits for it.
double pipeline_makespan(const models::ScheduleGraph& graph, std::span<const double> durations,
                         PipelineTransfer transfer);

// A pipeline's passes and transfers (its schedule's), played in the schedule's order:
// chunk c of stage s holds layers_by_chunk[s][c] layers (dense_by_chunk[s][c] of
// them dense), the first stage's first chunk the embedding, the last stage's last
// chunk the head (the step program's passes, StepProgram::pass_time).
double pipeline_time(const models::StepPlan& plan, const PassKinds& passes,
                     PipelineTransfer transfer);

// The passes and transfers with each stage's data-parallel stream beside them
// (overlap.dp, dp_stream.hpp): a chunk's first forward waits for its gathers;
// its last backward issues its reductions; every pass runs at (1 - share) of
// its rate while a collective of its stage's stream runs beside it. This is
// what the step program's evaluator plays for an interleaved schedule, pass by
// pass, without its events.
struct DpPlay {
  double end = 0;     // the last stage done with its passes and its stream (before the optimizer)
  int stage = 0;      // that stage
  double waited = 0;  // its compute stream's waits for data-parallel traffic
  double slowed = 0;  // the time its passes lost to the traffic beside them
};
DpPlay pipeline_with_dp(const models::ScheduleGraph& graph, std::span<const double> durations,
                        PipelineTransfer transfer, const DpStream& dp, double share);

// Chunk `chunk` of stage `stage`'s passes: its layers', and the embedding's or
// the head's where it sits at an end of the pipeline.
PassTimes chunk_passes(const models::StepPlan& plan, const PassKinds& passes, int stage, int chunk);
// What a stage's DualPipe F&B passes save over running their forward and
// backward one after the other (negative where the communication kernels' share
// of the compute rate costs more than the all-to-alls they hide).
double fb_saving(const models::ScheduleGraph& graph, const models::StepPlan& plan,
                 const PassKinds& passes, int stage);

// A pipeline's pass durations by slot of `graph` (pipeline_time's).
std::span<const double> pass_durations(const models::ScheduleGraph& graph,
                                       const models::StepPlan& plan, const PassKinds& passes);

}  // namespace myriad::sim
