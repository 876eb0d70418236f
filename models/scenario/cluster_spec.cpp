#include "models/scenario/cluster_spec.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::models::scenario {

double down_ports(const NetworkSpec& network, std::size_t tier, double nic_port_Bps) {
  const TierSpec& t = network.tiers[tier];
  const bool top = tier + 1 == network.tiers.size();
  double down = top ? t.radix : std::floor(t.radix * t.oversubscription / (t.oversubscription + 1));
  if (tier == 0 && nic_port_Bps > 0 && t.port_bw_Bps > nic_port_Bps) {
    down *= std::floor(t.port_bw_Bps / nic_port_Bps);  // breakout of fast leaf ports
  }
  return std::max(0.0, down);
}

double up_ports(const NetworkSpec& network, std::size_t tier) {
  const TierSpec& t = network.tiers[tier];
  if (tier + 1 >= network.tiers.size()) return 0;
  return t.radix - std::floor(t.radix * t.oversubscription / (t.oversubscription + 1));
}

double uplinks_in_service(const NetworkSpec& network, std::size_t tier) {
  if (tier >= network.tiers.size()) return 1;
  const int down = network.tiers[tier].uplinks_down;
  const double up = up_ports(network, tier);
  if (down <= 0 || up <= 0) return 1;
  return std::max(0.0, (up - down) / up);
}

double network_endpoint_capacity(const NetworkSpec& network, double nic_port_Bps) {
  if (network.tiers.empty()) return 0;
  double capacity = 1;
  for (std::size_t i = 0; i < network.tiers.size(); ++i) {
    capacity *= down_ports(network, i, nic_port_Bps);
  }
  return capacity;
}

}  // namespace myriad::models::scenario
