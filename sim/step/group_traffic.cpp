// Layer traffic of rank groups that span nodes (layer_traffic.hpp): a tp or cp
// collective whose group spans nodes (a rank group of several nodes, e.g. cp 2 at
// tp 8) is played between the rank group's host and a ghost at its second node:
// its latency beyond a flow's own hop priced, then its bandwidth term as a flow out
// to and one in from the ghost, sized to take that term at the rank group's NIC
// rate (its ranks' ring edges leaving their nodes): without contention the
// analytic time, with it a share of the group's NICs beside pipeline and
// data-parallel traffic. Traffic between the group's own nodes is taken to stay
// under their leaf.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "models/plan/rank_layout.hpp"
#include "sim/step/step_actors.hpp"

namespace myriad::sim {
namespace {

using step_detail::StepState;
namespace sg4 = simgrid::s4u;

class GroupFlows final : public LayerTraffic {
 public:
  GroupFlows(bool tp_spans, bool cp_spans, double link_Bps)
      : tp_spans_(tp_spans), cp_spans_(cp_spans), link_Bps_(link_Bps) {}
  [[nodiscard]] std::string_view name() const override { return "group.flows"; }
  [[nodiscard]] bool claims(const LayerCollective& c, bool beside) const override {
    const models::GroupKind g = c.collective.group;
    return !beside &&
           ((g == models::GroupKind::tp && tp_spans_) || (g == models::GroupKind::cp && cp_spans_));
  }
  [[nodiscard]] double played_s(const LayerCollective& c) const override { return c.cost.time_s; }
  int add_hosts(StepState& p, const models::scenario::Scenario& s, int row,
                int stage) const override {
    const int replica = p.rows[static_cast<std::size_t>(row)];
    step_detail::traffic_state(p, row, stage, *this)
        .ghosts.push_back(p.platform->add_host(fmt::format("group-ghost-{}-{}", stage, replica),
                                               p.first_node(s, replica, stage) + 1, 1,
                                               p.weights[static_cast<std::size_t>(row)]));
    return 1;
  }
  void play(StepState& p, int row, int stage, const LayerCollective& c,
            Played /*how*/) const override {
    const double start = sg4::Engine::get_clock();
    const double before = std::max(0.0, c.cost.latency_s - p.route_latency_s);
    if (before > 0) sg4::this_actor::sleep_for(before);
    const auto& ghosts = step_detail::traffic_state(p, row, stage, *this).ghosts;
    const double bytes = c.cost.bandwidth_s * link_Bps_ * p.weights[static_cast<std::size_t>(row)];
    step_detail::exchange(p, p.actor(row, stage).host, step_detail::Peers{{}, nullptr, ghosts},
                          {static_cast<double>(static_cast<std::uint64_t>(bytes))},
                          static_cast<double>(static_cast<std::uint64_t>(bytes)));
    step_detail::trace_layer_collective(p, row, stage, c.collective, start);
  }

 private:
  bool tp_spans_;
  bool cp_spans_;
  double link_Bps_;  // the rank group's NICs
};

}  // namespace

LayerTrafficPtr make_group_flows(const StepLowering& p, const models::scenario::Scenario& s) {
  if (p.nodes_per_group <= 1) return nullptr;
  return std::make_shared<const GroupFlows>(
      models::group_span(models::GroupKind::tp, s).nodes > 1,
      models::group_span(models::GroupKind::cp, s).nodes > 1,
      p.node_Bps * std::max(1, p.group_gpus / s.cluster.gpus_per_node));
}

}  // namespace myriad::sim
