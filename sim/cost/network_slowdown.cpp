#include "sim/cost/network_slowdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "models/plan/rank_layout.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/ecmp.hpp"

namespace myriad::sim {

namespace {

// Everything network_slowdown reads, for its memo: a layout search asks about the
// same placement for every micro-batch size, ZeRO stage and recomputation.
struct SlowdownKey {
  Traffic traffic = Traffic::pp;
  int tp = 0, cp = 0, pp = 0, dp = 0;
  models::scenario::RankOrder placement = models::scenario::RankOrder::tp_cp_dp_pp;
  int gpus = 0, gpus_per_node = 0, nics_per_node = 0;
  double nic_bw_Bps = 0;
  bool rail_optimized = false;
  int planes = 1;
  models::scenario::LoadBalancing balancing = models::scenario::LoadBalancing::adaptive;
  int qps = 1;
  models::scenario::EcmpHash hash = models::scenario::EcmpHash::per_switch;
  // radix, oversubscription, port bandwidth, up ports down
  std::array<std::array<double, 4>, 4> tiers{};
  std::size_t tier_count = 0;
  bool operator==(const SlowdownKey&) const = default;
};

NetworkSlowdown compute_slowdown(const models::scenario::Scenario& s, Traffic traffic);

}  // namespace

NetworkSlowdown network_slowdown(const models::scenario::Scenario& s, Traffic traffic) {
  const auto& tiers = s.cluster.network.tiers;
  if (tiers.size() > 4) return compute_slowdown(s, traffic);
  const auto& p = s.parallelism;
  SlowdownKey key{traffic,
                  p.tp,
                  p.cp,
                  p.pp,
                  p.dp,
                  p.placement,
                  s.cluster.gpus,
                  s.cluster.gpus_per_node,
                  s.cluster.nics_per_node,
                  s.cluster.nic_bw_Bps,
                  s.cluster.network.rail_optimized,
                  s.cluster.network.planes,
                  s.cluster.network.load_balancing,
                  s.cluster.network.qps_per_connection,
                  s.cluster.network.ecmp_hash};
  key.tier_count = tiers.size();
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    key.tiers[i] = {static_cast<double>(tiers[i].radix), tiers[i].oversubscription,
                    tiers[i].port_bw_Bps, static_cast<double>(tiers[i].uplinks_down)};
  }
  // A pure function of the key, remembered per thread (the last few asked).
  constexpr std::size_t kMemo = 32;
  thread_local std::vector<std::pair<SlowdownKey, NetworkSlowdown>> memo;
  for (const auto& [k, v] : memo) {
    if (k == key) return v;
  }
  const NetworkSlowdown out = compute_slowdown(s, traffic);
  if (memo.size() == kMemo) memo.erase(memo.begin());
  memo.emplace_back(key, out);
  return out;
}

namespace {

// A tier's up ports as ECMP sees them: a subtree's, each switch's (each hashes
// its own flows onto its own up ports), and the share of a port a flow alone
// would use (its NIC's connections share the NIC, each split over its queue
// pairs: qps_per_connection on every port of the NIC, one port a plane, as NCCL
// lays them out, alternating the ports of a merged NIC, "at least 1 qp
// per-device": NVIDIA/nccl src/transport/net_ib/connect.cc, localNqps =
// NCCL_IB_QPS_PER_CONNECTION x ndevs; so each plane carries an even share of
// every connection, and its switches hash that plane's queue pairs); the flows
// leaving the subtrees that send at once, by switch.
class TierHashing {
 public:
  TierHashing(const models::scenario::Scenario& s, std::size_t tier, double nodes, double uplinks) {
    const auto& c = s.cluster;
    flows_per_nic_ =
        models::scenario::kConnectionsPerNic * c.network.qps_per_connection * c.network.planes;
    const double port_Bps = c.network.tiers[tier].port_bw_Bps;
    nics_ = nodes * c.nics_per_node;
    ports_ = std::max(1.0, std::round(nics_ * c.nic_bw_Bps * uplinks / port_Bps));
    switch_ports_ = std::max(1.0, std::min(ports_, models::scenario::up_ports(c.network, tier)));
    switches_ = std::max(1.0, std::round(ports_ / switch_ports_));
    // Polarization: where every switch hashes alike (and picks a port by the hash
    // modulo its up ports), a switch above the first tier receives, from each
    // switch below, only the flows whose hash picked the port to it, h = j mod
    // U_below; of its own U ports, h mod U reaches U / gcd(U, U_below) (Cisco's
    // "CEF polarization"; inferred for modulo selection: docs/notes/ecmp.md).
    if (tier > 0 && c.network.ecmp_hash == models::scenario::EcmpHash::shared) {
      const auto below = static_cast<long>(
          std::max(1.0, std::round(models::scenario::up_ports(c.network, tier - 1))));
      const auto own = static_cast<long>(switch_ports_);
      const long reachable = own / std::gcd(own, below);
      hashed_ports_ = static_cast<double>(reachable);
    } else {
      hashed_ports_ = switch_ports_;
    }
    demand_ = std::min(c.nic_bw_Bps / flows_per_nic_, models::scenario::nic_port_bw(c)) / port_Bps;
  }

