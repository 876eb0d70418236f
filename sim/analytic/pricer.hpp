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
    if (tables_) report_.ops.reserve(64);
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
    PhaseTime t;
    // An estimate prices its layer's phases several times (stage times, the op
    // table): each op's cost is computed once, kept by the phase it belongs to.
    const ComputeCost* costs = costs_of(phase);
    for (std::size_t i = 0; i < phase.ops.size(); ++i) {
      const models::Op& op = phase.ops[i];
      const ComputeCost& cost = costs[i];
      t.compute += cost.time_s;
      if (op.cls == models::OpClass::gemm) t.gemm += cost.time_s;
      if (op.wgrad) t.weight += cost.time_s;
      record(op, cost, runs_per_step);
    }
    for (const auto& c : phase.comms) {
      const double time = price(c, runs_per_step).time_s;
      if (c.group != GroupKind::pp) {
        t.comm[c.group] += time;
        t.sm_share[c.group] += time * sim::overlap_share(c, p_);
      }
    }
    return t;
  }

  CommCost price(const models::Collective& c, double runs_per_step) {
    const models::GroupSpan& span = span_of(c.group);
    const double slowdown =
        c.group == GroupKind::dp || c.group == GroupKind::pp ? network(traffic_of(c)).factor : 1.0;
    const CommCost cost = collective_cost(c, span, s_.cluster, p_, slowdown);
    if (tables_ && span.size > 1 && runs_per_step > 0) {
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
  // The costs of `phase`'s ops, computed on first sight (phases live in the plan,
  // which outlives the Pricer).
  const ComputeCost* costs_of(const models::Phase& phase) {
    for (const auto& [seen, first] : priced_phases_) {
      if (seen == &phase) return cost_pool_.data() + first;
    }
    const std::size_t first = cost_pool_.size();
    for (const auto& op : phase.ops) cost_pool_.push_back(compute_cost(op, p_));
    priced_phases_.emplace_back(&phase, first);
    return cost_pool_.data() + first;
  }

  void record(const models::Op& op, const ComputeCost& cost, double runs_per_step) {
    if (!tables_ || runs_per_step <= 0) return;
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
    const auto it = report_.ops.begin() + (op_slots_[slot] - 1);
    // Several ops may share a name (a GEMM's two backward GEMMs): keep totals.
    const double total = it->time_s * it->per_step + cost.time_s * runs_per_step;
    const double flops =
        it->efficiency * it->time_s * it->per_step + cost.efficiency * cost.time_s * runs_per_step;
    it->per_step += runs_per_step;
    it->time_s = total / it->per_step;
    it->efficiency = total > 0 ? flops / total : 0;
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
  std::vector<std::pair<const models::Phase*, std::size_t>> priced_phases_;  // its first op
  NetworkSlowdown gather_network_;
  NetworkSlowdown reduce_network_;
  NetworkSlowdown pp_network_;
  bool reductions_together_ = false;
};

}  // namespace myriad::sim
