// The time of one collective: alpha-beta per level, with the bus bandwidth
// nccl-tests would measure at that message size, and NCCL-like algorithms.
//   Inside a node: bus bandwidth interpolated from the profile's NVLink curve
//     (measured all-reduce busbw by size), 2(n-1) or n-1 hops of NVLink latency.
//     All-reduce runs NVLS where the GPU has it (cluster.gpu.nvls) and the curve
//     was measured with it; the other collectives run rings, at the curve capped
//     at the ring's ceiling.
//   Across nodes: ring, tree or hierarchical (all-reduce), whichever is faster, at a bus
//     bandwidth of min(members per node, NICs per node) NICs at the profile's
//     efficiency (and no more than NVLink gives inside the node); a hop costs
//     the NIC latency plus the switch tiers crossed up and down. All-to-all
//     traffic leaving the node is divided by the largest oversubscription below
//     the tier that joins the group; a two-hop all-to-all (node-limited
//     routing) sends a token once a node over the network, NVLink forwarding
//     it inside the node at the same time (two_hop_shares). Where the network
//     reduces in its switches (cluster.network.in_network_reduction: sharp),
//     all-reduce and reduce-scatter may also run there (algorithm sharp): each
//     GPU's 1/per_node part up the aggregation tree once, an all-reduce's back
//     once, after a reduce-scatter over NVLink and before an all-gather.
// time = latency + factor * bytes / busbw, factor as nccl-tests' busbw formulas:
// 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter, all-to-all.
#pragma once

#include <string_view>
#include <vector>

#include "models/plan/collective.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/scenario/cluster_spec.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

struct CommCost {
  double time_s = 0;
  double latency_s = 0;
  double bandwidth_s = 0;
  double busbw_Bps = 0;
  models::CollectiveAlgorithm algorithm = models::CollectiveAlgorithm::none;
  bool inter_node = false;
};

// `nic_slowdown` (>= 1) divides the NIC rate the group's flows get: what the
// network's oversubscription leaves them when all such groups send at once
// (network_slowdown.hpp).
CommCost collective_cost(const models::Collective& c, const models::GroupSpan& g,
                         const models::scenario::ClusterSpec& cluster, const DeviceProfile& profile,
                         double nic_slowdown = 1);

// A two-hop all-to-all (Collective::hop_nodes, node-limited routing) across
// `g.nodes` nodes: the shares of its bytes that cross the network and that NVLink
// forwards. A token crosses once to each node it reaches but its own:
// min(hop_nodes, nodes) nodes, (nodes - 1) / nodes of them remote under even
// routing, out of its hop_copies copies; NVLink then carries every copy but
// those that land on the GPU they reached, (per_node - 1) / per_node. Both 0 for
// an all-to-all that sends each copy on its own.
struct TwoHopShares {
  double network = 0;
  double nvlink = 0;
};
TwoHopShares two_hop_shares(const models::Collective& c, const models::GroupSpan& g);

// In-network reduction's streaming aggregation trees (cluster.network.sharp_trees):
// the communicators of a group's kind that need a tree of the same switch (or
// port) at once, as they run their reductions together (every data-parallel
// communicator of a step at the same point of it). NCCL opens one tree per NIC
// rail (HPC-X's NCCL-RDMA-SHARP plugin guide). per_port (Quantum-2 on): only
// the communicators sharing a NIC (a node with fewer NICs than GPUs, its GPUs
// taken as each in a communicator of its own unless one communicator holds the
// whole node) need the same port. per_switch (Quantum): besides, a rail's leaf
// switch serves that rail of its nodes, and each communicator that has a member
// there needs its tree: with one member per node per rail, a leaf of L nodes
// holds min(ceil(L / nodes), groups) groups laid out node after node (one where
// L divides their nodes, two where a leaf straddles two), and min(L, groups) of
// those strided over the nodes (reach beyond their nodes). groups: the
// cluster's nodes over the group's. 1 for a group inside a node. SHARP applies
// where this is 1: a communicator left without a tree runs on the point-to-point
// network (NCCL: "Cannot initialize CollNet, using point-to-point network
// instead"), and the step waits for the slowest.
int sharp_tree_sharers(const models::GroupSpan& g, const models::scenario::ClusterSpec& cluster);

// Rail-only fabrics (cluster.network.topology: rail_only; Wang et al., "Rail-only:
// A Low-Cost High-Performance Network for Training LLMs with Trillion
// Parameters", arXiv:2307.12169): no tier joins the rails, so a byte bound for
// a GPU on another rail of another node first crosses NVLink to the GPU of its
// node on that rail (NCCL's PXN path), then that rail. Of what an all-to-all
// sends to other nodes, the share that changes rail: 1 - 1/r where the group's
// nodes hold its members on the same r rails (members spread over
// min(per_node, NICs) rails), all of it where they do not; 0 on a fat tree,
// whose top tiers join the rails, or inside one node.
double rail_forwarded_share(const models::GroupSpan& g,
                            const models::scenario::ClusterSpec& cluster);

// The share of an all-to-all's bytes each GPU sends over NVLink: to the other
// members of its node, (per_node - 1) / n, and, rail-only, what it forwards to
// another rail, (n - per_node) / n times rail_forwarded_share. Both engines
// price the all-to-all's NVLink part as these bytes at NVLink's bus bandwidth,
// before its network part (a GPU's NVLink port carries its own and the
// forwarded bytes one after another): with 8 GPUs a node on H100, 7/8 of the
// remote bytes at NVLink's 370 GB/s against a NIC's 50 GB/s add 11 % to the
// network part, within the 8.2-11.2 % the paper reports for its all-to-alls.
double all_to_all_nvlink_share(const models::GroupSpan& g,
                               const models::scenario::ClusterSpec& cluster);

// What a step between nodes adds where it enters a node on another rail than
// it left from (a rail-only fabric, a group not on the same rails in every
// node, GroupSpan::rails_match): one NVLink hop's latency; 0 on a fat tree.
double rail_change_latency(const models::scenario::ClusterSpec& cluster);

// Bus bandwidth inside a node for a collective of `kind`: all-reduce by the
// algorithm the hardware and profile give (NVLS or ring), everything else at the
// ring's.
double nvlink_busbw(const DeviceProfile& p, models::CollectiveKind kind, double bytes);

// One message across the network between two of `nodes` nodes: the NIC latency
// plus the switch tiers crossed up and down.
double hop_latency(const models::scenario::ClusterSpec& cluster, int nodes);

// The index of the lowest switch tier whose subtree holds `nodes` nodes; the
// number of tiers when even the top tier's does not.
int joining_tier(const models::scenario::ClusterSpec& cluster, int nodes);

// Per tier, the nodes under one of its switch groups (a leaf's rail group, a
// pod, ...): its down ports times those of the tiers below it, a rail-optimized
// leaf's NICs standing for one node each and a rack leaf's for 1/NICs of one.
std::vector<double> subtree_nodes(const models::scenario::ClusterSpec& cluster);

// Per tier below the top (as subtree_nodes counts them): whether a subtree's
// uplinks carry less than its NICs, the oversubscription of its tier and of
// those below it together above 1:1. Uplinks that carry as much as the NICs
// under them never bind a flow before its NICs do (the flows leaving a subtree
// come from its NICs), so they change no rate.
std::vector<bool> uplinks_bind(const models::scenario::ClusterSpec& cluster);

}  // namespace myriad::sim
