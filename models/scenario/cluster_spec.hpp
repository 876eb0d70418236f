// The machine a job runs on: nodes of GPUs joined by NVLink, NICs on rails,
// and a multi-tier fat-tree (folded Clos) network with oversubscription.
#pragma once

#include <string>
#include <vector>

#include "models/scenario/gpu_spec.hpp"

namespace myriad::models::scenario {

// One tier of switches; tier 0 is the leaf (top of rack / rail) tier.
struct TierSpec {
  std::string name;
  int radix = 0;                // ports per switch
  double port_bw_Bps = 0;       // bandwidth per port and direction
  double oversubscription = 1;  // downlink to uplink bandwidth, >= 1 (ignored at the top tier)
  double latency_s = 0;         // one hop through this tier: switch plus cable
};

struct NetworkSpec {
  bool rail_optimized = true;  // NIC i of every node attaches to rail i's leaf switches
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

// How many NIC ports a network of these tiers can attach at full build-out:
// each non-top tier splits its ports into down and up by its oversubscription,
// the top tier points every port down. A leaf port faster than the NICs is
// split (breakout cables), as MegaScale does with 400G ports and 200G NICs.
double network_endpoint_capacity(const NetworkSpec& network, double nic_bw_Bps);

}  // namespace myriad::models::scenario
