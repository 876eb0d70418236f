// The analytic engine: a training step in closed form, from a scenario and a
// device profile, in microseconds. Capacity planners sweep with it; the step
// engine must agree with it where nothing contends.
//
// A pipeline stage's time per micro-batch is the sum over its layers of the
// compute ops (compute_cost) and of the collectives left exposed, plus the
// embedding on the first stage and the LM head and loss on the last. With m
// micro-batches, p stages and v virtual stages, the pipeline takes
//   m * t_slowest + (p - 1) / v * t_mean
// (the second term is the bubble: fill and drain). Then the exposed part of the
// data-parallel traffic, and the optimizer step.
// Overlap, when switched on: tensor-, context- and expert-parallel collectives
// hide behind the layer's GEMMs except for a quarter of each (chunked pipelining
// fill and drain) or what the GEMMs cannot cover; pipeline transfers hide
// behind compute; a data-parallel collective hides in the pipeline's drain
// (gradient reduction: a chunk's gradients are complete after its last
// micro-batch) or fill (parameter gathering), each half the bubble, except for
// the 1/v of it that belongs to the last (first) model chunk.
#pragma once

#include <string>
#include <vector>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/scenario.hpp"
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

struct StepReport {
  double step_time_s = 0;
  double mfu = 0;  // model FLOPs over peak bf16 FLOP/s of all GPUs
  double hfu = 0;  // hardware FLOPs (with recomputation) likewise
  double tokens_per_s = 0;
  double days_to_target = 0;  // training.tokens at this rate
  double model_flops = 0;     // per step
  double hardware_flops = 0;
  std::vector<BreakdownPart> breakdown;  // sums to step_time_s
  models::MemoryBreakdown memory;
  double memory_capacity = 0;
  bool fits = true;
  std::vector<PricedCollective> collectives;
  std::vector<PricedOp> ops;  // by total time, longest first
};

StepReport estimate(const scenario::Scenario& s, const DeviceProfile& profile);

// What the step engine plays, priced as the analytic engine prices it: per
// micro-batch, the forward and the backward (with recomputation) time of one
// layer, the embedding and the LM head, their tensor-, context- and
// expert-parallel collectives' exposed time included.
struct PassTimes {
  double forward = 0;
  double backward = 0;
};

// A tensor-, context- or expert-parallel collective of one layer, as the analytic
// engine prices it.
struct LayerCollective {
  models::Collective collective;
  CommCost cost;
  double nvlink_Bps = 0;  // bus bandwidth inside the node at its size
};

struct StageCosts {
  PassTimes layer;
  // The layer's tp, cp and ep collectives in order, forward and backward
  // (recompute included), when they are exposed (no tp overlap): their times are
  // inside `layer`; the step engine plays those that leave the node as flows and
  // takes their time out. Overlapped, they stay inside `layer` and these are empty.
  std::vector<LayerCollective> forward_comms;
  std::vector<LayerCollective> backward_comms;
  PassTimes embedding;
  PassTimes head;
  double pp_bytes_per_gpu = 0;  // one activation transfer across a stage boundary
  std::vector<models::Collective> dp_comms;
  std::vector<CommCost> dp_costs;  // as the analytic engine prices them (and its algorithm)
  double optimizer_s = 0;
};

StageCosts stage_costs(const scenario::Scenario& s, const DeviceProfile& profile);

}  // namespace myriad::sim