  // A subtree of which `share` of the NIC bandwidth leaves.
  void add(double share) {
    const double flows = std::round(share * nics_ * flows_per_nic_ / switches_);
    auto same = std::find_if(groups_.begin(), groups_.end(),
                             [&](const HashedPorts& g) { return g.flows == flows; });
    if (same == groups_.end()) {
      groups_.push_back({flows, hashed_ports_, switches_});
    } else {
      same->count += switches_;
    }
  }

  // `worst` (the busiest subtree, balanced) as the hash makes it; the subtrees
  // added so far are then forgotten.
  NetworkSlowdown hashed(NetworkSlowdown worst) {
    const EcmpSlowdown e = ecmp_slowdown(groups_, demand_);
    groups_.clear();
    worst.hashed = true;
    worst.balanced = std::max(1.0, worst.factor);
    worst.factor = e.expected;
    worst.low = e.low;
    worst.high = e.high;
    worst.flows_per_port = worst.leaving * nics_ * flows_per_nic_ / ports_;
    return worst;
  }

 private:
  double flows_per_nic_ = 1;
  double nics_ = 0;
  double ports_ = 1;
  double switch_ports_ = 1;
  double hashed_ports_ = 1;  // of a switch's up ports, those its flows can reach
  double switches_ = 1;
  double demand_ = 1;
  std::vector<HashedPorts> groups_;
};

NetworkSlowdown compute_slowdown(const models::scenario::Scenario& s, Traffic traffic) {
  NetworkSlowdown out;
  const auto& p = s.parallelism;
  const bool pipeline = traffic == Traffic::pp;
  // No tier below the one that joins the job hands its uplinks less than its NICs
  // carry: nothing can bind (but hashed flows can collide on any tier).
  const bool hashed = s.cluster.network.load_balancing == models::scenario::LoadBalancing::ecmp;
  if (!hashed && !oversubscribed_below_join(s.cluster)) return out;
  const auto& tiers = s.cluster.network.tiers;
  const int gpn = s.cluster.gpus_per_node;
  const int group_gpus = p.tp * p.cp;
  // A rank group's share of a node's NICs (several groups a node, or several nodes a group).
  const double weight = static_cast<double>(group_gpus) / gpn;
  const std::vector<double> under = subtree_nodes(s.cluster);
  double uplinks = 1;  // a subtree's uplink bandwidth over its NICs', through the tiers below
  for (std::size_t tier = 0; tier + 1 < tiers.size(); ++tier) {
    uplinks *= models::scenario::uplinks_in_service(s.cluster.network, tier) /
               tiers[tier].oversubscription;
    const double nodes = std::max(1.0, std::floor(under[tier]));
    // By subtree; for gradient reductions and pipeline transfers also by stage:
    // the stages reduce their gradients at different times (the last stage
    // first), and a stage's transfers go out a forward pass after the previous
    // stage's, so only one stage's send at once; every stage gathers its
    // parameters at the start of the step. A stage's replicas send at once only
    // while they keep step: those whose transfers (forward or backward) leave a
    // subtree wait longer than those whose stay, and the two drift apart within a
    // few micro-batches; each kind sends at once with its own.
    // Bandwidth leaving each subtree (by index and kind), counted over one stage or all.
    constexpr std::size_t kKinds = 4;  // a pipeline replica's: forward leaves, backward leaves
    const auto trees = static_cast<std::size_t>(s.cluster.nodes() / nodes) + 2;
    std::vector<double> leaving(trees * kKinds, 0.0);
    std::vector<std::size_t> touched;
    TierHashing hashing(s, tier, nodes, uplinks);
    const auto settle = [&] {
      NetworkSlowdown worst;  // the busiest subtree's, balanced
      worst.factor = 0;
      for (const std::size_t slot : touched) {
        if (leaving[slot] == 0) continue;
        const double share = std::min(1.0, leaving[slot] / nodes);
        const double factor = share / uplinks;
        if (factor > worst.factor) worst = {factor, static_cast<int>(tier), share, uplinks};
        leaving[slot] = 0;
        if (hashed) hashing.add(share);
      }
      touched.clear();
      if (worst.tier < 0) return;
      if (hashed) worst = hashing.hashed(worst);
      if (worst.factor > out.factor) out = worst;
    };
    const auto tree_of = [&](models::RankGroup g) {
      return static_cast<std::size_t>(models::first_node(s, g) / nodes);
    };
    const auto leave = [&](std::size_t from_tree, std::size_t kind) {
      const std::size_t slot = from_tree * kKinds + kind;
      if (leaving[slot] == 0) touched.push_back(slot);
      leaving[slot] += weight;
    };
    for (int stage = 0; stage < p.pp; ++stage) {
      if (pipeline) {
        for (const int direction : {1, -1}) {
          if (stage + direction < 0 || stage + direction >= p.pp) continue;
          for (int replica = 0; replica < p.dp; ++replica) {
            const std::size_t from = tree_of({stage, replica});
            const bool forward = stage + 1 < p.pp && tree_of({stage + 1, replica}) != from;
            const bool backward = stage > 0 && tree_of({stage - 1, replica}) != from;
            if (direction == 1 ? forward : backward) {
              leave(from, (forward ? 1 : 0) + (backward ? 2 : 0));
            }
          }
          settle();
        }
        continue;
      }
      for (int replica = 0; replica < p.dp; ++replica) {
        const std::size_t from = tree_of({stage, replica});
        if (tree_of({stage, (replica + 1) % p.dp}) != from) leave(from, 0);
      }
      if (traffic != Traffic::dp_gather) settle();
    }
    settle();
  }
  return out;
}

}  // namespace

