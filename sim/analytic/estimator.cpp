#include "sim/analytic/estimator.hpp"

#include <algorithm>

#include "models/plan/placement.hpp"
#include "models/transformer/model_stats.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::sim {
namespace {

using models::GroupKind;

// Times of a phase of one layer (or of the embedding or head) for one micro-batch.
struct PhaseTime {
  double compute = 0;
  double gemm = 0;  // the part of compute that collectives can hide behind
  double tp = 0;
  double cp = 0;
  double ep = 0;
};

class Pricer {
 public:
  Pricer(const scenario::Scenario& s, const DeviceProfile& p, StepReport& report)
      : s_(s), p_(p), report_(report) {}

  // The compute rate communication takes while it overlaps compute.
  [[nodiscard]] double overlap_share() const { return p_.overlap_compute_share; }

  PhaseTime price(const models::Phase& phase, double runs_per_step) {
    PhaseTime t;
    for (const auto& op : phase.ops) {
      const ComputeCost cost = compute_cost(op, p_);
      t.compute += cost.time_s;
      if (op.cls == models::OpClass::gemm) t.gemm += cost.time_s;
      record(op, cost, runs_per_step);
    }
    for (const auto& c : phase.comms) {
      const double time = price(c, runs_per_step).time_s;
      switch (c.group) {
        case GroupKind::tp:
          t.tp += time;
          break;
        case GroupKind::cp:
          t.cp += time;
          break;
        case GroupKind::ep:
          t.ep += time;
          break;
        case GroupKind::dp:
        case GroupKind::pp:
          break;
      }
    }
    return t;
  }

  CommCost price(const models::Collective& c, double runs_per_step) {
    const auto span = models::group_span(c.group, s_);
    const CommCost cost = collective_cost(c, span, s_.cluster, p_);
    if (span.size > 1 && runs_per_step > 0) {
      auto it = std::find_if(report_.collectives.begin(), report_.collectives.end(),
                             [&](const PricedCollective& pc) { return pc.name == c.name; });
      if (it == report_.collectives.end()) {
        report_.collectives.push_back(
            {std::string(c.name), std::string(models::collective_name(c.kind)),
             std::string(models::group_name(c.group)), c.bytes, span.size, span.nodes, cost, 0});
        it = report_.collectives.end() - 1;
      }
      it->per_step += runs_per_step;
    }
    return cost;
  }

 private:
  void record(const models::Op& op, const ComputeCost& cost, double runs_per_step) {
    if (runs_per_step <= 0) return;
    std::string name(op.name);
    if (op.backward) name += ".bwd";
    auto it = std::find_if(report_.ops.begin(), report_.ops.end(),
                           [&](const PricedOp& po) { return po.name == name; });
    if (it == report_.ops.end()) {
      report_.ops.push_back(
          {name, std::string(models::op_class_name(op.cls)), 0, 0, cost.memory_bound, 0});
      it = report_.ops.end() - 1;
    }
    // Several ops may share a name (a GEMM's two backward GEMMs): keep totals.
    const double total = it->time_s * it->per_step + cost.time_s * runs_per_step;
    const double flops =
        it->efficiency * it->time_s * it->per_step + cost.efficiency * cost.time_s * runs_per_step;
    it->per_step += runs_per_step;
    it->time_s = total / it->per_step;
    it->efficiency = total > 0 ? flops / total : 0;
  }

