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
#include "sim/analytic/schedule_graph_cache.hpp"

namespace myriad::sim {

// What the step engine plays, priced as the analytic engine prices it: per
// micro-batch, the forward and the backward (with recomputation) time of one
// layer, the embedding and the LM head, their tensor-, context- and
// expert-parallel collectives' exposed time included.
struct PassTimes {
  double forward = 0;
  double backward = 0;
  // Of backward: the weight gradients' GEMMs, which a zero-bubble schedule runs
  // in a pass of their own (the rest is its input-gradient pass).
  double weight = 0;
  // The expert all-to-alls in forward and backward: whole, and the part of
  // `forward` and `backward` they leave exposed. DualPipe's F&B pass hides one
  // pass's behind the other's compute (fb_time).
  double a2a_forward = 0;
  double a2a_backward = 0;
  double a2a_exposed_forward = 0;
  double a2a_exposed_backward = 0;
  // Of forward and backward: the GPU's waits for the host to issue its kernels
  // (host_wait.hpp).
  double host = 0;
  // Where the expert all-to-alls split a pass (PhaseTime::ep_inner, ep_first):
  // of forward, the experts' compute between the dispatch and the combine and the
  // dispatch's time; of backward, the experts' between the combine's mirror and
  // the dispatch's, and the combine's mirror's time.
  double inner_forward = 0;
  double inner_backward = 0;
  double a2a_first_forward = 0;
  double a2a_first_backward = 0;
  PassTimes& operator+=(const PassTimes& o) {
    forward += o.forward;
    backward += o.backward;
    weight += o.weight;
    a2a_forward += o.a2a_forward;
    a2a_backward += o.a2a_backward;
    a2a_exposed_forward += o.a2a_exposed_forward;
    a2a_exposed_backward += o.a2a_exposed_backward;
    host += o.host;
    inner_forward += o.inner_forward;
    inner_backward += o.inner_backward;
    a2a_first_forward += o.a2a_first_forward;
    a2a_first_backward += o.a2a_first_backward;
    return *this;
  }
  [[nodiscard]] PassTimes scaled(double k) const {
    return {forward * k,
            backward * k,
            weight * k,
            a2a_forward * k,
            a2a_backward * k,
            a2a_exposed_forward * k,
            a2a_exposed_backward * k,
            host * k,
            inner_forward * k,
            inner_backward * k,
            a2a_first_forward * k,
            a2a_first_backward * k};
  }
  [[nodiscard]] double of(const models::PipelineTask& t) const {
    if (t.forward) return forward;
    switch (t.part) {
      case models::PassPart::whole:
        return backward;
      case models::PassPart::input:
        return backward - weight;
      case models::PassPart::weight:
        return weight;
    }
    return backward;
  }
};
// DualPipe's F&B pass: the forward of `f` and the (whole) backward of `b`
// overlapped, each one's expert all-to-alls beside the other's compute
// (DeepSeek-V3 s3.2.1): their compute without the exposed all-to-alls, slowed
// by the `share` of the compute rate the communication kernels take while they
// run, or the all-to-alls, whichever is longer.
[[nodiscard]] double fb_time(const PassTimes& f, const PassTimes& b, double share);
// Combined 1F1B's F&B pass (Megatron-Core's combined_1f1b; the issue order of
// its guide, "Combined 1F1B: Expert-Parallel All-to-All Overlap"): layer by
// layer, a compute stream runs F.attention, B.experts, F.experts, B.attention
// while a communication stream runs B.combine, F.dispatch, B.dispatch,
// F.combine, each waiting for what it needs of the other, so the layer takes
// four phases, each the longer of its compute (slowed by `share` while the
// collective runs) and its collective. With alike layers the sum over a chunk's
// layers is the same rule on the chunk's sums; a dense layer's compute counts as
// the attention's.
[[nodiscard]] double combined_fb_time(const PassTimes& f, const PassTimes& b, double share);
// The F&B pass of `schedule` (DualPipe's fb_time, combined 1F1B's
// combined_fb_time).
[[nodiscard]] double pair_time(models::scenario::Schedule schedule, const PassTimes& f,
                               const PassTimes& b, double share);

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
