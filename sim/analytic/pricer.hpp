// Prices an estimate's phases and collectives on one device profile and cluster,
// each op once per phase, and records them in the report's op and collective
// tables (estimator.cpp; header-only so that the estimate's hot path inlines it).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/plan/rank_layout.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/host_wait.hpp"
#include "sim/analytic/layer_exposure.hpp"
#include "sim/cost/compute_cost.hpp"
#include "sim/cost/network_slowdown.hpp"
#include "sim/cost/overlap_share.hpp"

namespace myriad::sim {

class Pricer {
  using GroupKind = models::GroupKind;

 public:
  Pricer(const models::scenario::Scenario& s, const DeviceProfile& p, StepReport& report,
         bool tables = true)
      : s_(s),
        p_(p),
        report_(report),
        tables_(tables),
        gather_network_(network_slowdown(s, Traffic::dp_gather)),
        reduce_network_(network_slowdown(s, Traffic::dp_reduce)),
        pp_network_(network_slowdown(s, Traffic::pp)) {
    if (tables_) report_.ops.reserve(128);
    // A layer's phases and the embedding's and head's: room for a large MoE model's.
    cost_pool_.reserve(256);
    op_rows_.reserve(256);
    comm_pool_.reserve(64);
    priced_phases_.reserve(16);
  }

  // What oversubscription does to the data-parallel rings and pipeline transfers.
  [[nodiscard]] const NetworkSlowdown& network(Traffic t) const {
    return t == Traffic::pp                                  ? pp_network_
           : t == Traffic::dp_gather || reductions_together_ ? gather_network_
                                                             : reduce_network_;
  }
  // The stages reduce their gradients as they finish their last backward, one
  // stage's backward pass after the next one's; a reduction that lasts longer than
  // that meets the neighbours' on the network, like the gathers.
  void set_reductions_together(bool together) { reductions_together_ = together; }
  // The traffic a data-parallel or pipeline collective is: gathers at the start of
  // the step, reductions at the end.
  static Traffic traffic_of(const models::Collective& c) {
    if (c.group == GroupKind::pp) return Traffic::pp;
    return c.kind == models::CollectiveKind::all_gather ? Traffic::dp_gather : Traffic::dp_reduce;
  }

  // The compute rate communication takes while it overlaps compute.
  [[nodiscard]] double overlap_share() const { return p_.overlap_compute_share(); }

  PhaseTime price(const models::Phase& phase, double runs_per_step) {
    // An estimate prices its layer's phases several times (stage times, the op
    // table): each op's and each collective's cost is computed once, kept by the
    // phase it belongs to, with what they add up to (but for ZeRO-3's data-parallel
    // collectives, whose network depends on set_reductions_together).
    const PricedPhase& e = priced(phase);
    PhaseTime t = e.fixed;
    const ComputeCost* costs = cost_pool_.data() + e.first_op;
    const CommCost* comm_costs = comm_pool_.data() + e.first_comm;
    const bool record_now = tables_ && runs_per_step > 0;
    if (record_now) {
      std::uint16_t* rows = op_rows_.data() + e.first_op;
      for (std::size_t i = 0; i < phase.ops.size(); ++i) {
        record(phase.ops[i], costs[i], runs_per_step, rows[i]);
      }
    }
    for (std::size_t i = 0; i < phase.comms.size(); ++i) {
      const models::Collective& c = phase.comms[i];
      if (c.group == GroupKind::dp) {
        add_comm(t, c, price(c, runs_per_step).time_s);
      } else if (record_now) {
        record(c, span_of(c.group), comm_costs[i], runs_per_step);
      }
    }
    return t;
  }

  // The host's time to issue `phase`'s kernels and collectives (host_wait.hpp).
  double host_time(const models::Phase& phase) { return priced(phase).fixed.host_issue; }

