#include "sim/cost/comm_cost.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::sim {
using models::CollectiveAlgorithm;
using models::CollectiveKind;

double hop_latency(const models::scenario::ClusterSpec& c, int nodes) {
  const int tier = joining_tier(c, nodes);
  double latency = c.nic_latency_s;
  for (int i = 0; i <= tier && i < static_cast<int>(c.network.tiers.size()); ++i) {
    latency += 2 * c.network.tiers[i].latency_s;  // up and down
  }
  return latency;
}

namespace {

double largest_oversubscription_below(const models::scenario::ClusterSpec& c, int tier) {
  double o = 1;
  for (int i = 0; i < tier && i < static_cast<int>(c.network.tiers.size()); ++i) {
    const auto t = static_cast<std::size_t>(i);
    o = std::max(o, c.network.tiers[t].oversubscription /
                        models::scenario::uplinks_in_service(c.network, t));
  }
  return o;
}

// The NICs one group's `per_node` members of a node have: every group in the node
// (gpus_per_node / per_node of them: the other tp or cp ranks' replicas) sends at
// once, so they share the node's NICs in proportion: more than one a member where
// the node has more NICs than GPUs (AWS P5: 32 EFA interfaces of 100 Gb/s for 8
// H100, striped by its NCCL plugin), as the step engine's node links carry them.
double nics_for_group(const models::scenario::ClusterSpec& cluster, double per_node) {
  return static_cast<double>(cluster.nics_per_node) * per_node /
         std::max(per_node, static_cast<double>(cluster.gpus_per_node));
}

CommCost intra_node(const models::Collective& c, double n,
                    const models::scenario::ClusterSpec& cluster, const DeviceProfile& p) {
  CommCost r;
  r.busbw_Bps = nvlink_busbw(p, c.kind, c.bytes);
  r.latency_s = ring_steps(c.kind, n) * cluster.nvlink_latency_s;
  r.bandwidth_s = busbw_factor(c.kind, n) * c.bytes / r.busbw_Bps;
  r.algorithm = c.kind == CollectiveKind::all_to_all ? CollectiveAlgorithm::pairwise
                                                     : CollectiveAlgorithm::ring;
  if (c.kind == CollectiveKind::all_reduce && p.all_reduce_nvls())
    r.algorithm = CollectiveAlgorithm::nvls;
  if (c.kind == CollectiveKind::send_recv) r.algorithm = CollectiveAlgorithm::p2p;
  return r;
}

// `in_network`: whether an all-reduce or reduce-scatter may run in the switches
// where the network has them (not the shards of a hierarchical all-reduce: that
// is in_switches' own all-reduce).
CommCost inter_node(const models::Collective& c, const models::GroupSpan& g,
                    const models::scenario::ClusterSpec& cluster, const DeviceProfile& p,
                    double slowdown, bool in_network = true);

// `across`, an algorithm run across nodes on each GPU's 1/per_node part, after a
// reduce-scatter over NVLink inside each node and, for an all-reduce, before an
// all-gather there: the phases one after another.
CommCost around_the_node(const models::Collective& c, const models::GroupSpan& g,
                         const models::scenario::ClusterSpec& cluster, const DeviceProfile& p,
                         const CommCost& across, CollectiveAlgorithm algorithm) {
  models::Collective local = c;
  local.kind = CollectiveKind::reduce_scatter;
  const CommCost rs = g.per_node > 1 ? intra_node(local, g.per_node, cluster, p) : CommCost{};
  CommCost ag;
  if (c.kind == CollectiveKind::all_reduce && g.per_node > 1) {
    local.kind = CollectiveKind::all_gather;
    ag = intra_node(local, g.per_node, cluster, p);
  }
  CommCost r;
  r.inter_node = true;
  r.algorithm = algorithm;
  r.latency_s = rs.latency_s + across.latency_s + ag.latency_s;
  r.time_s = rs.latency_s + rs.bandwidth_s + across.time_s + ag.latency_s + ag.bandwidth_s;
  r.bandwidth_s = r.time_s - r.latency_s;
  r.busbw_Bps = busbw_factor(c.kind, g.size) * c.bytes / r.bandwidth_s;
  return r;
}

// Hierarchical all-reduce: reduce-scatter inside each node, all-reduce of each
// shard across nodes (one rank per node and shard, each on its own NIC), all-gather
// inside the node.
CommCost hierarchical_all_reduce(const models::Collective& c, const models::GroupSpan& g,
                                 const models::scenario::ClusterSpec& cluster,
                                 const DeviceProfile& p, double slowdown) {
  models::Collective shard = c;
  shard.bytes = c.bytes / g.per_node;
  // Every GPU of the node sends a shard at once: each on its share of the NICs.
  const CommCost across = inter_node(shard, {g.nodes, 1, g.nodes}, cluster, p, slowdown, false);
  return around_the_node(c, g, cluster, p, across, CollectiveAlgorithm::hierarchical);
}

// In-network reduction (InfiniBand SHARP through NCCL's CollNet), around the
// node as the hierarchical all-reduce: each GPU sends its 1/per_node part up the
// switches' aggregation tree once, on its share of the node's NICs, and an
// all-reduce's comes back reduced once, the two directions at once (NVIDIA SHARP
// and NCCL docs: "each node only needs to send its data once"). A
// reduce-scatter's part goes up whole and 1/nodes of it comes back: as many bytes
// as a ring sends (n-1)/n of, but one trip up and down the tree (hop_latency)
// instead of n-1 ring steps.
CommCost in_switches(const models::Collective& c, const models::GroupSpan& g,
                     const models::scenario::ClusterSpec& cluster, const DeviceProfile& p,
                     double slowdown) {
  const double nic_Bps =
      nics_for_group(cluster, 1) * nic_bw_in_service(cluster) * p.nic_efficiency / slowdown;
  CommCost across;
  across.latency_s = hop_latency(cluster, g.reach_nodes());
  across.time_s = across.latency_s + c.bytes / g.per_node / nic_Bps;
  return around_the_node(c, g, cluster, p, across, CollectiveAlgorithm::sharp);
}

CommCost inter_node(const models::Collective& c, const models::GroupSpan& g,
                    const models::scenario::ClusterSpec& cluster, const DeviceProfile& p,
                    double slowdown, bool in_network) {
  const double n = g.size;
  const double nic_Bps = nic_bw_in_service(cluster) * p.nic_efficiency / slowdown;
  const double nics = nics_for_group(cluster, g.per_node);
  // A ring or all-to-all across nodes runs rings inside them too.
  const double nvlink = interpolate_busbw(p.nvlink_ring_busbw, c.bytes);
  // A ring, a tree or an all-to-all waits for its farthest pair: the tier joining
  // the group's first and last node (reach), above the one its node count would
  // fill where its nodes are strided (dp outermost across pods or buildings). A
  // transfer between pipeline stages crosses the tier joining the two farthest
  // neighbouring stages.
  // On a rail-only fabric a ring whose nodes hold its members on different rails
  // enters each node on another rail: an NVLink hop more on every step across.
  const double hop =
      hop_latency(cluster, g.reach_nodes()) + (g.rails_match ? 0.0 : rail_change_latency(cluster));
  CommCost r;
  r.inter_node = true;
  switch (c.kind) {
    case CollectiveKind::send_recv:
      r.algorithm = CollectiveAlgorithm::p2p;
      r.busbw_Bps = nics_for_group(cluster, 1) * nic_Bps;  // every GPU of the node sends
      r.latency_s = hop_latency(cluster, g.neighbour_nodes());
      break;
    case CollectiveKind::all_to_all: {
      r.algorithm = CollectiveAlgorithm::pairwise;
      const double per_rank_nic =
          nics * nic_Bps / g.per_node /
          largest_oversubscription_below(cluster, joining_tier(cluster, g.reach_nodes()));
      r.latency_s = hop + (n - 1) * cluster.nvlink_latency_s;
      if (c.hop_nodes > 0 && c.hop_copies > 0) {
        r.algorithm = CollectiveAlgorithm::two_hop;
        // The hops overlap: NVLink forwards what has arrived while the network
        // carries the rest (DeepSeek-V3 s3.2.2, "IB and NVLink communication is
        // fully overlapped").
        const TwoHopShares shares = two_hop_shares(c, g);
        r.bandwidth_s =
            std::max(c.bytes * shares.nvlink / nvlink, c.bytes * shares.network / per_rank_nic);
      } else {
        // NVLink carries the node's own share and, rail-only, what it forwards.
        const double local = c.bytes * all_to_all_nvlink_share(g, cluster) / nvlink;
        const double remote = c.bytes * (n - g.per_node) / n / per_rank_nic;
        r.bandwidth_s = local + remote;
      }
      r.busbw_Bps = busbw_factor(c.kind, n) * c.bytes / r.bandwidth_s;
      r.time_s = r.latency_s + r.bandwidth_s;
      return r;
    }
    default: {
      r.busbw_Bps = std::min(nics * nic_Bps, g.per_node > 1 ? nvlink : nics * nic_Bps);
      const double ring_latency = ring_steps(c.kind, n) * hop;
      r.algorithm = CollectiveAlgorithm::ring;
      r.latency_s = ring_latency;
      if (c.kind == CollectiveKind::all_reduce) {
        // NCCL's double binary tree: log-depth latency, same bus bandwidth here.
        const double tree_latency =
            2 * (std::ceil(std::log2(g.nodes)) * hop + (g.per_node - 1) * cluster.nvlink_latency_s);
        if (tree_latency < ring_latency) {
          r.algorithm = CollectiveAlgorithm::tree;
          r.latency_s = tree_latency;
        }
      }
      r.bandwidth_s = busbw_factor(c.kind, n) * c.bytes / r.busbw_Bps;
      r.time_s = r.latency_s + r.bandwidth_s;
      if (c.kind == CollectiveKind::all_reduce && g.per_node > 1) {
        const CommCost h = hierarchical_all_reduce(c, g, cluster, p, slowdown);
        if (h.time_s < r.time_s) r = h;
      }
      const bool reduces =
          c.kind == CollectiveKind::all_reduce || c.kind == CollectiveKind::reduce_scatter;
      if (reduces && in_network &&
          cluster.network.in_network_reduction == models::scenario::InNetworkReduction::sharp &&
          sharp_tree_sharers(g, cluster) <= 1) {
        const CommCost sharp = in_switches(c, g, cluster, p, slowdown);
        if (sharp.time_s < r.time_s) r = sharp;
      }
      return r;
    }
  }
  r.bandwidth_s = busbw_factor(c.kind, n) * c.bytes / r.busbw_Bps;
  r.time_s = r.latency_s + r.bandwidth_s;
  return r;
}

}  // namespace

