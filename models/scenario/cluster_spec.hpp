// The machine a job runs on: nodes of GPUs joined by NVLink, NICs on rails,
// and a multi-tier fat-tree (folded Clos) network with oversubscription.
#pragma once

#include <string>
#include <vector>

#include "models/names/enum_names.hpp"
#include "models/scenario/gpu_spec.hpp"

namespace myriad::models::scenario {

// One tier of switches; tier 0 is the leaf (top of rack / rail) tier.
struct TierSpec {
  std::string name;
  int radix = 0;                // ports per switch
  double port_bw_Bps = 0;       // bandwidth per port and direction
  double oversubscription = 1;  // downlink to uplink bandwidth, >= 1 (ignored at the top tier)
  double latency_s = 0;         // one hop through this tier: switch plus cable
  // Up ports out of service on each switch of this tier (failed cables, or the
  // switches above them), taken on every switch: a synchronous step goes at the
  // pace of the subtree that lost them (uplinks_in_service).
  int uplinks_down = 0;
};

// Reduction in the scale-out switches: none, or InfiniBand SHARP as NCCL runs it
// (its CollNet algorithm, through the nccl-rdma-sharp plugin): each GPU's part
// of an all-reduce goes up the switches' aggregation tree once and comes back
// reduced once (comm_cost.hpp).
enum class InNetworkReduction { none, sharp };
inline constexpr models::EnumName<InNetworkReduction> kInNetworkReductionNames[] = {
    {InNetworkReduction::none, "none"}, {InNetworkReduction::sharp, "sharp"}};

// How many streaming aggregation trees (SHARP's, for large reductions) the
// switches run at once: one per switch on Quantum (HDR), one per port on
// Quantum-2 (NDR) and later (NVIDIA SHARP Rev 3.13.0, "General Information":
// "limited to one active tree per switch"; "Multiple SHARP streaming aggregation
// operations can be operated in parallel by a single Quantum-2 switch. The limit
// is one active tree per port"). A communicator that gets none runs on the
// point-to-point network (NCCL's ncclTransportCollNetCheck: "Cannot initialize
// CollNet, using point-to-point network instead"; sim/cost/comm_cost.hpp).
enum class SharpTrees { per_switch, per_port };
inline constexpr models::EnumName<SharpTrees> kSharpTreesNames[] = {
    {SharpTrees::per_switch, "per_switch"}, {SharpTrees::per_port, "per_port"}};
// The switches' generation by the NIC rate (per NIC and direction): Quantum beside
// HDR (200 Gb/s) NICs and slower, Quantum-2 (NDR) and later beside faster ones.
inline SharpTrees sharp_trees_for_nics(double nic_bw_Bps) {
  constexpr double kHdr_Bps = 200e9 / 8;
  return nic_bw_Bps <= kHdr_Bps ? SharpTrees::per_switch : SharpTrees::per_port;
}

// How a switch spreads flows over its equal-cost up ports: as evenly as a fluid
// (InfiniBand's adaptive routing, packet spraying), or by hashing each flow onto
// one port for its life (ECMP: sim/cost/ecmp.hpp).
enum class LoadBalancing { adaptive, ecmp };
inline constexpr models::EnumName<LoadBalancing> kLoadBalancingNames[] = {
    {LoadBalancing::adaptive, "adaptive"}, {LoadBalancing::ecmp, "ecmp"}};

// Whether each ECMP switch seeds its hash with its own value (per_switch, as
// Cisco's universal algorithm and flow-based hashing with a per-switch seed do)
// or every switch hashes alike (shared): then a switch above the first tier sees
// only the flows that one hash sent its way and spreads them over fewer ports
// (polarization; sim/cost/network_slowdown.cpp).
enum class EcmpHash { per_switch, shared };
inline constexpr models::EnumName<EcmpHash> kEcmpHashNames[] = {
    {EcmpHash::per_switch, "per_switch"}, {EcmpHash::shared, "shared"}};

// NCCL's connections a NIC carries for one ring or pipeline peer: its graph
// search finds a channel per NIC, then doubles them (ncclTopoPostset;
// NVIDIA/nccl issue #524), and point-to-point takes NCCL_NCHANNELS_PER_NET_PEER,
// 2 by default.
inline constexpr int kConnectionsPerNic = 2;

// How the tiers join the rails (arXiv:2307.12169, Wang et al., "Rail-only"):
// a fat tree's top tiers join every rail, so a byte may change rail in the
// network; rail-only ends each rail's tiers at the rail (no spine joins rails),
// so a byte bound for another rail crosses NVLink to a GPU of that rail first.
enum class Topology { fat_tree, rail_only };
inline constexpr models::EnumName<Topology> kTopologyNames[] = {{Topology::fat_tree, "fat_tree"},
                                                                {Topology::rail_only, "rail_only"}};

struct NetworkSpec {
  Topology topology = Topology::fat_tree;
  bool rail_optimized = true;  // NIC i of every node attaches to rail i's leaf switches
  // NCCL's PXN (NCCL_PXN_DISABLE=0, its default since 2.12; NCCL_P2P_PXN_LEVEL=2,
  // its default: always): a send to a GPU of another node goes over NVLink to the
  // sender's node's GPU on the destination's rail, whose NIC sends it, so the
  // network carries no byte from one rail to another (comm_cost.hpp,
  // rail_forwarded_share). Off, a byte changes rail in the spine.
  bool pxn = true;
  // Independent copies of the tiers (a multi-plane fabric): each NIC has one port
  // on each plane, of its bandwidth over the planes.
  int planes = 1;
  // Planes out of service (a failed plane): each NIC keeps its ports on the
  // others, and every tier loses the same share of its links.
  int planes_down = 0;
  InNetworkReduction in_network_reduction = InNetworkReduction::none;
  SharpTrees sharp_trees = SharpTrees::per_port;
  LoadBalancing load_balancing = LoadBalancing::adaptive;
  // NCCL_IB_QPS_PER_CONNECTION: queue pairs a connection splits its data over,
  // each hashed on its own (ECMP only).
  int qps_per_connection = 1;
  EcmpHash ecmp_hash = EcmpHash::per_switch;
  std::vector<TierSpec> tiers;
};

struct ClusterSpec {
  std::string preset;
  std::string name;
  std::string source;
  GpuSpec gpu;
  int gpus = 0;
  int gpus_per_node = 8;
  double nvlink_latency_s = 0;
  int nics_per_node = 0;
  double price_per_gpu_hour = 0;  // US dollars; 0 when not given
  double nic_bw_Bps = 0;          // per NIC and direction
  double nic_latency_s = 0;
  NetworkSpec network;