  const scenario::Scenario& s_;
  const DeviceProfile& p_;
  StepReport& report_;
};

// What a stage spends per micro-batch, by kind.
struct StageTime {
  double compute = 0;
  double tp = 0;
  double cp = 0;
  double ep = 0;
  double pp = 0;
  [[nodiscard]] double total() const { return compute + tp + cp + ep + pp; }
  StageTime& operator+=(const StageTime& o) {
    compute += o.compute;
    tp += o.tp;
    cp += o.cp;
    ep += o.ep;
    pp += o.pp;
    return *this;
  }
};

// Communication overlapped with GEMMs: what the GEMMs cannot hide (at least a
// quarter), plus what hiding the rest costs them: its kernels take `share` of
// the compute rate while they run.
double exposed(double comm, double gemm, bool overlap, double share) {
  if (!overlap) return comm;
  const double out = std::max(comm / 4, comm - gemm);
  return out + share * (comm - out);
}

StageTime program_time(const models::LayerProgram& lp, Pricer& pricer, bool overlap,
                       double runs_per_step) {
  StageTime t;
  for (const auto* phase : {&lp.forward, &lp.backward, &lp.recompute}) {
    const PhaseTime pt = pricer.price(*phase, runs_per_step);
    t.compute += pt.compute;
    t.tp += exposed(pt.tp, pt.gemm, overlap, pricer.overlap_share());
    t.cp += exposed(pt.cp, pt.gemm, overlap, pricer.overlap_share());
    t.ep += exposed(pt.ep, pt.gemm, overlap, pricer.overlap_share());
  }
  return t;
}

StageTime scaled(StageTime t, double k) {
  t.compute *= k;
  t.tp *= k;
  t.cp *= k;
  t.ep *= k;
  t.pp *= k;
  return t;
}

double optimizer_time(const scenario::Scenario& s, const models::StepPlan& plan,
                      const DeviceProfile& p) {
  const double params = plan.params_max / (s.parallelism.zero >= 1 ? plan.dp : 1);
  // Bytes per parameter: read the fp32 gradient and the optimizer states (master
  // weights and moments), write the states back and the bf16 weights, and read the
  // gradient once more for the clipping norm: 34 B for Adam.
  double bytes_per_param = 4 + 2 * models::optimizer_bytes_per_param(s.training.optimizer) + 2 + 4;
  if (s.training.optimizer == scenario::Optimizer::lamb) bytes_per_param += 8;  // trust ratios
  models::Op op = models::make_elementwise("optimizer", params * bytes_per_param);
  op.cls = models::OpClass::optimizer;
  return compute_cost(op, p).time_s;
}

PassTimes pass_times(const models::LayerProgram& lp, Pricer& pricer, bool overlap) {
  const auto exposed_total = [&](const models::Phase& phase) {
    const PhaseTime t = pricer.price(phase, 0);
    return t.compute + exposed(t.tp, t.gemm, overlap, pricer.overlap_share()) +
           exposed(t.cp, t.gemm, overlap, pricer.overlap_share()) +
           exposed(t.ep, t.gemm, overlap, pricer.overlap_share());
  };
  return {exposed_total(lp.forward), exposed_total(lp.backward) + exposed_total(lp.recompute)};
}

std::vector<LayerCollective> layer_collectives(std::initializer_list<const models::Phase*> phases,
                                               Pricer& pricer, const DeviceProfile& profile) {
  std::vector<LayerCollective> out;
  for (const auto* phase : phases) {
    for (const auto& c : phase->comms) {
      if (c.group == GroupKind::dp || c.group == GroupKind::pp) continue;
      out.push_back({c, pricer.price(c, 0), interpolate_busbw(profile.nvlink_busbw, c.bytes)});
    }
  }
  return out;
}

}  // namespace

StageCosts stage_costs(const scenario::Scenario& s, const DeviceProfile& profile) {
  StepReport scratch;
  Pricer pricer(s, profile, scratch);
  const models::StepPlan plan = models::plan_step(s);
  StageCosts c;
  c.layer = pass_times(plan.layer, pricer, s.overlap.tp);
  if (!s.overlap.tp) {  // overlapped, they stay inside the layer's time
    c.forward_comms = layer_collectives({&plan.layer.forward}, pricer, profile);
    c.backward_comms =
        layer_collectives({&plan.layer.backward, &plan.layer.recompute}, pricer, profile);
  }
  c.embedding = pass_times(plan.embedding, pricer, s.overlap.tp);
  c.head = pass_times(plan.head, pricer, s.overlap.tp);
  c.pp_bytes_per_gpu = plan.pp_transfer.bytes;
  c.dp_comms = plan.dp_comms;
  for (const auto& comm : plan.dp_comms) c.dp_costs.push_back(pricer.price(comm, 0));
  c.optimizer_s = optimizer_time(s, plan, profile);
  return c;
}