int sharp_tree_sharers(const models::GroupSpan& g, const models::scenario::ClusterSpec& cluster) {
  if (g.nodes <= 1) return 1;
  const int gpn = cluster.gpus_per_node;
  const int nics = std::max(1, std::min(cluster.nics_per_node, gpn));
  // Communicators behind one NIC port: its GPUs', unless one holds the node.
  const int per_nic =
      g.per_node >= gpn ? 1 : std::min(gpn / nics, std::max(1, gpn / std::max(1, g.per_node)));
  if (cluster.network.sharp_trees == models::scenario::SharpTrees::per_port) return per_nic;
  const long leaf = std::lround(subtree_nodes(cluster).front());
  const long groups = std::max(1L, static_cast<long>(cluster.nodes()) / g.nodes);
  long on_leaf = 1;
  if (g.reach_nodes() > g.nodes) {
    on_leaf = std::min(leaf, groups);
  } else if (g.nodes >= leaf) {
    on_leaf = g.nodes % leaf == 0 || groups == 1 ? 1 : 2;
  } else {
    on_leaf = std::min((leaf + g.nodes - 1) / g.nodes, groups);
  }
  return per_nic * static_cast<int>(std::max(1L, on_leaf));
}

double rail_forwarded_share(const models::GroupSpan& g,
                            const models::scenario::ClusterSpec& cluster) {
  const auto& net = cluster.network;
  const bool forwards = net.topology == models::scenario::Topology::rail_only || net.pxn;
  if (!forwards || g.nodes <= 1) return 0;
  if (!g.rails_match) return 1;
  const double rails = std::min(g.per_node, std::max(1, cluster.nics_per_node));
  return 1 - 1 / rails;
}

