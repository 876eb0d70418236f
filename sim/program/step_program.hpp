// The step program: one training step written once, as data, for every engine
// that plays it (issue 37). Built from the scenario's priced stage costs (the
// analytic engine's pricing, sim/analytic/estimator.hpp) and the pipeline
// schedule (models/plan/pipeline_schedule.hpp): per pipeline stage of one
// replica, the ordered tasks that stage runs, each with the stream it runs on,
// its uncontended duration and the tasks it waits for.
//
// What a stage runs, in program order (Megatron-LM's schedule as the step
// engine plays it, docs/step-engine.md):
//   - the first parameter bucket's gathers (the whole gathers without
//     overlap.dp), before anything;
//   - with overlap.dp, the rest of the first chunk's gathers and, interleaved,
//     each other chunk's, on the data-parallel stream, beside compute
//     (sim/analytic/dp_stream.hpp);
//   - the pipeline passes in the schedule's order, each waiting for its input
//     (the neighbouring stage's send) and followed by its own send (a
//     zero-bubble schedule's weight-gradient passes neither wait nor send); the first
//     forward waits for the first chunk's gathers at its end, and each other
//     chunk's first forward for that chunk's gathers before it starts;
//   - with overlap.dp, each chunk's gradient reductions from its last backward
//     (its last weight-gradient pass under a zero-bubble schedule):
//     all buckets but one from the end of that backward's first bucket, the
//     last one after it, on the data-parallel stream;
//   - the tail: what is still overlapped waited for, the reductions (blocking
//     without overlap.dp), the optimizer.
// The program is immutable once built; evaluate_program (evaluator.hpp) plays
// one replica of it without contention.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/plan/chunk_grid.hpp"
#include "models/plan/pipeline_schedule.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/analytic/dp_stream.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/program/critical_path.hpp"

namespace myriad::sim {

// Where a task runs on its rank group, and so what it queues behind.
enum class Stream : std::uint8_t {
  // The rank group's own sequence: passes, blocking sends and collectives,
  // joins, the optimizer; one at a time, in program order.
  compute,
  // Its data-parallel communicator: overlapped collectives one after another in
  // issue order (NCCL runs a communicator's kernels in order on one stream).
  dp,
  // Let go: a pipeline send that overlaps (overlap.pp), on the network only.
  network,
};

enum class TaskKind : std::uint8_t {
  pass,           // a forward, or a backward with its recomputation, of one chunk and micro-batch
  send,           // a pass's output to the next stage (the previous one, backward)
  dp_collective,  // the data-parallel collectives of `share` of the stage's parameters
  join,           // nothing of its own: waits for its dependencies
  optimizer,
  kernel,  // compute of a traced workload (a Chakra trace's COMP_NODE), as traced
};

// What a task waits for: another task's end or, `on_start`, its start plus a lag.
struct Dependency {
  int stage = 0;
  int task = 0;  // index in that stage's tasks
  bool on_start = false;
  double lag_s = 0;
};

struct StepTask {
  TaskKind kind = TaskKind::pass;
  Stream stream = Stream::compute;
  Activity activity = Activity::forward;  // what its time counts as on a timeline
  double seconds = 0;                     // uncontended, at the full compute rate
  // Passes and the optimizer run kernels on the GPU's SMs: collectives beside
  // them (`takes_share`) slow them by the profile's overlap_compute_share.
  [[nodiscard]] bool computes() const {
    return kind == TaskKind::pass || kind == TaskKind::optimizer || kind == TaskKind::kernel;
  }
  bool takes_share = false;     // its kernels take that share while it runs
  models::PipelineTask pass{};  // pass and send: which one
  models::PipelineTask pair{};  // a DualPipe F&B pass (pass.paired): its backward
  double share = 0;             // dp_collective: of the stage's parameters
  bool gather = false;          // dp_collective: parameter gathers, else gradient reductions
  // A traced workload's: its collective (StepProgram::collectives), -1 for the
  // stage's data-parallel share above; a send's bytes (0: the plan's transfer).
  int collective = -1;
  double bytes = 0;
  std::vector<Dependency> after;  // besides the stream's order
  std::string label;              // a traced task's name (name() builds the others')
  [[nodiscard]] std::string name() const;
};

struct StageProgram {
  std::vector<StepTask> tasks;  // program order
};

// A collective a traced workload names (a Chakra COMM_COLL_NODE with its size),
// priced on the scenario it plays on.
struct ProgramCollective {
  models::Collective collective;
  CommCost cost;
};

struct StepProgram {
  int pp = 1;
  int v = 1;  // model chunks (virtual stages) per stage
  int m = 1;  // micro-batches
  models::scenario::Schedule schedule = models::scenario::Schedule::one_f_one_b;
  bool delay_wgrad = false;  // combined 1F1B's delayed weight gradients (pair_phases)
  bool overlap_pp = false;
  bool overlap_dp = false;
  double overlap_share = 0;        // of the compute rate, taken by collectives beside it
  models::ChunkGrid chunk_layers;  // [stage][chunk]: its layers
  models::ChunkGrid chunk_dense;   // [stage][chunk]: how many of them are dense
  // [stage][chunk]: how many of them partial recomputation recomputes, and of
  // those how many are dense (empty: none).
  models::ChunkGrid chunk_recomputed;
  models::ChunkGrid chunk_recomputed_dense;
  StageCosts costs;
  std::vector<StageProgram> stages;
  std::vector<ProgramCollective> collectives;  // a traced workload's, by StepTask::collective
  bool traced = false;                         // read from a trace (program_from_trace)

