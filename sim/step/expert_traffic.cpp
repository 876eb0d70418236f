// Expert-parallel layer traffic (layer_traffic.hpp): a layer's expert
// all-to-all between the actors of an expert-parallel group, in two hops:
//   expert.nvlink  the part inside the node, over NVLink, as the analytic
//                  engine prices it (the group's members on one actor);
//   expert.flows   the latency beyond a flow's own hop, then a flow to and from
//                  every other actor of the group at once (what leaves the node:
//                  the analytic engine's remote part, here sharing the node's
//                  NICs and the tree with everything else).
// They apply when an expert-parallel group's ranks fill whole actors of one node
// each (tp x cp no more than a node) and span more than one of them: its members
// (Megatron-LM's order, etp ranks innermost) span ep * etp / (tp * cp) replicas.
// The exchange is the replica mode's to play (replica_modes.hpp: real partners,
// a class's members as one flow, or ghosts). Under router skew the flows to a
// partner carry its share of what the busiest actor receives.
// An overlapped all-to-all runs beside the layer's compute (its latency and its
// NVLink part are inside the layer's time already): flows only. In an F&B
// pass's phase it is played whole, beside the phase's compute.
// A two-hop all-to-all (node-limited routing, comm_cost.hpp's two_hop_shares)
// is expert.flows' alone: its latency, a flow to every other actor of the
// network's share (one copy a node), and NVLink forwarding beside the flows:
// the longer of the two.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "models/plan/rank_layout.hpp"
#include "models/transformer/moe_routing.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/step/step_actors.hpp"

namespace myriad::sim {
namespace {

using step_detail::StepState;
namespace sg4 = simgrid::s4u;

// How expert-parallel groups sit on the actors of a stage.
struct ExpertLayout {
  int actors = 1;          // consecutive actors a group spans
  double members = 1;      // of one group on one actor (node)
  double flow_factor = 0;  // each actor sends every other one this times a collective's bytes
  int group_gpus = 1;      // GPUs one actor stands for
  // The share of an all-to-all's bytes a GPU sends over NVLink: to its node's
  // other members and, rail-only, what it forwards to another rail
  // (all_to_all_nvlink_share, as the analytic engine prices it).
  double a2a_nvlink_share = 0;
  // Router skew: each actor of a group's share of what it receives, relative to
  // the busiest one's (which the collective's bytes are priced at): all 1 when even.
  std::vector<double> receive_share;
};

std::optional<ExpertLayout> expert_layout(const StepLowering& p,
                                          const models::scenario::Scenario& s) {
  const auto& par = s.parallelism;
  const int gpn = s.cluster.gpus_per_node;
  const long long group_ranks = static_cast<long long>(par.ep) * (par.etp > 0 ? par.etp : par.tp);
  const long long block = static_cast<long long>(par.tp) * par.cp;
  const int replicas = group_ranks % block == 0 ? static_cast<int>(group_ranks / block) : 0;
  const bool fits = par.ep > 1 && par.tp * par.cp <= gpn && replicas > 0 &&
                    replicas % p.per_node == 0 && replicas / p.per_node >= 2 &&
                    p.dp % (replicas / p.per_node) == 0;
  if (!fits) return std::nullopt;
  ExpertLayout e;
  e.actors = replicas / p.per_node;
  e.members = static_cast<double>(par.ep) / e.actors;
  // Every GPU of the actor is in one group; each sends members / ep of its bytes
  // to each GPU of a partner actor's members.
  e.flow_factor = p.group_gpus * e.members / par.ep;
  e.group_gpus = p.group_gpus;
  models::GroupSpan span{par.ep, static_cast<int>(e.members), e.actors};
  span.rails_match = models::group_span(models::GroupKind::ep, s).rails_match;
  e.a2a_nvlink_share = all_to_all_nvlink_share(span, s.cluster);
  // Members in order over the actors, experts in order over the members.
  const models::MoeLoad& load = models::moe_load(s.model.moe, par.ep);
  const auto members = static_cast<std::size_t>(e.members);
  double busiest = 0;
  for (int a = 0; a < e.actors; ++a) {
    double received = 0;
    for (std::size_t m = 0; m < members; ++m) {
      received += load.rank_slots[static_cast<std::size_t>(a) * members + m];
    }
    e.receive_share.push_back(received);
    busiest = std::max(busiest, received);
  }
  for (double& share : e.receive_share) share = busiest > 0 ? share / busiest : 1;
  // Dispatched by all-gather, every rank sends each partner that partner's own
  // tokens (its compressed combine too, as an all-to-all): alike whatever the skew.
  const auto gathered = [](const std::vector<LayerCollective>& comms) {
    return std::any_of(comms.begin(), comms.end(), [](const LayerCollective& c) {
      return c.collective.name == "ep.dispatch" &&
             c.collective.kind == models::CollectiveKind::all_gather;
    });
  };
  if (gathered(p.program.costs.forward_comms) || gathered(p.program.costs.forward_beside)) {
    std::fill(e.receive_share.begin(), e.receive_share.end(), 1.0);
  }
  return e;
}

bool two_hop(const LayerCollective& c) {
  return c.collective.kind == models::CollectiveKind::all_to_all && c.collective.hop_nodes > 0;
}

// The group as the analytic engine spans it: ep ranks, `members` a node.
TwoHopShares shares_of(const ExpertLayout& e, const LayerCollective& c) {
  const auto members = static_cast<int>(e.members);
  return two_hop_shares(c.collective, {members * e.actors, members, e.actors});
}

// The part of an expert collective inside the node: its members on one actor
// exchange over NVLink (a two-hop one's forwarding is played beside its flows).
double nvlink_s(const ExpertLayout& e, const LayerCollective& c) {
  if (two_hop(c)) return 0;
  if (c.collective.kind == models::CollectiveKind::all_to_all) {
    return c.collective.bytes * e.a2a_nvlink_share / c.nvlink_Bps;
  }
  return c.collective.bytes * (e.members - 1) / (e.members * e.actors) / c.nvlink_Bps;
}

class ExpertNvlink final : public LayerTraffic {
 public:
  explicit ExpertNvlink(ExpertLayout e) : e_(std::move(e)) {}
  [[nodiscard]] std::string_view name() const override { return "expert.nvlink"; }
  [[nodiscard]] bool claims(const LayerCollective& c, bool beside) const override {
    return c.collective.group == models::GroupKind::ep && !beside;
  }
  [[nodiscard]] double played_s(const LayerCollective& c) const override { return nvlink_s(e_, c); }
  int add_hosts(StepState& /*p*/, const models::scenario::Scenario& /*s*/, int /*row*/,
                int /*stage*/) const override {
    return 0;
  }
  void play(StepState& /*p*/, int /*row*/, int /*stage*/, const LayerCollective& c,
            Played /*how*/) const override {
    const double t = nvlink_s(e_, c);
    if (t > 0) sg4::this_actor::sleep_for(t);
  }

