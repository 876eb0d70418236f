// Peak utilization of the platform's links during a simulated step.
//
// The actors say when a flow between two hosts starts and when they have seen
// it end; whenever simulated time advances, the monitor reads the current load
// (SimGrid's Link::get_usage, bytes/s from the max-min solution) of each link
// direction that carries a flow, over its bandwidth, and keeps the largest.
// Only directions with a flow are read, so the cost follows the flows, not the
// size of the platform. A flow counts from its sender's call, so a direction may
// be read while its flow still waits for the receiver: that reads a lower load,
// never a higher one.
#pragma once

#include <string>
#include <vector>

#include "sim/topology/fat_tree_platform.hpp"

namespace myriad::sim {

struct LinkPeak {
  std::string name;  // "leaf-0.up"
  std::string tier;  // "nic" or the tier it leaves
  bool up = true;    // direction: towards the top tier
  double bw_Bps = 0;
  double peak_utilization = 0;  // largest load over bandwidth, 0..1
};

class LinkMonitor {
 public:
  explicit LinkMonitor(const FatTreePlatform& platform);
  LinkMonitor(const LinkMonitor&) = delete;
  LinkMonitor& operator=(const LinkMonitor&) = delete;
  ~LinkMonitor() = default;

  void flow_started(int from_host, int to_host);
  void flow_ended(int from_host, int to_host);
  // Reads the load of every direction that carries a flow now.
  void sample();
  // Every direction that carried load, highest peak first; at equal peaks
  // switch uplinks before host links, then by name.
  [[nodiscard]] std::vector<LinkPeak> peaks() const;

 private:
  [[nodiscard]] static std::size_t direction(const LinkCrossing& c);
  const FatTreePlatform& platform_;
  std::vector<int> flows_;  // per direction: [link * 2 + (up ? 0 : 1)]
  std::vector<double> peak_;
  std::vector<std::size_t> active_;  // directions that carried a flow since the last sample
  std::vector<bool> listed_;         // per direction: in active_
};

}  // namespace myriad::sim
