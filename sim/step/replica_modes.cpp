#include "sim/step/replica_modes.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/step/step_actors.hpp"

namespace myriad::sim::step_detail {
namespace {

double share_of(const GroupExchange& g, int member) {
  return g.receive_share == nullptr || g.receive_share->empty()
             ? 1.0
             : (*g.receive_share)[static_cast<std::size_t>(member)];
}

// The group holding replica `replica`: its first replica and this one's place in it.
std::pair<int, int> group_of(int replica, int actors) {
  const int first = replica / actors * actors;
  return {first, replica - first};
}

// Bytes to every other member of the group, in member order.
std::vector<double> out_bytes(const GroupExchange& g, int self) {
  std::vector<double> out;
  for (int k = 0; k < g.actors; ++k) {
    if (k != self) out.push_back(g.pair_bytes * share_of(g, k));
  }
  return out;
}

// Every replica a row: a ring edge to the next row's actor, each starting once
// both are in the phase (NCCL's kernels meet); a group's partners are rows too,
// reached through the mailboxes they read (alternating by the exchange's parity:
// a partner can be at most one ahead).
class EveryReplica : public ReplicaMode {
 public:
  [[nodiscard]] std::string_view name() const override { return "every replica"; }
  int add_ring_mirrors(StepState& /*p*/, const models::scenario::Scenario& /*s*/, int /*row*/,
                       int /*stage*/) const override {
    return 0;
  }
  void ring_phase(StepState& p, int row, int stage, double bytes) const override {
    ActorState& me = p.actor(row, stage);
    const int next = (row + 1) % static_cast<int>(p.rows.size());
    ActorState& to = p.actor(next, stage);
    me.ring_ready->release();  // the predecessor's edge to this one may start
    std::vector<sg4::CommPtr> flows;
    inside(p, row, stage, bytes, flows);
    to.ring_ready->acquire();
    flows.push_back(weighted_flow(p, me.ring_out, to.ring_out, bytes, 1));
    for (const auto& f : flows) {
      f->wait();
      ++p.flows;
    }
  }
  int add_group_hosts(StepState& /*p*/, const models::scenario::Scenario& /*s*/, int /*row*/,
                      int /*stage*/, const GroupExchange& /*g*/,
                      TrafficState& /*state*/) const override {
    return 0;
  }
  void group_exchange(StepState& p, int row, int stage, const GroupExchange& g,
                      TrafficState& state) const override {
    const int replica = p.rows[static_cast<std::size_t>(row)];
    const auto [first, self] = group_of(replica, g.actors);
    Peers peers;
    const int parity = state.played++ % 2;
    for (int partner = first; partner < first + g.actors; ++partner) {
      if (partner == replica) continue;
      const int partner_row = p.row_of[static_cast<std::size_t>(partner)];
      peers.real.emplace_back(
          p.actor(partner_row, stage).host,
          sg4::Mailbox::by_name(fmt::format("{}.{}.{}.{}", g.tag, partner, stage, parity)));
    }
    peers.inbox = sg4::Mailbox::by_name(fmt::format("{}.{}.{}.{}", g.tag, replica, stage, parity));
    exchange(p, p.actor(row, stage).host, peers, out_bytes(g, self),
             g.pair_bytes * share_of(g, self));
  }

