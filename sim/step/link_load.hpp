// What one link direction carried during a simulated step (sim/step/link_monitor.hpp
// counts it); apart from the monitor so that the step engine's interface needs no
// SimGrid.
#pragma once

#include <string>

namespace myriad::sim {

struct LinkLoad {
  std::string name;  // "leaf-0.up"
  std::string tier;  // "nic" or the tier it leaves
  bool up = true;    // direction: towards the top tier
  double bw_Bps = 0;
  double bytes = 0;        // the bytes of the flows that crossed it
  double utilization = 0;  // bytes over what the bandwidth carries in the step, 0..1
};

}  // namespace myriad::sim