  // A pass's uncontended time on `stage`: its chunk's layers, and the embedding
  // (first stage, first chunk) or the head (last stage, last chunk).
  [[nodiscard]] double pass_time(int stage, const models::PipelineTask& t) const;
  // A chunk's passes (its layers', the embedding's or the head's where it sits
  // at an end), and a DualPipe F&B pass's time (sim::fb_time).
  [[nodiscard]] PassTimes chunk_passes(int stage, int chunk) const;
  [[nodiscard]] double fb_time(int stage, const models::PipelineTask& f,
                               const models::PipelineTask& b) const;
  // Micro-batches each chunk runs: m, or under DualPipe its direction's m / 2.
  [[nodiscard]] int micro_batches_per_chunk() const {
    return schedule == models::scenario::Schedule::dualpipe ? m / 2 : m;
  }
  // The part of it whose layer collectives are priced inside it, not played as
  // flows: an MoE model's dense layers, and what partial recomputation runs again
  // (0 without them).
  [[nodiscard]] double priced_layers_time(int stage, const models::PipelineTask& t) const;
  // The chunk's layers that are `costs.layer` (the others are dense).
  [[nodiscard]] int main_layers(int stage, int chunk) const;
  // The embedding's and the head's part of it (the rest is the chunk's layers).
  [[nodiscard]] double ends_time(int stage, const models::PipelineTask& t) const;
  // The step broken down as `estimate` does, from the stages' timelines
  // (timelines[g], g = row * pp + stage; critical_path.hpp, step_breakdown).
  [[nodiscard]] std::vector<BreakdownPart> breakdown(
      const std::vector<std::vector<Span>>& timelines, double step_s) const;
  // The data-parallel collectives of `share` of a stage's parameters, gathers or
  // reductions, one after another: each pays its latency whole and its bandwidth
  // term in proportion (a bucket is a collective of its own).
  [[nodiscard]] double dp_time(double share, bool gather) const;
  // What a stage's data-parallel stream runs with overlap.dp.
  [[nodiscard]] DpStream dp_stream() const;
  [[nodiscard]] std::size_t tasks() const;
};

// `profile` is put on the scenario's hardware first (on_hardware).
StepProgram build_step_program(const models::scenario::Scenario& s, const DeviceProfile& profile);
// From costs already priced (the step engine's lowering has them).
StepProgram build_step_program(const models::scenario::Scenario& s, StageCosts costs,
                               double overlap_share);

}  // namespace myriad::sim
