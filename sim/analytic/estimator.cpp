#include "sim/analytic/estimator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "models/plan/rank_layout.hpp"
#include "models/transformer/model_stats.hpp"
#include "models/transformer/moe_routing.hpp"
#include "sim/analytic/activation_offload.hpp"
#include "sim/analytic/dp_exposure.hpp"
#include "sim/analytic/layer_exposure.hpp"
#include "sim/analytic/network_notes.hpp"
#include "sim/analytic/optimizer_time.hpp"
#include "sim/analytic/pipeline_makespan.hpp"
#include "sim/analytic/pricer.hpp"
#include "sim/analytic/program_phases.hpp"
#include "sim/analytic/required_parameters.hpp"
#include "sim/analytic/step_rates.hpp"
#include "sim/cost/compute_cost.hpp"
#include "sim/cost/network_slowdown.hpp"
#include "sim/cost/overlap_share.hpp"

namespace myriad::sim {
namespace {

using models::GroupKind;

// What a stage spends per micro-batch, by kind.
struct StageTime {
  double compute = 0;
  double forward = 0;  // forward passes: their compute and exposed layer communication
  double weight = 0;   // of the compute: weight gradients' GEMMs
  GroupTimes comm;     // exposed, by group (pp: blocking transfers; dp: ZeRO-3's)
  PassTimes a2a;       // its a2a_* fields: the expert all-to-alls, whole and exposed
  double offload = 0;  // waits for activation offload's copies (forward's in `forward` too)
  double host = 0;     // waits for the host to issue kernels (forward's in `forward` too)
  [[nodiscard]] double total() const { return compute + comm.total() + offload + host; }
  StageTime& operator+=(const StageTime& o) {
    compute += o.compute;
    offload += o.offload;
    host += o.host;
    forward += o.forward;
    weight += o.weight;
    comm += o.comm;
    a2a += o.a2a;
    return *this;
  }
  // As passes: forward, backward (with recomputation), weight gradients, all-to-alls.
  [[nodiscard]] PassTimes passes() const {
    PassTimes p = a2a;
    p.forward = forward;
    p.backward = total() - forward;
    p.weight = weight;
    p.host = host;
    return p;
  }
};

// Adds phase `i`'s (forward, backward, recomputation) expert all-to-alls, whole
// (`priced`) and exposed, to `a2a`, and where they split forward and backward
// (recomputation's count with the backward's last).
void add_a2a(PassTimes& a2a, std::size_t i, const PhaseTime& priced, const PhaseTime& exposed) {
  const bool forward = i == 0;
  (forward ? a2a.a2a_forward : a2a.a2a_backward) += priced.comm[GroupKind::ep];
  (forward ? a2a.a2a_exposed_forward : a2a.a2a_exposed_backward) += exposed.comm[GroupKind::ep];
  if (i < 2) {
    (forward ? a2a.inner_forward : a2a.inner_backward) += priced.ep_inner;
    (forward ? a2a.a2a_first_forward : a2a.a2a_first_backward) += priced.ep_first;
    if (!forward) a2a.inner_weight += priced.ep_inner_weight;
  }
}

StageTime program_time(const models::LayerProgram& lp, Pricer& pricer, const LayerOverlap& overlap,
                       double runs_per_step) {
  StageTime t;
  const ProgramPhases p = program_phases(lp, pricer, overlap, runs_per_step);
  for (std::size_t i = 0; i < 3; ++i) {
    const PhaseTime& pt = p.exposed[i];
    t.compute += pt.compute;
    t.host += p.host[i];
    t.weight += pt.weight;
    if (i == 0) t.forward += pt.compute + pt.comm.total() + p.host[i];
    t.comm += pt.comm;
    add_a2a(t.a2a, i, p.priced[i], pt);
  }
  return t;
}

StageTime scaled(StageTime t, double k) {
  t.compute *= k;
  t.forward *= k;
  t.weight *= k;
  t.comm *= k;
  t.a2a = t.a2a.scaled(k);
  t.offload *= k;
  t.host *= k;
  return t;
}

// A layer's time with fine-grained activation offload's waits (module_offload_stall).
StageTime with_module_offload(const models::scenario::Scenario& s, const DeviceProfile& profile,
                              StageTime t, models::LayerKind kind,
                              const models::LayerProgram& program) {
  const PassTimes stall = module_offload_stall(s, profile, t.passes(), kind, program);
  t.offload += stall.offload;
  t.forward += stall.forward;
  return t;
}

PassTimes pass_times(const models::LayerProgram& lp, Pricer& pricer, const LayerOverlap& overlap) {
  PassTimes times;
  const ProgramPhases p = program_phases(lp, pricer, overlap, 0);
  for (std::size_t i = 0; i < 3; ++i) {
    const PhaseTime& t = p.exposed[i];
    (i == 0 ? times.forward : times.backward) += t.compute + t.comm.total() + p.host[i];
    times.host += p.host[i];
    times.weight += t.weight;
    add_a2a(times, i, p.priced[i], t);
  }
  return times;
}

ExposedComm exposed_comm(const models::LayerProgram& lp, Pricer& pricer,
                         const LayerOverlap& overlap) {
  ExposedComm c;
  for (const auto* phase : {&lp.forward, &lp.backward, &lp.recompute}) {
    c += exposed(pricer.price(*phase, 0), overlap, pricer.overlap_share()).comm;
  }
  return c;
}

// The layer's tp, cp and ep collectives that are not overlapped (`overlapped`
// false), or its overlapped expert all-to-alls (true), in order.
std::vector<LayerCollective> layer_collectives(std::initializer_list<const models::Phase*> phases,
                                               Pricer& pricer, const DeviceProfile& profile,
                                               const LayerOverlap& overlap,
                                               bool overlapped = false) {
  std::vector<LayerCollective> out;
  bool first_phase = true;  // forward, or backward (not recomputation)
  for (const auto* phase : phases) {
    const int first_ep = first_phase ? phase->expert_split().first : -1;
    first_phase = false;
    for (const auto& c : phase->comms) {
      if (c.group == GroupKind::dp || c.group == GroupKind::pp) continue;
      if (overlapped ? !(c.group == GroupKind::ep && overlap.of(c.group)) : overlap.of(c.group)) {
        continue;
      }
      out.push_back({c, pricer.price(c, 0), nvlink_busbw(profile, c.kind, c.bytes),
                     c.group == GroupKind::ep && first_ep >= 0 && c.after_ops == first_ep});
    }
  }
  return out;
}

}  // namespace

double dp_buckets_per_chunk(const models::StepPlan& plan) {
  const double bucket = std::max(kDdpBucketParams, kDdpBucketParamsPerRank * plan.dense_dp);
  return std::max(1.0, std::ceil(plan.params_max / plan.virtual_stages / bucket));
}

StageCosts stage_costs(const models::scenario::Scenario& s, const DeviceProfile& measured) {
  // A profile already on this GPU (a search's) is used as it is, not copied.
  std::optional<DeviceProfile> placed;
  const DeviceProfile& profile = is_on_hardware(measured, s.cluster.gpu)
                                     ? measured
                                     : placed.emplace(on_hardware(measured, s.cluster.gpu));
  require_parameters(s, profile);
  StepReport scratch;
  Pricer pricer(s, profile, scratch);
  const models::StepPlan plan = models::plan_step(s);
  StageCosts c;
  const LayerOverlap overlap(s.overlap, profile, models::splits_backward(s.parallelism.schedule),
                             s.parallelism.delay_wgrad_compute);
  c.layer = pass_times(plan.layer, pricer, overlap);
  c.layer += module_offload_stall(s, profile, c.layer, models::LayerKind::moe, plan.layer);

  // Overlapped collectives stay inside the layer's time.
  c.forward_comms = layer_collectives({&plan.layer.forward}, pricer, profile, overlap);
  c.backward_comms =
      layer_collectives({&plan.layer.backward, &plan.layer.recompute}, pricer, profile, overlap);
  c.forward_beside = layer_collectives({&plan.layer.forward}, pricer, profile, overlap, true);
  c.backward_beside = layer_collectives({&plan.layer.backward, &plan.layer.recompute}, pricer,
                                        profile, overlap, true);
  if (plan.mixed()) {
    c.dense_layer = pass_times(plan.dense_layer, pricer, overlap);
    c.dense_layer +=
        module_offload_stall(s, profile, c.dense_layer, models::LayerKind::dense, plan.dense_layer);
    c.dense_layer_comm = exposed_comm(plan.dense_layer, pricer, overlap);
  }
  if (plan.partial_recompute()) {
    c.recompute_layer = pass_times(plan.recompute_layer, pricer, overlap);
    c.recompute_layer_comm = exposed_comm(plan.recompute_layer, pricer, overlap);
    if (plan.mixed()) {
      c.recompute_dense_layer = pass_times(plan.recompute_dense_layer, pricer, overlap);
      c.recompute_dense_layer_comm = exposed_comm(plan.recompute_dense_layer, pricer, overlap);
    }
  }
  c.embedding = pass_times(plan.embedding, pricer, overlap);
  c.head = pass_times(plan.head, pricer, overlap);
  c.offload = offload_stall(s, profile, c.layer, c.dense_layer, plan.layer, plan.dense_layer);
  c.layer_comm = exposed_comm(plan.layer, pricer, overlap);
  c.embedding_comm = exposed_comm(plan.embedding, pricer, overlap);
  c.head_comm = exposed_comm(plan.head, pricer, overlap);
  c.pp_bytes_per_gpu = plan.pp_transfer.bytes;
  c.pp_transfer = pricer.price(plan.pp_transfer, 0);
  c.dp_comms = plan.dp_comms;
  for (const auto& comm : plan.dp_comms) c.dp_costs.push_back(pricer.price(comm, 0));
  c.optimizer_s = optimizer_time(s, plan, profile);
  c.dp_buckets = dp_buckets_per_chunk(plan);
  return c;
}

// Over 100 lines: issue 37 moves this orchestration out and splits it.
// NOLINTNEXTLINE(readability-function-size)
StepReport estimate(const models::scenario::Scenario& s, const DeviceProfile& measured,
                    Detail detail) {
  // A profile already on this GPU (a search's) is used as it is, not copied.
  std::optional<DeviceProfile> placed;
  const DeviceProfile& profile = is_on_hardware(measured, s.cluster.gpu)
                                     ? measured
                                     : placed.emplace(on_hardware(measured, s.cluster.gpu));
  require_parameters(s, profile);
  StepReport r;
  const models::StepPlan plan = models::plan_step(s);
  Pricer pricer(s, profile, r, detail == Detail::full);
  // DualPipe: each of a rank's two chunks runs half the micro-batches (its direction's).
  const bool dualpipe = plan.schedule == models::scenario::Schedule::dualpipe;
  const double m = dualpipe ? plan.micro_batches / 2.0 : plan.micro_batches;
  const double v = plan.virtual_stages;
  const double pp = plan.pp;
  const LayerOverlap layer_overlap(s.overlap, profile,
                                   models::splits_backward(s.parallelism.schedule),
                                   s.parallelism.delay_wgrad_compute);

  // Stages differ by their layers (uneven stages; an MoE model's dense layers),
  // the embedding and the head.
  const bool mixed = plan.mixed();
  const StageTime layer =
      with_module_offload(s, profile, program_time(plan.layer, pricer, layer_overlap, 0),
                          models::LayerKind::moe, plan.layer);
  const StageTime dense =
      mixed ? with_module_offload(s, profile,
                                  program_time(plan.dense_layer, pricer, layer_overlap, 0),
                                  models::LayerKind::dense, plan.dense_layer)
            : StageTime{};
  // Partial recomputation: what each recomputed layer runs again.
  const bool partial = plan.partial_recompute();
  const StageTime again =
      partial ? program_time(plan.recompute_layer, pricer, layer_overlap, 0) : StageTime{};
  const StageTime dense_again =
      partial && mixed ? program_time(plan.recompute_dense_layer, pricer, layer_overlap, 0)
                       : StageTime{};
  const auto layers_of = [&](int stage) {
    const auto k = static_cast<std::size_t>(stage);
    StageTime t = scaled(layer, plan.layers_by_stage[k] - plan.dense_by_stage[k]);
    if (mixed) t += scaled(dense, plan.dense_by_stage[k]);
    if (partial) {
      const int recomputed_dense = plan.recomputed_dense_by_stage[k];
      t += scaled(again, plan.recomputed_by_stage[k] - recomputed_dense);
      if (mixed) t += scaled(dense_again, recomputed_dense);
    }
    return t;
  };
  // The stage between the first and the last with the most to do (the first
  // without such stages).
  int body_stage = 0;
  StageTime body = layers_of(0);
  for (int k = 1; k + 1 < plan.pp; ++k) {
    const StageTime t = layers_of(k);
    if (body_stage == 0 || t.total() > body.total()) {
      body = t;
      body_stage = k;
    }
  }
  StageTime first = layers_of(0);
  const StageTime embedding = program_time(plan.embedding, pricer, layer_overlap, m);
  first += embedding;
  StageTime last = layers_of(plan.pp - 1);
  const StageTime head = program_time(plan.head, pricer, layer_overlap, m);
  last += head;
  if (dualpipe) {  // each end rank holds one direction's embedding and the other's head
    first += head;
    last += embedding;
  }
  // Activation offload (on a pipeline of one stage): the waits for its copies.
  const PassTimes off =
      offload_stall(s, profile, layer.passes(), dense.passes(), plan.layer, plan.dense_layer);
  double p2p = 0;
  if (plan.pp > 1) {
    p2p = pricer.price(plan.pp_transfer, m * 2 * v).time_s;
    // Blocking transfers: in the steady state a stage's period holds one transfer per
    // chunk (its forward output and its backward output go on while the neighbour
    // computes the other direction's): with the bubble's share, (m v + p - 1) per
    // step, as the step engine plays them.
    const double exposed_p2p = s.overlap.pp ? 0 : v * p2p;
    for (auto* st : {&body, &first, &last}) st->comm[GroupKind::pp] = exposed_p2p;
  } else {
    first += program_time(plan.head, pricer, layer_overlap, 0);
    first.offload += off.forward + off.backward;
    first.forward += off.forward;
    last = first;
  }
  const StageTime* slowest = first.total() >= last.total() ? &first : &last;
  if (pp > 2 && body.total() > slowest->total()) slowest = &body;
  const StageTime& critical = *slowest;
  const auto critical_at = static_cast<std::size_t>(slowest == &first  ? 0
                                                    : slowest == &last ? plan.pp - 1
                                                                       : body_stage);
  const int critical_layers = plan.layers_by_stage[critical_at];
  const int critical_dense = plan.dense_by_stage[critical_at];
  // The op table.
  (void)program_time(plan.layer, pricer, layer_overlap, m * (critical_layers - critical_dense));
  if (mixed) (void)program_time(plan.dense_layer, pricer, layer_overlap, m * critical_dense);
  if (partial) {
    const int recomputed_dense = plan.recomputed_dense_by_stage[critical_at];
    (void)program_time(plan.recompute_layer, pricer, layer_overlap,
                       m * (plan.recomputed_by_stage[critical_at] - recomputed_dense));
    if (mixed) {
      (void)program_time(plan.recompute_dense_layer, pricer, layer_overlap, m * recomputed_dense);
    }
  }
  // Whether stage k's layers are those of stage `other`.
  const auto alike_layers = [&](int k, std::size_t other) {
    const auto i = static_cast<std::size_t>(k);
    return plan.layers_by_stage[i] == plan.layers_by_stage[other] &&
           plan.dense_by_stage[i] == plan.dense_by_stage[other] &&
           plan.recomputed_by_stage[i] == plan.recomputed_by_stage[other] &&
           plan.recomputed_dense_by_stage[i] == plan.recomputed_dense_by_stage[other];
  };
  // Every stage's time: the stages between differ only by their layers (body is
  // the largest of them).
  double stages_total = pp == 1 ? first.total() : first.total() + last.total();
  for (int k = 1; k + 1 < plan.pp; ++k) {
    stages_total += alike_layers(k, static_cast<std::size_t>(body_stage))
                        ? body.total()
                        : layers_of(k).total() + body.comm[GroupKind::pp];
  }
  const double mean = stages_total / pp;
  // Fill and drain: every stage's pass but the slowest one's, which the m passes
  // count ((p - 1) / v of a stage's time when the stages are alike; less when the
  // slowest stage is slower than the others, as the step engine plays it).
  // Transfers that overlap compute still take their time on the way: the first
  // micro-batch's forward crosses p - 1 stage boundaries before the last stage
  // starts, and the last one's backward as many after it ends.
  const double in_flight = s.overlap.pp ? 2 * (pp - 1) * p2p : 0;
  double bubble = (pp * mean - critical.total()) / v + in_flight;
  const auto pass_times_of = [](const StageTime& t) { return t.passes(); };
  // Interleaved, the chunks that hold the embedding and the head pace the
  // schedule's rounds, and buffering between stages absorbs part of it: the
  // pipeline's time is the longest path through the schedule's passes. 1F1B
  // takes it too where its passes are few (about a nanosecond a pass); with more,
  // the formula above, within 0.6 % of it, whose error the steady state dwarfs.
  // A zero-bubble schedule is always swept: its weight-gradient passes fill the
  // bubble as far as the schedule's order lets them.
  const bool swept = plan.virtual_stages > 1 || 2 * pp * m <= kSweptPasses ||
                     models::splits_backward(plan.schedule) || models::pairs_passes(plan.schedule);
  const PassKinds kinds{pass_times_of(layer),
                        pass_times_of(dense),
                        pass_times_of(again),
                        pass_times_of(dense_again),
                        pass_times_of(embedding),
                        pass_times_of(head),
                        profile.overlap_compute_share(),
                        off};
  if (swept && !s.overlap.dp) {
    bubble = pipeline_time(plan, kinds, {p2p, s.overlap.pp}) - m * critical.total();
  }

  // Reductions overlapping across stages: when one outlasts the stagger between
  // the stages' ends, a backward pass of one micro-batch and chunk. (Overlapped,
  // they go bucket by bucket under the backward passes, spread over the cool-down.)
  double reduce_alone = 0;
  for (const auto& c : plan.dp_comms) {
    if (c.kind != models::CollectiveKind::all_gather) reduce_alone += pricer.price(c, 0).time_s;
  }
  const double stagger = (critical.total() - critical.forward) / v;
  pricer.set_reductions_together(pp > 1 && reduce_alone > stagger);
  double dp_gather = 0;
  double dp_reduce = 0;
  thread_local std::vector<CommCost> dp_costs;
  dp_costs.clear();
  for (const auto& c : plan.dp_comms) {
    dp_costs.push_back(pricer.price(c, 1));
    (c.kind == models::CollectiveKind::all_gather ? dp_gather : dp_reduce) +=
        dp_costs.back().time_s;
  }
  DpCost dp{dp_gather + dp_reduce};
  // Interleaved, or 1F1B where its passes are few, with each stage's
  // data-parallel stream beside its passes as the step program runs them.
  if (s.overlap.dp && swept) {
    const auto& graph = cached_schedule_graph(plan);
    const DpPlay play = pipeline_with_dp(
        graph, pass_durations(graph, plan, kinds), {p2p, s.overlap.pp},
        dp_stream(plan.dp_comms, dp_costs, plan.virtual_stages, dp_buckets_per_chunk(plan)),
        profile.overlap_compute_share());
    // Waits for the link and the compute it slowed on the stage that ends the
    // step; the rest of what the traffic costs is the others' delay (bubble).
    dp = {play.waited, play.slowed, 0};
    bubble = play.end - m * critical.total() - play.waited - play.slowed;
  } else if (s.overlap.dp) {
    // One chunk a stage: the first stage starts the step and ends it, its first
    // forward waits for its parameters, its last backward makes the last gradients.
    const double passes = first.total() - first.comm[GroupKind::pp];
    // The stages as slow as the slowest pass the last micro-batch's backward on at
    // once; a faster one has slack that absorbs a slowdown.
    int alike = 0;
    for (int k = 1; k + 1 < plan.pp; ++k) {
      alike += alike_layers(k, static_cast<std::size_t>(body_stage));
    }
    if (alike_layers(0, critical_at)) ++alike;
    if (pp > 1 && alike_layers(plan.pp - 1, critical_at)) ++alike;
    const DpWindows w{first.forward, passes - first.forward, dp_buckets_per_chunk(plan),
                      static_cast<double>(std::max(1, alike))};
    dp = exposed_dp(dp_gather, dp_reduce, w, profile.overlap_compute_share());
  }
  const double opt = optimizer_time(s, plan, profile);

  // Compute slowed by data-parallel traffic beside it counts as compute (the first
  // stage's) and as bubble (the others', which it waits for), as the step engine's
  // critical path sees it.
  // DualPipe's and combined 1F1B's F&B passes hide expert all-to-alls behind the
  // other pass's compute: what they save on the critical stage comes off its
  // exposed ep time (any more off its compute), not out of the bubble.
  double ep_hidden = 0;
  double compute_hidden = 0;
  if (models::pairs_passes(plan.schedule)) {
    const double saved =
        fb_saving(cached_schedule_graph(plan), plan, kinds, static_cast<int>(critical_at));
    ep_hidden = std::min(saved, m * critical.comm[GroupKind::ep]);
    compute_hidden = saved - ep_hidden;
    bubble += saved;
    r.moe.a2a_exposed_unpaired_s = m * critical.comm[GroupKind::ep];
    r.moe.a2a_hidden_s = ep_hidden;
  }
  r.breakdown = {{"compute", m * critical.compute + dp.compute - compute_hidden},
                 {"tp", m * critical.comm[GroupKind::tp]},
                 {"cp", m * critical.comm[GroupKind::cp]},
                 {"ep", m * critical.comm[GroupKind::ep] - ep_hidden},
                 {"pp", m * critical.comm[GroupKind::pp]},
                 {"bubble", bubble + dp.bubble},
                 {"dp", dp.exposed + m * critical.comm[GroupKind::dp]},
                 {"offload", m * critical.offload},
                 {"host", m * critical.host},
                 {"optimizer", opt}};
  for (const auto& part : r.breakdown) r.step_time_s += part.seconds;

  r.model_flops = models::model_flops_per_step(s);
  r.hardware_flops = models::hardware_flops_per_step(s);
  r.set_rates(step_rates(s, r.model_flops, r.hardware_flops, r.step_time_s));
  // Largest total first; sorted by index, then moved once (each op holds two strings).
  std::vector<std::size_t> order(r.ops.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return r.ops[a].time_s * r.ops[a].per_step > r.ops[b].time_s * r.ops[b].per_step;
  });
  std::vector<PricedOp> sorted;
  sorted.reserve(r.ops.size());
  for (const std::size_t i : order) sorted.push_back(std::move(r.ops[i]));
  r.ops = std::move(sorted);
  r.memory = models::memory_per_gpu(s, plan);
  r.memory_fragmentation = r.memory.total() * profile.memory_fragmentation;
  r.memory_capacity = s.cluster.gpu.hbm_bytes;
  r.memory_reserved = profile.memory_reserved_bytes;
  r.host_memory_capacity = s.cluster.gpu.host_memory_bytes;
  r.fits = r.memory_needed() <= r.memory_usable() && r.host_fits();
  if (detail == Detail::full) {
    r.network_notes = network_notes(s, plan, pricer);
  }
  if (profile.host_launch_s > 0) {
    const double h = profile.host_launch_s;
    // Counts, but for an averaged layer's kernels at their share: to a millionth.
    const auto count = [&](double seconds) { return std::round(seconds / h * 1e6) / 1e6; };
    r.host = {h, count(pricer.host_time(plan.layer.forward)),
              count(pricer.host_time(plan.layer.backward) + pricer.host_time(plan.layer.recompute)),
              plan.layer.forward.host_sync >= 0};
  }
  if (s.model.is_moe()) {
    const models::MoeLoad& load = models::moe_load(s.model.moe, s.parallelism.ep);
    r.moe.present = true;
    r.moe.imbalance = load.imbalance();
    r.moe.dropped = load.dropped;
    const double routed = s.model.moe.top_k * (1 - load.dropped);
    r.moe.padded = load.mean_slots > 0 ? std::max(0.0, 1 - routed / load.mean_slots) : 0;
    for (const auto& c : plan.layer.forward.comms) {
      if (c.name == "ep.dispatch") {
        r.moe.dispatch = std::string(models::collective_name(c.kind));
        r.moe.dispatch_inside_node = models::group_span(GroupKind::ep, s).nodes == 1;
      }
    }
  }
  // Inputs are bounded so that every term is finite; a non-finite figure is a bug.
  for (const double figure : {r.step_time_s, r.mfu, r.tokens_per_s, r.memory_needed()}) {
    if (!std::isfinite(figure) || figure < 0) {
      throw std::runtime_error(fmt::format(
          "internal error: {}: the analytic engine computed a non-finite or negative figure "
          "(step time {} s, MFU {}, tokens/s {}); no result is reported. Please report it with "
          "the scenario",
          s.file, r.step_time_s, r.mfu, r.tokens_per_s));
    }
  }
  return r;
}

}  // namespace myriad::sim
