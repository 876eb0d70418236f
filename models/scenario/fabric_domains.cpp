#include "models/scenario/fabric_domains.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::models::scenario {

int fabric_lanes(const ClusterSpec& c) {
  const int rails = c.network.rail_optimized ? std::max(1, c.nics_per_node) : 1;
  return rails * std::max(1, c.network.planes);
}

FabricTier fabric_tier(const ClusterSpec& c, std::size_t tier) {
  const NetworkSpec& n = c.network;
  const auto down = [&](std::size_t i) { return down_ports(n, i, nic_port_bw(c)); };
  FabricTier t;
  // A leaf takes one NIC of each node on a rail-optimized fabric, else all of them.
  const double per_node = n.rail_optimized ? 1 : std::max(1, c.nics_per_node);
  t.nodes_per_subtree = std::max(1.0, std::floor(down(0) / per_node));
  for (std::size_t i = 1; i <= tier; ++i) {
    t.children = static_cast<int>(down(i));
    t.nodes_per_subtree *= std::max(1.0, down(i));
    t.per_lane *= static_cast<long long>(up_ports(n, i - 1));
  }
  t.subtrees = std::max(1LL, static_cast<long long>(std::ceil(c.nodes() / t.nodes_per_subtree)));
  t.switches = t.subtrees * fabric_lanes(c) * t.per_lane;
  t.up_ports = static_cast<int>(up_ports(n, tier));
  return t;
}

int default_fabric_tier(Domain domain) { return domain == Domain::spine ? 1 : 0; }

long long fabric_units(const ClusterSpec& c, Domain domain, int tier) {
  const auto& tiers = c.network.tiers;
  if (tier < 0 || static_cast<std::size_t>(tier) >= tiers.size()) return 0;
  const FabricTier t = fabric_tier(c, static_cast<std::size_t>(tier));
  if (domain == Domain::uplink) return t.switches * t.up_ports;
  if (domain == Domain::spine && tier >= 1) return t.switches;
  return 0;
}

}  // namespace myriad::models::scenario