double all_to_all_nvlink_share(const models::GroupSpan& g,
                               const models::scenario::ClusterSpec& cluster) {
  const double n = g.size;
  if (n <= 0) return 0;
  const double local = (g.per_node - 1) / n;
  const double remote = (n - g.per_node) / n;
  return local + remote * rail_forwarded_share(g, cluster);
}

double rail_change_latency(const models::scenario::ClusterSpec& cluster) {
  return cluster.network.topology == models::scenario::Topology::rail_only
             ? cluster.nvlink_latency_s
             : 0.0;
}

TwoHopShares two_hop_shares(const models::Collective& c, const models::GroupSpan& g) {
  TwoHopShares s;
  if (!(c.hop_nodes > 0 && c.hop_copies > 0) || g.nodes < 1) return s;
  const double nodes = g.nodes;
  const double reached = std::min(c.hop_nodes, nodes);
  s.network = reached * (nodes - 1) / nodes / c.hop_copies;
  const double per_node = g.per_node;
  s.nvlink = per_node > 0 ? (per_node - 1) / per_node : 0;
  return s;
}

double nvlink_busbw(const DeviceProfile& p, CollectiveKind kind, double bytes) {
  return interpolate_busbw(
      kind == CollectiveKind::all_reduce ? p.nvlink_busbw : p.nvlink_ring_busbw, bytes);
}