  [[nodiscard]] int nodes() const { return gpus_per_node > 0 ? gpus / gpus_per_node : 0; }
};

// Ports of tier `tier` facing down: every port at the top tier, else radix x
// o / (o + 1) by its oversubscription o; a leaf port faster than the NIC ports
// of `nic_port_Bps` it serves is split (breakout cables), as MegaScale does with
// 400G ports and 200G NICs.
double down_ports(const NetworkSpec& network, std::size_t tier, double nic_port_Bps);

// Ports of tier `tier` facing up, towards the tier above (0 at the top): radix
// less the down ports before any breakout.
double up_ports(const NetworkSpec& network, std::size_t tier);

// The share of tier `tier`'s up ports in service, (up - uplinks_down) / up: a
// subtree's uplinks carry that share of what the oversubscription gives them.
// 1 with every uplink up (and at the top).
double uplinks_in_service(const NetworkSpec& network, std::size_t tier);

// A NIC's port on one plane: its bandwidth over the planes.
[[nodiscard]] inline double nic_port_bw(const ClusterSpec& c) {
  return c.nic_bw_Bps / (c.network.planes > 0 ? c.network.planes : 1);
}

// A NIC's bandwidth on the planes in service: all of it, or (planes -
// planes_down) / planes of it while planes are down. The fabric's tiers lose the
// same share, so the oversubscription each flow meets is unchanged.
[[nodiscard]] inline double nic_bw_in_service(const ClusterSpec& c) {
  const int planes = c.network.planes > 0 ? c.network.planes : 1;
  return c.nic_bw_Bps * (planes - c.network.planes_down) / planes;
}

// How many NIC ports one plane of these tiers can attach at full build-out (the
// product of the tiers' down ports); each NIC has a port of `nic_port_Bps` on
// each plane.
double network_endpoint_capacity(const NetworkSpec& network, double nic_port_Bps);

}  // namespace myriad::models::scenario