  // What the GPU waits for the host in `phase`, which has a host sync
  // (Phase::host_sync; synced_stretch), priced as `priced` and exposed as
  // `exposed` (its collectives at their exposed share).
  double synced_wait(const models::Phase& phase, const PhaseTime& priced_time,
                     const PhaseTime& exposed_time) {
    const double h = p_.host_launch_s;
    if (h <= 0 || phase.host_sync < 0) return 0;
    PricedPhase& e = priced(phase);
    // An estimate asks again for the same exposure (stage times, the op table).
    if (e.synced.exposed == exposed_time.comm && e.synced.priced == priced_time.comm &&
        e.synced.wait >= 0) {
      return e.synced.wait;
    }
    const double gpu = exposed_time.compute + exposed_time.comm.total();
    const ComputeCost* costs = cost_pool_.data() + e.first_op;
    const CommCost* comm_costs = comm_pool_.data() + e.first_comm;
    std::array<double, kGroupKinds.size()> placed{};  // by group: collectives without a price
    for (const auto& c : phase.comms) {
      if (c.group == GroupKind::dp) placed[static_cast<std::size_t>(c.group)] += 1;
    }
    const auto comm_gpu = [&](std::size_t i) {
      const GroupKind g = phase.comms[i].group;
      const double whole = priced_time.comm[g];
      if (whole <= 0) return 0.0;
      const double own =
          g == GroupKind::dp ? whole / placed[static_cast<std::size_t>(g)] : comm_costs[i].time_s;
      return own * exposed_time.comm[g] / whole;
    };
    // From the sync round to it: positions sync..n (n: after the last op), 0..sync-1;
    // a collective sits before the op it was issued before.
    thread_local std::vector<Issued> items;
    items.clear();
    const auto n = static_cast<int>(phase.ops.size());
    for (int step = 0; step <= n; ++step) {
      const int k = (phase.host_sync + step) % (n + 1);
      for (std::size_t i = 0; i < phase.comms.size(); ++i) {
        if (std::max(0, phase.comms[i].after_ops) == k) items.push_back({h, comm_gpu(i)});
      }
      if (k < n) {
        const auto op = static_cast<std::size_t>(k);
        items.push_back({launch_time(phase.ops[op]), costs[op].time_s});
      }
    }
    e.synced = {exposed_time.comm, priced_time.comm, std::max(0.0, synced_stretch(items) - gpu)};
    return e.synced.wait;
  }

  CommCost price(const models::Collective& c, double runs_per_step) {
    const models::GroupSpan& span = span_of(c.group);
    const CommCost cost = collective_cost(c, span, s_.cluster, p_, slowdown_of(c));
    if (tables_ && runs_per_step > 0) record(c, span, cost, runs_per_step);
    return cost;
  }

 private:
  // A phase's ops' and collectives' costs and their sum (but for data-parallel
  // collectives), computed on first sight (phases live in the plan, which
  // outlives the Pricer).
  struct PricedPhase {
    const models::Phase* phase = nullptr;
    std::size_t first_op = 0;    // in cost_pool_
    std::size_t first_comm = 0;  // in comm_pool_
    PhaseTime fixed;
    struct {
      GroupTimes exposed;  // the collectives' exposure it was computed at
      GroupTimes priced;
      double wait = -1;  // -1: not yet
    } synced;            // synced_wait's last answer
  };
  PricedPhase& priced(const models::Phase& phase) {
    for (auto& e : priced_phases_) {
      if (e.phase == &phase) return e;
    }
    PricedPhase e{&phase, cost_pool_.size(), comm_pool_.size(), {}, {}};
    for (const auto& op : phase.ops) {
      const ComputeCost cost = compute_cost(op, p_);
      cost_pool_.push_back(cost);
      op_rows_.push_back(0);
      e.fixed.compute += cost.time_s;
      if (op.cls == models::OpClass::gemm) e.fixed.gemm += cost.time_s;
      if (op.wgrad) e.fixed.weight += cost.time_s;
      e.fixed.host_issue += launch_time(op);
    }
    e.fixed.host_issue += p_.host_launch_s * static_cast<double>(phase.comms.size());
    for (const auto& c : phase.comms) {
      // Data-parallel ones are priced when asked; pipeline transfers do not count.
      const bool fixed = c.group != GroupKind::dp;
      const CommCost cost =
          fixed ? collective_cost(c, span_of(c.group), s_.cluster, p_, slowdown_of(c)) : CommCost{};
      comm_pool_.push_back(cost);
      if (fixed && c.group != GroupKind::pp) add_comm(e.fixed, c, cost.time_s);
    }
    // Where the expert collectives split the phase: the compute between them, and
    // the first ones' time.
    if (const auto [first_ep, last_ep] = phase.expert_split(); first_ep >= 0) {
      for (int k = first_ep; k < last_ep; ++k) {
        const double time = cost_pool_[e.first_op + static_cast<std::size_t>(k)].time_s;
        e.fixed.ep_inner += time;
        if (phase.ops[static_cast<std::size_t>(k)].wgrad) e.fixed.ep_inner_weight += time;
      }
      for (std::size_t i = 0; i < phase.comms.size(); ++i) {
        const auto& c = phase.comms[i];
        if (c.group == GroupKind::ep && c.after_ops == first_ep) {
          e.fixed.ep_first += comm_pool_[e.first_comm + i].time_s;
        }
      }
    }
    priced_phases_.push_back(e);
    return priced_phases_.back();
  }