 private:
  ExpertLayout e_;
};

class ExpertFlows final : public LayerTraffic {
 public:
  explicit ExpertFlows(ExpertLayout e) : e_(std::move(e)) {}
  [[nodiscard]] std::string_view name() const override { return "expert.flows"; }
  [[nodiscard]] bool claims(const LayerCollective& c, bool /*beside*/) const override {
    return c.collective.group == models::GroupKind::ep;
  }
  [[nodiscard]] double played_s(const LayerCollective& c) const override {
    return c.cost.time_s - nvlink_s(e_, c);
  }
  [[nodiscard]] int group_actors() const override { return e_.actors; }

  int add_hosts(StepState& p, const models::scenario::Scenario& s, int row,
                int stage) const override {
    return p.replicas->add_group_hosts(p, s, row, stage, exchange_of(0, false),
                                       step_detail::traffic_state(p, row, stage, *this));
  }

  void play(StepState& p, int row, int stage, const LayerCollective& e, Played how) const override {
    const models::Collective& c = e.collective;
    const double start = sg4::Engine::get_clock();
    if (how != Played::beside) {
      const double before = std::max(0.0, e.cost.latency_s - p.route_latency_s);
      if (before > 0) sg4::this_actor::sleep_for(before);
    }
    // An all-to-all: each GPU's bytes / ep to each partner GPU. An all-gather or
    // reduce-scatter dispatch (top_k large next to ep): flows sized to take the
    // analytic engine's remote part at the actor's NIC rate, alike for every partner.
    const bool pairwise = c.kind == models::CollectiveKind::all_to_all;
    double bytes = pairwise ? e_.flow_factor * c.bytes
                            : std::max(0.0, e.cost.bandwidth_s - nvlink_s(e_, e)) * p.actor_Bps /
                                  (e_.actors - 1);
    double forwarding_s = 0;  // a two-hop one's NVLink hop, beside its flows
    if (two_hop(e)) {
      const TwoHopShares shares = shares_of(e_, e);
      bytes = e_.group_gpus * c.bytes * shares.network / (e_.actors - 1);
      forwarding_s = c.bytes * shares.nvlink / e.nvlink_Bps;
    }
    const double flows_start = sg4::Engine::get_clock();
    p.replicas->group_exchange(p, row, stage, exchange_of(bytes, pairwise),
                               step_detail::traffic_state(p, row, stage, *this));
    const double rest = forwarding_s - (sg4::Engine::get_clock() - flows_start);
    if (rest > 0) sg4::this_actor::sleep_for(rest);
    if (how == Played::exposed) step_detail::trace_layer_collective(p, row, stage, c, start);
  }

 private:
  // The group's exchange: `bytes` to each partner, times its share under skew.
  [[nodiscard]] step_detail::GroupExchange exchange_of(double bytes, bool pairwise) const {
    return {"ep", e_.actors, bytes, pairwise ? &e_.receive_share : nullptr};
  }

  ExpertLayout e_;
};

}  // namespace

LayerTrafficPtr make_expert_nvlink(const StepLowering& p, const models::scenario::Scenario& s) {
  auto e = expert_layout(p, s);
  return e ? std::make_shared<const ExpertNvlink>(std::move(*e)) : nullptr;
}

LayerTrafficPtr make_expert_flows(const StepLowering& p, const models::scenario::Scenario& s) {
  auto e = expert_layout(p, s);
  return e ? std::make_shared<const ExpertFlows>(std::move(*e)) : nullptr;
}

}  // namespace myriad::sim
