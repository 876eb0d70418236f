#include "models/scenario/cluster_spec.hpp"

#include <cmath>

namespace myriad::models::scenario {

double network_endpoint_capacity(const NetworkSpec& network, double nic_bw_Bps) {
  if (network.tiers.empty()) return 0;
  double capacity = 1;
  for (std::size_t i = 0; i < network.tiers.size(); ++i) {
    const TierSpec& t = network.tiers[i];
    const bool top = i + 1 == network.tiers.size();
    // Ports facing down: all of them at the top, else radix * o / (o + 1).
    double down =
        top ? t.radix : std::floor(t.radix * t.oversubscription / (t.oversubscription + 1));
    if (i == 0 && nic_bw_Bps > 0 && t.port_bw_Bps > nic_bw_Bps) {
      down *= std::floor(t.port_bw_Bps / nic_bw_Bps);  // breakout of fast leaf ports
    }
    capacity *= down;
  }
  return capacity;
}

}  // namespace myriad::models::scenario
