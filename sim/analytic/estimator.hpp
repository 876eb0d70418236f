// The analytic engine: a training step in closed form, from a scenario and a
// device profile, in microseconds. Capacity planners sweep with it; the step
// engine must agree with it where nothing contends.
//
// A pipeline stage's time per micro-batch is the sum over its layers of the
// compute ops (compute_cost) and of the collectives left exposed, plus the
// embedding on the first stage and the LM head and loss on the last (stages may
// hold different layer counts: parallelism.first_stage_layers, last_stage_layers).
// With m micro-batches, p stages and v virtual stages, the pipeline takes
//   m * t_slowest + (p * t_mean - t_slowest) / v
// (the second term is the bubble, fill and drain: the other stages' passes;
// (p - 1) / v of a stage when they are alike). Then the exposed part of the
// data-parallel traffic, and the optimizer step.
// Overlap, when switched on (overlap.tp, .cp, .ep each for its own collectives):
// the overlapped layer collectives share the layer's GEMMs as cover and stay
// exposed for a quarter of their time (chunked pipelining fill and drain) or what
// the GEMMs cannot cover; pipeline transfers hide behind compute; data-parallel
// traffic (overlap.dp) is reduced bucket by bucket under the last backward and
// gathered bucket by bucket under the first forward, whatever the schedule, and
// with interleaving the other chunks' traffic hides in the pipeline's drain or
// fill (exposed_dp in estimator.cpp).
#pragma once

#include <string>
#include <vector>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/analytic/group_times.hpp"
#include "sim/analytic/pipeline_makespan.hpp"
#include "sim/analytic/step_rates.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

struct BreakdownPart {
  std::string name;  // compute, tp, cp, ep, pp, bubble, dp, optimizer
  double seconds = 0;
};

// One collective of the plan, priced.
struct PricedCollective {
  std::string name;
  std::string kind;
  std::string group;
  double bytes = 0;
  int ranks = 1;
  int nodes = 1;
  CommCost cost;
  double per_step = 0;  // times it runs per step on the critical stage
};

// One compute op of the plan, priced; totals over a step on the critical stage.
struct PricedOp {
  std::string name;  // "qkv", "qkv.bwd", "attention", ...
  std::string cls;
  double time_s = 0;      // one run
  double efficiency = 0;  // achieved over peak
  bool memory_bound = false;
  double per_step = 0;  // runs per step
};

// What the router and the expert layout do to a step, for reports.
struct MoeSummary {
  bool present = false;  // the model has experts
  double imbalance = 1;  // the busiest expert-parallel rank's slots over the mean
  double dropped = 0;    // share of routed token copies beyond capacity
  double padded = 0;     // share of computed slots that are padding
  std::string dispatch;  // "all-to-all", "all-gather", or "" without ep
  bool dispatch_inside_node = true;
  // DualPipe: the exposed expert all-to-all time of the critical stage's passes
  // run one after another, and what its F&B passes hide of it behind the other
  // pass's compute (taken off the breakdown's ep line).
  double a2a_exposed_unpaired_s = 0;
  double a2a_hidden_s = 0;
};

// The host's part (host_wait.hpp), for reports: what one layer issues.
struct HostSummary {
  double launch_s = 0;        // the profile's host_launch_s; 0: not modelled
  double layer_forward = 0;   // kernels and collectives a layer's forward issues
  double layer_backward = 0;  // and its backward, recomputation included
  bool synced = false;        // the host waits for the GPU in each forward (Phase::host_sync)
};

struct StepReport {
  double step_time_s = 0;
  double mfu = 0;      // model FLOPs over peak bf16 FLOP/s of all GPUs
  double hfu = 0;      // hardware FLOPs (with recomputation) likewise
  double mfu_fp8 = 0;  // fp8 training: model FLOPs over the fp8 peak; 0 otherwise
  // The MFU a report leads with: against the peak of the precision the GEMMs run at
  // (fp8 training's, the fp8 peak), the other beside it.
  [[nodiscard]] double headline_mfu() const { return mfu_fp8 > 0 ? mfu_fp8 : mfu; }
  [[nodiscard]] const char* headline_peak() const { return mfu_fp8 > 0 ? "fp8" : "bf16"; }
  // The rates of step_time_s (sim/analytic/step_rates.hpp).
  void set_rates(const StepRates& rates) {
    mfu = rates.mfu;
    hfu = rates.hfu;
    mfu_fp8 = rates.mfu_fp8;
    tokens_per_s = rates.tokens_per_s;
    days_to_target = rates.days;
  }
  double tokens_per_s = 0;
  double days_to_target = 0;  // training.tokens at this rate
  double model_flops = 0;     // per step
  double hardware_flops = 0;
  std::vector<BreakdownPart> breakdown;  // sums to step_time_s
  models::MemoryBreakdown memory;
  double memory_fragmentation = 0;  // bytes the allocator holds beyond `memory`
  double memory_capacity = 0;       // the GPU's, bytes
  double memory_reserved = 0;       // context, workspaces, NCCL buffers (profile)
  [[nodiscard]] double memory_needed() const { return memory.total() + memory_fragmentation; }
  [[nodiscard]] double memory_usable() const { return memory_capacity - memory_reserved; }
  // Host memory a GPU may fill with offloaded activations (memory.offloaded).
  double host_memory_capacity = 0;
  [[nodiscard]] bool host_fits() const { return memory.offloaded <= host_memory_capacity; }
  bool fits = true;  // what is needed fits in what is usable, offloaded activations in the host's
  // What the fat tree's oversubscription does to the job's traffic, in words.
  std::vector<std::string> network_notes;
  MoeSummary moe;
  HostSummary host;
  std::vector<PricedCollective> collectives;
  std::vector<PricedOp> ops;  // by total time, longest first
};