namespace {

// Calls `visit(tier, nodes)` for each tier, bottom up, with the nodes under one
// of its switches, until it returns true; returns the tier it stopped at (the
// tier count where it never did).
template <typename Visit>
std::size_t visit_subtrees(const models::scenario::ClusterSpec& c, Visit visit) {
  const auto& tiers = c.network.tiers;
  // Nodes under one leaf: a rail leaf sees one NIC per node, a rack leaf all of them.
  double under = 1;
  const double port_Bps = models::scenario::nic_port_bw(c);
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    double down = models::scenario::down_ports(c.network, i, port_Bps);
    if (i == 0) down = c.network.rail_optimized ? down : std::max(1.0, down / c.nics_per_node);
    under *= down;
    if (visit(i, under)) return i;
  }
  return tiers.size();
}

}  // namespace

std::vector<double> subtree_nodes(const models::scenario::ClusterSpec& c) {
  std::vector<double> nodes;
  nodes.reserve(c.network.tiers.size());
  visit_subtrees(c, [&](std::size_t, double under) {
    nodes.push_back(under);
    return false;
  });
  return nodes;
}

std::vector<bool> uplinks_bind(const models::scenario::ClusterSpec& c) {
  const std::size_t tiers = subtree_nodes(c).size();
  std::vector<bool> bind;
  double oversubscription = 1;
  for (std::size_t i = 0; i + 1 < tiers; ++i) {
    oversubscription *= std::max(1.0, c.network.tiers[i].oversubscription) /
                        models::scenario::uplinks_in_service(c.network, i);
    bind.push_back(oversubscription > 1);
  }
  return bind;
}

int joining_tier(const models::scenario::ClusterSpec& c, int nodes) {
  // Called for every collective priced across nodes: no vector built.
  return static_cast<int>(
      visit_subtrees(c, [nodes](std::size_t, double under) { return under >= nodes; }));
}

CommCost collective_cost(const models::Collective& c, const models::GroupSpan& g,
                         const models::scenario::ClusterSpec& cluster, const DeviceProfile& profile,
                         double nic_slowdown) {
  if (g.size <= 1 || c.bytes <= 0) return {};
  if (g.nodes <= 1) {
    CommCost r = intra_node(c, g.size, cluster, profile);
    r.time_s = r.latency_s + r.bandwidth_s;
    return r;
  }
  return inter_node(c, g, cluster, profile, nic_slowdown);
}

}  // namespace myriad::sim