 protected:
  // The ring edges inside the rank group's row (none: a row is one replica).
  virtual void inside(StepState& /*p*/, int /*row*/, int /*stage*/, double /*bytes*/,
                      std::vector<sg4::CommPtr>& /*flows*/) const {}
};

// A row per class: as every replica, and a class of several plays its members'
// ring edges among themselves as one flow of their weight from the class to
// itself (its edge to the next class of weight 1), and its members' exchanges in
// their groups (whole inside it: replica_classes) as one flow of that many pairs,
// each at the busiest receiver's size, as the analytic engine prices an all-to-all.
class ReplicaClasses final : public EveryReplica {
 public:
  [[nodiscard]] std::string_view name() const override { return "classes"; }
  void add_ring_ports(StepState& p, int row, int stage, const std::string& name) const override {
    const int weight = p.weights[static_cast<std::size_t>(row)];
    ActorState& a = p.actor(row, stage);
    if (weight == 1) {
      ReplicaMode::add_ring_ports(p, row, stage, name);
      return;
    }
    a.ring_out = p.platform->add_port(name + ".ring", a.host, 1);
    // Its own port, not ring_out's: a port's latency link bounds its flows together.
    a.ring_self = p.platform->add_port(name + ".class", a.host, weight - 1);
  }
  int add_group_hosts(StepState& p, const models::scenario::Scenario& /*s*/, int row, int stage,
                      const GroupExchange& g, TrafficState& state) const override {
    const int weight = p.weights[static_cast<std::size_t>(row)];
    if (weight > 1) {
      const ActorState& a = p.actor(row, stage);
      state.self_port =
          p.platform->add_port(fmt::format("{}.{}", p.platform->host(a.host)->get_name(), g.tag),
                               a.host, weight * (g.actors - 1));
    }
    return 0;
  }
  void group_exchange(StepState& p, int row, int stage, const GroupExchange& g,
                      TrafficState& state) const override {
    const int weight = p.weights[static_cast<std::size_t>(row)];
    if (weight == 1) {
      EveryReplica::group_exchange(p, row, stage, g, state);
      return;
    }
    weighted_flow(p, state.self_port, state.self_port, g.pair_bytes, weight * (g.actors - 1))
        ->wait();
    ++p.flows;
  }

 private:
  void inside(StepState& p, int row, int stage, double bytes,
              std::vector<sg4::CommPtr>& flows) const override {
    const int weight = p.weights[static_cast<std::size_t>(row)];
    const ActorState& me = p.actor(row, stage);
    if (weight > 1)
      flows.push_back(weighted_flow(p, me.ring_self, me.ring_self, bytes, weight - 1));
  }
};

// Replica 0 and the stragglers' replicas: a ghost host where the ring's next
// replica sits mirrors the neighbours (a flow out to it and an equal one back, at
// once), and a ghost per partner of a group where that partner sits (a flow out
// to each, and from each the bytes this rank group receives).
class SomeReplicas final : public ReplicaMode {
 public:
  [[nodiscard]] std::string_view name() const override { return "some replicas"; }
  int add_ring_mirrors(StepState& p, const models::scenario::Scenario& s, int row,
                       int stage) const override {
    const int replica = p.rows[static_cast<std::size_t>(row)];
    p.actor(row, stage).ghost = p.platform->add_host(fmt::format("ghost-{}-{}", stage, replica),
                                                     p.first_node(s, (replica + 1) % p.dp, stage));
    return 1;
  }
  void ring_phase(StepState& p, int row, int stage, double bytes) const override {
    const auto size = static_cast<double>(static_cast<uint64_t>(bytes));
    exchange(p, p.actor(row, stage).host, Peers{{}, nullptr, {p.actor(row, stage).ghost}}, {size},
             size);
  }
  int add_group_hosts(StepState& p, const models::scenario::Scenario& s, int row, int stage,
                      const GroupExchange& g, TrafficState& state) const override {
    const int replica = p.rows[static_cast<std::size_t>(row)];
    const int first = group_of(replica, g.actors).first;
    for (int partner = first; partner < first + g.actors; ++partner) {
      if (partner == replica) continue;
      state.ghosts.push_back(
          p.platform->add_host(fmt::format("{}-ghost-{}-{}-{}", g.tag, stage, replica, partner),
                               p.first_node(s, partner, stage)));
    }
    return static_cast<int>(state.ghosts.size());
  }
  void group_exchange(StepState& p, int row, int stage, const GroupExchange& g,
                      TrafficState& state) const override {
    const int self = group_of(p.rows[static_cast<std::size_t>(row)], g.actors).second;
    exchange(p, p.actor(row, stage).host, Peers{{}, nullptr, state.ghosts}, out_bytes(g, self),
             g.pair_bytes * share_of(g, self));
  }
};

}  // namespace

void ReplicaMode::add_ring_ports(StepState& p, int row, int stage,
                                 const std::string& /*name*/) const {
  ActorState& a = p.actor(row, stage);
  a.ring_out = a.host;
}

std::unique_ptr<const ReplicaMode> replica_mode(bool all_replicas, bool classes) {
  if (classes) return std::make_unique<const ReplicaClasses>();
  if (all_replicas) return std::make_unique<const EveryReplica>();
  return std::make_unique<const SomeReplicas>();
}

}  // namespace myriad::sim::step_detail
