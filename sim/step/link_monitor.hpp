// How much the platform's links carried during a simulated step.
//
// The actors say when a flow between two hosts starts, with its bytes. Each
// link direction counts the bytes of the flows that cross it; its utilization is those bytes over
// what its bandwidth could carry in the step, a fraction in 0..1. Not a peak: SimGrid's
// Link::get_usage was measured at 1.5 times a NIC's bandwidth with two flows on it (the 4,096-GPU
// 1:3 case), and the actors see an asynchronous flow end only when they wait for
// it, so neither gives the moment a link was busiest. The cost follows the
// flows, not the size of the platform.
#pragma once

#include <string>
#include <vector>

#include "sim/step/link_load.hpp"
#include "sim/topology/fat_tree_platform.hpp"

namespace myriad::sim {

class LinkMonitor {
 public:
  explicit LinkMonitor(const FatTreePlatform& platform);
  LinkMonitor(const LinkMonitor&) = delete;
  LinkMonitor& operator=(const LinkMonitor&) = delete;
  ~LinkMonitor() = default;

  void flow_started(int from_host, int to_host, double bytes);
  // Every direction that carried traffic in a step of `step_s`, most utilized
  // first; at equal utilization switch uplinks before host links, then by name.
  [[nodiscard]] std::vector<LinkLoad> loads(double step_s) const;

 private:
  [[nodiscard]] static std::size_t direction(const LinkCrossing& c);
  const FatTreePlatform& platform_;
  std::vector<double> bytes_;  // per direction: [link * 2 + (up ? 0 : 1)]
};

}  // namespace myriad::sim