  // The host's time to issue an op's kernels: each piece of a split GEMM, each
  // expert's, at the share of an averaged layer's layers that run it.
  [[nodiscard]] double launch_time(const models::Op& op) const {
    return p_.host_launch_s * op.launches * op.pieces * op.share;
  }

  // A layer collective's time in its group's line, and the compute rate its
  // kernels take while it overlaps compute.
  void add_comm(PhaseTime& t, const models::Collective& c, double time) const {
    t.comm[c.group] += time;
    t.sm_share[c.group] += time * sim::overlap_share(c, p_);
  }

  [[nodiscard]] double slowdown_of(const models::Collective& c) const {
    return c.group == GroupKind::dp || c.group == GroupKind::pp ? network(traffic_of(c)).factor
                                                                : 1.0;
  }

  // Adds a collective to the report's table (tables_, runs_per_step > 0).
  void record(const models::Collective& c, const models::GroupSpan& span, const CommCost& cost,
              double runs_per_step) {
    if (span.size <= 1) return;
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

  // Adds an op to the report's table (tables_, runs_per_step > 0), at `row` (its
  // index + 1 in report_.ops, found and kept on the op's first record).
  void record(const models::Op& op, const ComputeCost& cost_at_share, double runs_at_share,
              std::uint16_t& row) {
    // An averaged layer's kernel (op.share below 1) runs on that share of the
    // layers: the table gives its time a run and its runs, not the average's.
    ComputeCost cost = cost_at_share;
    double runs_per_step = runs_at_share;
    if (op.share > 0 && op.share < 1) {
      cost.time_s /= op.share;
      runs_per_step *= op.share;
    }
    if (row == 0) row = op_row(op, cost);
    const auto it = report_.ops.begin() + (row - 1);
    // Several ops may share a name (a GEMM's two backward GEMMs): keep totals.
    const double total = it->time_s * it->per_step + cost.time_s * runs_per_step;
    const double flops =
        it->efficiency * it->time_s * it->per_step + cost.efficiency * cost.time_s * runs_per_step;
    it->per_step += runs_per_step;
    it->time_s = total / it->per_step;
    it->efficiency = total > 0 ? flops / total : 0;
  }

  // The op's row in report_.ops (index + 1), added where it has none yet.
  std::uint16_t op_row(const models::Op& op, const ComputeCost& cost) {
    // Named "qkv" or "qkv.bwd": matched without building the name (once a layer a pass).
    // Found by a small hash table of the ops recorded so far (name and direction).
    constexpr std::string_view kBackward = ".bwd";
    const std::string_view base = op.name;
    const auto same = [&](const PricedOp& po) {
      const std::string_view n = po.name;
      return op.backward ? n.size() == base.size() + kBackward.size() && n.starts_with(base) &&
                               n.ends_with(kBackward)
                         : n == base;
    };
    std::size_t slot =
        (std::hash<std::string_view>{}(base)*2 + (op.backward ? 1 : 0)) % op_slots_.size();
    while (op_slots_[slot] != 0 && !same(report_.ops[op_slots_[slot] - 1])) {
      slot = (slot + 1) % op_slots_.size();
    }
    if (op_slots_[slot] == 0) {
      if (report_.ops.size() + 1 >= op_slots_.size()) {
        throw std::logic_error("estimate: more distinct ops than the op table holds");
      }
      std::string name(base);
      if (op.backward) name += kBackward;
      report_.ops.push_back({std::move(name), std::string(models::op_class_name(op.cls)), 0, 0,
                             cost.memory_bound, 0});
      op_slots_[slot] = static_cast<std::uint16_t>(report_.ops.size());
    }
    return op_slots_[slot];
  }

  const models::scenario::Scenario& s_;
  const DeviceProfile& p_;
  StepReport& report_;
  bool tables_;                                // record every op and collective in the report
  std::array<std::uint16_t, 256> op_slots_{};  // report_.ops index + 1 by hash; 0: empty
  // Each group's span, computed once per estimate.
  std::array<std::optional<models::GroupSpan>, 5> spans_;
  const models::GroupSpan& span_of(GroupKind g) {
    auto& slot = spans_[static_cast<std::size_t>(g)];
    if (!slot) slot = models::group_span(g, s_);
    return *slot;
  }
  std::vector<ComputeCost> cost_pool_;  // every priced phase's ops, phase after phase
  std::vector<std::uint16_t> op_rows_;  // by op of cost_pool_: its report_.ops row + 1, or 0
  std::vector<CommCost> comm_pool_;     // and collectives (data-parallel ones left at zero)
  std::vector<PricedPhase> priced_phases_;
  NetworkSlowdown gather_network_;
  NetworkSlowdown reduce_network_;
  NetworkSlowdown pp_network_;
  bool reductions_together_ = false;
};

}  // namespace myriad::sim
