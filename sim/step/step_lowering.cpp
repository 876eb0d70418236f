#include "sim/step/step_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "models/plan/rank_layout.hpp"
#include "models/plan/step_plan.hpp"
#include "sim/cost/network_slowdown.hpp"

namespace myriad::sim {
namespace {

// How a data-parallel collective is played (DpPhase).
DpPhase lower_dp_collective(const StepLowering& p, const models::scenario::Scenario& s,
                            const DeviceProfile& profile, const models::Collective& c,
                            const CommCost& cost) {
  const models::GroupSpan span = models::group_span(models::GroupKind::dp, s);
  DpPhase d;
  d.algorithm = cost.algorithm;
  if (p.dp == 1 || c.group != models::GroupKind::dp) {
    d.whole = true;
    d.whole_s = cost.time_s;
  } else if (cost.algorithm == models::CollectiveAlgorithm::hierarchical ||
             cost.algorithm == models::CollectiveAlgorithm::sharp) {
    const bool sharp = cost.algorithm == models::CollectiveAlgorithm::sharp;
    const models::GroupSpan node{span.per_node, span.per_node, 1};
    models::Collective local = c;
    local.kind = models::CollectiveKind::reduce_scatter;
    d.before = collective_cost(local, node, s.cluster, profile);
    if (c.kind == models::CollectiveKind::all_reduce) {
      local.kind = models::CollectiveKind::all_gather;
      d.after = collective_cost(local, node, s.cluster, profile);
    }
    if (sharp) {
      // Each node's part up the aggregation tree once (and an all-reduce's back
      // once): a ring edge's flow of the part carries what each NIC sends and
      // receives; the trip up and down the tree is the route's latency.
      d.edge_factor = 1;
      d.extra_latency_s = std::max(0.0, hop_latency(s.cluster, span.nodes) - p.route_latency_s);
    } else {
      models::Collective shard = c;
      shard.bytes = c.bytes / span.per_node;
      const CommCost across =
          collective_cost(shard, {span.nodes, 1, span.nodes}, s.cluster, profile);
      d.edge_factor = busbw_factor(c.kind, span.nodes);
      d.extra_latency_s = std::max(0.0, across.latency_s - p.route_latency_s);
    }
  } else {  // ring or tree
    d.edge_factor = busbw_factor(c.kind, p.dp_ranks);
    d.extra_latency_s = std::max(0.0, cost.latency_s - p.route_latency_s);
  }
  return d;
}

// Which kinds of layer traffic (layer_traffic.hpp) play each of the layer's tp,
// cp and ep collectives as flows; what they play leaves the layer's local time.
// Only the kinds that play something are kept: their hosts, their coupling.
void plan_layer_flows(StepLowering& p, const models::scenario::Scenario& s) {
  p.actor_Bps = p.node_Bps * p.group_gpus / s.cluster.gpus_per_node;
  p.layer_local = p.program.costs.layer;
  const std::vector<LayerTrafficPtr> kinds = layer_traffic(p, s);
  std::vector<int> kept(kinds.size(), -1);
  const auto claim = [&](const std::vector<LayerCollective>& comms, bool beside, double* local) {
    std::vector<std::vector<int>> out;
    for (const auto& c : comms) {
      std::vector<int> by;
      for (std::size_t k = 0; k < kinds.size(); ++k) {
        if (!kinds[k]->claims(c, beside)) continue;
        if (kept[k] < 0) {
          kept[k] = static_cast<int>(p.traffic.size());
          p.traffic.push_back(kinds[k]);
        }
        by.push_back(kept[k]);
        if (local != nullptr) *local -= kinds[k]->played_s(c);
      }
      out.push_back(std::move(by));
    }
    return out;
  };
  p.forward_play = claim(p.program.costs.forward_comms, false, &p.layer_local.forward);
  p.backward_play = claim(p.program.costs.backward_comms, false, &p.layer_local.backward);
  p.forward_beside_play = claim(p.program.costs.forward_beside, true, nullptr);
  p.backward_beside_play = claim(p.program.costs.backward_beside, true, nullptr);
  if (models::pairs_passes(p.program.schedule)) {
    // Whether exposed or overlapped elsewhere, an F&B pass plays its all-to-alls
    // whole, beside its compute.
    const StageCosts& c = p.program.costs;
    for (const bool forward : {true, false}) {
      for (const auto* comms : forward ? std::array{&c.forward_comms, &c.forward_beside}
                                       : std::array{&c.backward_comms, &c.backward_beside}) {
        for (const LayerCollective& a2a : *comms) {
          if (a2a.collective.group != models::GroupKind::ep) continue;
          const PairA2a part =
              forward ? (a2a.first_ep ? PairA2a::forward_first : PairA2a::forward_rest)
                      : (a2a.first_ep ? PairA2a::backward_first : PairA2a::backward_rest);
          std::vector<int> plays = claim({a2a}, false, nullptr).front();
          p.pair_flows = p.pair_flows || !plays.empty();
          p.pair_a2a.push_back({a2a, part, std::move(plays)});
        }
      }
    }
  }
  p.layer_flows = !p.traffic.empty();
}

// The replicas to simulate: every one when asked; else replica 0 and each
// replica holding a straggler, whose ring neighbours ghosts mirror. In one
// data-parallel phase per collective a replica's ring flows start when it
// arrives and its neighbours' data is already under way, so each simulated
// replica lives its own step, and the slowest sets the step. (Traffic that can
// contend takes replica_classes instead.)
std::vector<int> replicas_to_simulate(const StepLowering& p, const models::scenario::Scenario& s,
                                      const std::vector<Straggler>& stragglers) {
  std::vector<int> rows;
  if (p.all_replicas) {
    for (int r = 0; r < p.dp; ++r) rows.push_back(r);
    return rows;
  }
  rows.push_back(0);
  for (const auto& g : stragglers) {
    const int replica = models::group_on_node(s, g.node).replica / p.per_node;
    if (std::find(rows.begin(), rows.end(), replica) == rows.end()) rows.push_back(replica);
  }
  std::sort(rows.begin() + 1, rows.end());
  return rows;
}

}  // namespace

std::vector<ReplicaClass> replica_classes(const StepLowering& p,
                                          const models::scenario::Scenario& s,
                                          const std::vector<Straggler>& stragglers) {
  const std::vector<double> under = subtree_nodes(s.cluster);
  const std::vector<bool> bind = uplinks_bind(s.cluster);
  // Whether two actors of a stage sit under different subtrees of a tier below
  // the top whose uplinks can bind (the others change no rate: the weighted
  // platform has no zones for them).
  const auto apart = [&](int stage, int a, int b) {
    const int na = p.first_node(s, a, stage);
    const int nb = p.first_node(s, b, stage);
    for (std::size_t t = 0; t + 1 < under.size(); ++t) {
      if (bind[t] && std::floor(na / under[t]) != std::floor(nb / under[t])) return true;
    }
    return false;
  };
  std::vector<bool> starts(static_cast<std::size_t>(p.dp) + 1, false);
  const auto single = [&](int r) {
    r = (r % p.dp + p.dp) % p.dp;
    starts[static_cast<std::size_t>(r)] = true;
    starts[static_cast<std::size_t>(r) + 1] = true;
  };
  starts[0] = true;
  for (int stage = 0; stage < p.pp; ++stage) {
    for (int r = 0; r < p.dp; ++r) {
      const int next = (r + 1) % p.dp;
      if (!apart(stage, r, next)) continue;
      // A ring edge leaving the subtree: both ends differ from their neighbours.
      single(r);
      single(next);
    }
  }
  for (const auto& g : stragglers) {
    const int replica = models::group_on_node(s, g.node).replica / p.per_node;
    for (int r = replica - 1; r <= replica + 1; ++r) single(r);
  }
  // Expert all-to-alls run inside groups of consecutive replicas: a class holds
  // whole groups (their all-to-alls one flow from the class to itself), and a
  // group a boundary would cut has every member alone (real flows between them).
  if (p.group_actors() > 1) {
    const int a = p.group_actors();
    for (int g = 0; g < p.dp; g += a) {
      bool cut = false;
      for (int r = g + 1; r < g + a; ++r) cut = cut || starts[static_cast<std::size_t>(r)];
      if (!cut) continue;
      for (int r = g; r < g + a; ++r) single(r);
    }
  }
  std::vector<ReplicaClass> classes;
  for (int r = 0; r < p.dp; ++r) {
    if (starts[static_cast<std::size_t>(r)]) {
      classes.push_back({r, 0});
    }
    ++classes.back().size;
  }
  return classes;
}

namespace {

// What the step engine cannot play yet, said before anything is built.
void check_playable(const models::scenario::Scenario& s) {
  if (s.cluster.network.load_balancing == models::scenario::LoadBalancing::ecmp) {
    throw std::invalid_argument(
        "the step engine plays each subtree's up ports as one link that flows share evenly, so "
        "it cannot show ECMP's hash collisions (cluster.network.load_balancing: ecmp); use "
        "`myriad estimate`, which prices their expectation and spread, or load_balancing: "
        "adaptive");
  }
  const int group_gpus = s.parallelism.tp * s.parallelism.cp;
  const int gpn = s.cluster.gpus_per_node;
  if (group_gpus >= gpn ? group_gpus % gpn != 0 : gpn % group_gpus != 0) {
    throw std::invalid_argument(fmt::format(
        "the step engine needs each rank group (tp x cp = {}) to fill whole nodes of {} GPUs or "
        "to divide a node; use `myriad estimate` for this scenario",
        group_gpus, gpn));
  }
  if (group_gpus < gpn && s.parallelism.pp > 1 &&
      s.parallelism.placement == models::scenario::RankOrder::tp_cp_pp_dp) {
    throw std::invalid_argument(fmt::format(
        "the step engine plays the {} rank groups (tp x cp = {}) of a node as replicas of one "
        "stage, but parallelism.placement tp-cp-pp-dp puts a replica's stages there; use "
        "tp-cp-dp-pp, or `myriad estimate` for this scenario",
        gpn / group_gpus, group_gpus));
  }
  if (group_gpus < gpn && s.parallelism.dp % (gpn / group_gpus) != 0) {
    throw std::invalid_argument(fmt::format(
        "the step engine plays the {} rank groups (tp x cp = {}) of a node as replicas of one "
        "stage: dp ({}) must be a multiple of {}; use `myriad estimate` for this scenario",
        gpn / group_gpus, group_gpus, s.parallelism.dp, gpn / group_gpus));
  }
}

}  // namespace

int StepLowering::group_actors() const {
  int widest = 1;
  for (const auto& t : traffic) widest = std::max(widest, t->group_actors());
  return widest;
}

std::string StepLowering::kinds(const std::vector<int>& plays) const {
  std::string out;
  for (const int k : plays) {
    if (!out.empty()) out += '+';
    out += traffic[static_cast<std::size_t>(k)]->name();
  }
  return out.empty() ? "inside" : out;
}

int StepLowering::first_node(const models::scenario::Scenario& s, int actor, int stage) const {
  return models::first_node(s, {stage, actor * per_node});
}

namespace {

// Which replicas are played, and why, for a step too large to play.
std::string played_replicas(const StepLowering& p, const models::scenario::Scenario& s,
                            bool asked) {
  if (asked) return "it plays every replica, as --all-replicas asks";
  const char* alone =
      "ring edges that leave a subtree, and stragglers with their ring neighbours, stand alone";
  if (p.classes) {
    return fmt::format(
        "it plays {} classes of the {} replicas, as traffic contends on the oversubscribed tiers "
        "and {}",
        p.rows.size(), p.dp, alone);
  }
  if (p.all_replicas && oversubscribed_below_join(s.cluster)) {
    return fmt::format(
        "it plays every replica, as traffic contends on the oversubscribed tiers and no two "
        "replicas share them alike: {}",
        alone);
  }
  if (p.all_replicas) {
    return "it plays every replica, as expert all-to-alls couple a group's replicas and there "
           "are stragglers";
  }
  return fmt::format("it plays replica 0 and the {} holding stragglers", p.rows.size() - 1);
}

void check_size(const StepLowering& p, const models::scenario::Scenario& s, bool asked) {
  const double groups = static_cast<double>(p.rows.size()) * p.pp;
  if (groups <= kMaxStepRankGroups) return;
  throw std::invalid_argument(fmt::format(
      "the step engine would play {:.0f} rank groups ({} rows x {} stages), past its bound of {}: "
      "{}. At about {:.1f} MB a rank group it would need about {:.1f} GB "
      "(sim/step/step_lowering.hpp); use `myriad estimate`, or fewer GPUs, stragglers or "
      "oversubscription",
      groups, p.rows.size(), p.pp, kMaxStepRankGroups, played_replicas(p, s, asked),
      kStepBytesPerRankGroup / 1e6, groups * kStepBytesPerRankGroup / 1e9));
}

}  // namespace

StepLowering lower_step(const models::scenario::Scenario& s, const DeviceProfile& profile,
                        std::vector<Straggler> stragglers, bool all_replicas,
                        const StepProgram* workload) {
  check_playable(s);
  const auto& par = s.parallelism;
  StepLowering p;
  p.pp = par.pp;
  const int group = par.tp * par.cp;
  const int gpn = s.cluster.gpus_per_node;
  p.per_node = group < gpn ? gpn / group : 1;
  p.dp_ranks = par.dp;
  p.dp = par.dp / p.per_node;
  p.program = build_step_program(s, stage_costs(s, profile), profile.overlap_compute_share());
  const StageCosts& costs = p.program.costs;
  p.group_gpus = group * p.per_node;
  p.nodes_per_group = p.group_gpus / gpn;
  p.dp_rings = group;
  p.pp_bytes_per_node = costs.pp_bytes_per_gpu * p.group_gpus;
  p.route_latency_s = hop_latency(s.cluster, s.cluster.nodes());
  p.node_Bps = s.cluster.nics_per_node * models::scenario::nic_bw_in_service(s.cluster) *
               profile.nic_efficiency;
  for (std::size_t i = 0; i < costs.dp_comms.size(); ++i) {
    p.dp_phases.push_back(lower_dp_collective(p, s, profile, costs.dp_comms[i], costs.dp_costs[i]));
  }
  plan_layer_flows(p, s);
  if (workload != nullptr) {
    if (workload->pp != p.pp) {
      throw std::invalid_argument(fmt::format(
          "the workload has {} stage{} (trace files), the scenario's pipeline {} (parallelism.pp)",
          workload->pp, workload->pp == 1 ? "" : "s", p.pp));
    }
    // Played instead of the scenario's program: its tasks, collectives and sends;
    // the layer traffic and data-parallel phases above are the scenario's, unused.
    p.program = *workload;
    p.program.overlap_share = profile.overlap_compute_share();
    for (const ProgramCollective& c : p.program.collectives) {
      p.workload_phases.push_back(lower_dp_collective(p, s, profile, c.collective, c.cost));
    }
  }
  // Expert all-to-alls couple the replicas of a group layer by layer, so a slow
  // node slows its partners as it goes: with stragglers, simulate them all.
  const bool coupled = p.group_actors() > 1 && !stragglers.empty();
  const bool contended = oversubscribed_below_join(s.cluster);
  p.all_replicas = all_replicas || p.dp == 1 || contended || coupled;
  // Contention couples every replica through the shared uplinks, but replicas
  // under the same subtrees at every stage share them alike: one per class,
  // its traffic weighted (expert groups whole inside a class, or every member
  // alone: replica_classes).
  p.classes = !all_replicas && p.dp > 1 && contended;
  if (p.classes) {
    for (const ReplicaClass& c : replica_classes(p, s, stragglers)) {
      p.rows.push_back(c.first);
      p.weights.push_back(c.size);
    }
  }
  // Every replica alone (each one's ring edge leaves its subtree): played as
  // every replica, on the plain platform (no latency links to pay for).
  if (p.classes && static_cast<int>(p.rows.size()) == p.dp) p.classes = false;
  if (p.rows.empty()) p.rows = replicas_to_simulate(p, s, stragglers);
  check_size(p, s, all_replicas);
  p.weights.resize(p.rows.size(), 1);
  if (p.all_replicas || p.classes) {
    p.row_of.assign(static_cast<std::size_t>(p.dp), -1);
    for (std::size_t row = 0; row < p.rows.size(); ++row) {
      p.row_of[static_cast<std::size_t>(p.rows[row])] = static_cast<int>(row);
    }
  }
  for (const int actor : p.rows) {
    for (int stage = 0; stage < p.pp; ++stage) {
      ActorPlace place;
      place.node = p.first_node(s, actor, stage);
      for (const auto& g : stragglers) {
        if (g.node < place.node || g.node >= place.node + p.nodes_per_group) continue;
        double& factor =
            g.component == models::scenario::Component::link ? place.link : place.slowdown;
        factor = std::max(factor, g.slowdown);
      }
      p.places.push_back(place);
    }
  }
  p.stragglers = std::move(stragglers);
  return p;
}

}  // namespace myriad::sim