StepReport estimate(const scenario::Scenario& s, const DeviceProfile& profile) {
  StepReport r;
  const models::StepPlan plan = models::plan_step(s);
  Pricer pricer(s, profile, r);
  const double m = plan.micro_batches;
  const double v = plan.virtual_stages;
  const double pp = plan.pp;
  const bool tp_overlap = s.overlap.tp;

  const double layers = plan.layers_per_stage;
  StageTime body = scaled(program_time(plan.layer, pricer, tp_overlap, m * layers), layers);
  StageTime first = body;
  first += program_time(plan.embedding, pricer, tp_overlap, m);
  StageTime last = body;
  last += program_time(plan.head, pricer, tp_overlap, m);
  if (plan.pp > 1) {
    const double p2p = pricer.price(plan.pp_transfer, m * 2 * v).time_s;
    const double exposed_p2p = s.overlap.pp ? 0 : 2 * v * p2p;
    for (auto* st : {&body, &first, &last}) st->pp = exposed_p2p;
  } else {
    first += program_time(plan.head, pricer, tp_overlap, 0);
    last = first;
  }
  const StageTime& critical = first.total() >= last.total() ? first : last;
  const double mean =
      pp == 1 ? first.total() : (first.total() + last.total() + (pp - 2) * body.total()) / pp;
  const double bubble = (pp - 1) / v * mean;

  // Gradients of a model chunk are complete only after its last micro-batch's backward,
  // in the pipeline's drain; parameters are needed from the first forward, in its fill.
  // Overlapped, each collective hides in that window (half the bubble, or half a
  // micro-batch without pipelining) but for the 1/v belonging to the last (first) chunk.
  const double window = std::max(bubble / 2, critical.total() / 2);
  double dp_exposed = 0;
  for (const auto& c : plan.dp_comms) {
    const double t = pricer.price(c, 1).time_s;
    // Hidden, its kernels take their share of the compute rate beside them.
    const double hidden = std::min(t * (v - 1) / v, window);
    dp_exposed += s.overlap.dp
                      ? t / v + (t * (v - 1) / v - hidden) + profile.overlap_compute_share * hidden
                      : t;
  }
  const double opt = optimizer_time(s, plan, profile);

  r.breakdown = {{"compute", m * critical.compute},
                 {"tp", m * critical.tp},
                 {"cp", m * critical.cp},
                 {"ep", m * critical.ep},
                 {"pp", m * critical.pp},
                 {"bubble", bubble},
                 {"dp", dp_exposed},
                 {"optimizer", opt}};
  for (const auto& part : r.breakdown) r.step_time_s += part.seconds;

  const double gpus = s.cluster.gpus;
  r.model_flops = models::model_flops_per_step(s);
  r.hardware_flops = models::hardware_flops_per_step(s);
  r.mfu = r.model_flops / (r.step_time_s * gpus * profile.bf16_flops);
  r.hfu = r.hardware_flops / (r.step_time_s * gpus * profile.bf16_flops);
  r.tokens_per_s =
      static_cast<double>(s.parallelism.global_batch) * s.model.seq_length / r.step_time_s;
  r.days_to_target = s.training.tokens / r.tokens_per_s / 86400;
  std::sort(r.ops.begin(), r.ops.end(), [](const PricedOp& a, const PricedOp& b) {
    return a.time_s * a.per_step > b.time_s * b.per_step;
  });
  r.memory = models::memory_per_gpu(s, plan);
  r.memory_capacity = s.cluster.gpu.hbm_bytes;
  r.fits = r.memory.total() <= r.memory_capacity;
  return r;
}

}  // namespace myriad::sim