// How much a report holds: everything, or only what ranks a layout (step time
// and its breakdown, MFU, tokens/s, days, memory) for searches that estimate
// many layouts and print a few: no op or collective tables, no network notes.
enum class Detail { full, summary };

// The profile's rates are put on the scenario's GPU first (on_hardware): the
// hardware priced is always the scenario's.
StepReport estimate(const models::scenario::Scenario& s, const DeviceProfile& profile,
                    Detail detail = Detail::full);

// Above this fraction of usable memory a job is at risk (allocator spikes,
// a longer sequence, a new library version): reports warn.
inline constexpr double kMemoryWarningFraction = 0.9;

// The exposed tensor-, context-, expert- and data-parallel time inside a
// program's passes (forward, backward and recomputation of one micro-batch), by
// group: the part of PassTimes that is communication, so that both engines break
// a step down alike. (Its dp slot: ZeRO-3's layer gathers and reductions.)
using ExposedComm = GroupTimes;

// A tensor-, context- or expert-parallel collective of one layer, as the analytic
// engine prices it.
struct LayerCollective {
  models::Collective collective;
  CommCost cost;
  double nvlink_Bps = 0;  // bus bandwidth inside the node at its size
  // An expert collective that opens its pass's expert part (PhaseTime::ep_first:
  // the forward's dispatch, the backward's mirror of the combine), which an F&B
  // pass runs in a phase of its own (pair_passes.hpp).
  bool first_ep = false;
};

struct StageCosts {
  PassTimes layer;
  // The layer's tp, cp and ep collectives in order, forward and backward
  // (recompute included), when they are exposed (no tp overlap): their times are
  // inside `layer`; the step engine plays those that leave the node as flows and
  // takes their time out. Overlapped, they stay inside `layer` and these are empty.
  std::vector<LayerCollective> forward_comms;
  std::vector<LayerCollective> backward_comms;
  // The overlapped expert all-to-alls, whole: their exposed part is inside `layer`;
  // the step engine runs those between nodes as flows beside the layer's compute.
  std::vector<LayerCollective> forward_beside;
  std::vector<LayerCollective> backward_beside;
  // An MoE model's dense layers (StepPlan::dense_layer), priced alike; zero
  // without them. Their collectives are priced inside `dense_layer`, not played
  // as flows.
  PassTimes dense_layer;
  // What a recomputed layer runs again in backward under partial recomputation
  // (StepPlan::recompute_layer, recompute_dense_layer), priced alike, its
  // collectives inside it; zero without it.
  PassTimes recompute_layer;
  PassTimes recompute_dense_layer;
  PassTimes embedding;
  PassTimes head;
  // Activation offload's waits a micro-batch (activation_offload.hpp): on a
  // pipeline of one stage, the first chunk's; zero without offload.
  PassTimes offload;
  ExposedComm layer_comm;  // of `layer`'s forward and backward
  ExposedComm dense_layer_comm;
  ExposedComm recompute_layer_comm;
  ExposedComm recompute_dense_layer_comm;
  ExposedComm embedding_comm;
  ExposedComm head_comm;
  double pp_bytes_per_gpu = 0;  // one activation transfer across a stage boundary
  CommCost pp_transfer;         // that transfer, priced (latency_s + bandwidth_s)
  std::vector<models::Collective> dp_comms;
  std::vector<CommCost> dp_costs;  // as the analytic engine prices them (and its algorithm)
  double dp_buckets = 1;           // gradient (and parameter) buckets per model chunk
  double optimizer_s = 0;
};

// Megatron-LM's distributed data parallel buckets gradients (and, with the
// distributed optimizer, parameters) by max(40M, 1M x dp) parameters when it
// overlaps their communication (its default bucket size; dp counts the cp ranks,
// its data-parallel group with context parallelism).
inline constexpr double kDdpBucketParams = 40e6;
inline constexpr double kDdpBucketParamsPerRank = 1e6;
// A 1F1B schedule of up to this many passes (2 pp m) is played pass by pass in
// the closed form (pipeline_makespan, pipeline_with_dp with overlap.dp), as
// interleaved schedules always are; a longer one takes the 1F1B formula and the
// closed form of the step's two ends (exposed_dp).
inline constexpr double kSweptPasses = 4096;
// Buckets per model chunk of the most loaded stage (at least one).
double dp_buckets_per_chunk(const models::StepPlan& plan);

StageCosts stage_costs(const models::scenario::Scenario& s, const DeviceProfile& profile);

}  // namespace myriad::sim