bool oversubscribed_below_join(const models::scenario::ClusterSpec& c) {
  const int top = joining_tier(c, c.nodes());
  for (int i = 0; i < top && i < static_cast<int>(c.network.tiers.size()); ++i) {
    const auto tier = static_cast<std::size_t>(i);
    if (c.network.tiers[tier].oversubscription > 1 ||
        models::scenario::uplinks_in_service(c.network, tier) < 1) {
      return true;
    }
  }
  return false;
}

std::string describe(const NetworkSlowdown& n, const models::scenario::Scenario& s,
                     Traffic traffic) {
  if (n.tier < 0) return "";
  const auto& tier = s.cluster.network.tiers[static_cast<std::size_t>(n.tier)];
  const std::string leaves =
      fmt::format("{}: {:.0f} % of a {} subtree's NIC bandwidth leaves it at once",
                  traffic == Traffic::pp          ? "pipeline transfers"
                  : traffic == Traffic::dp_gather ? "data-parallel parameter gathers"
                                                  : "data-parallel gradient reductions",
                  100 * n.leaving, tier.name.empty() ? fmt::format("tier-{}", n.tier) : tier.name);
  if (n.hashed) {
    return fmt::format(
        "{}, {:.3g} flows an up port on average, hashed by ECMP: the busiest port makes them "
        "{:.2f}x slower than the NICs (expected over hashes; 10-90 % of hashes {:.2f}-{:.2f}x; "
        "{:.2f}x balanced)",
        leaves, n.flows_per_port, n.factor, n.low, n.high, n.balanced);
  }
  return fmt::format("{}, through uplinks of 1/{:.3g} of it: {:.2f}x slower than the NICs", leaves,
                     1 / n.uplinks, n.factor);
}

}  // namespace myriad::sim
