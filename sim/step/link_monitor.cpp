#include "sim/step/link_monitor.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::sim {

LinkMonitor::LinkMonitor(const FatTreePlatform& platform)
    : platform_(platform), bytes_(platform.links().size() * 2, 0.0) {}

std::size_t LinkMonitor::direction(const LinkCrossing& c) {
  return static_cast<std::size_t>(c.link) * 2 + (c.up ? 0 : 1);
}

void LinkMonitor::flow_started(int from_host, int to_host, double bytes) {
  for (const LinkCrossing& c : platform_.route(from_host, to_host)) bytes_[direction(c)] += bytes;
}

std::vector<LinkLoad> LinkMonitor::loads(double step_s) const {
  std::vector<LinkLoad> out;
  if (step_s <= 0) return out;
  for (std::size_t d = 0; d < bytes_.size(); ++d) {
    if (bytes_[d] <= 0) continue;
    const PlatformLink& link = platform_.links()[d / 2];
    out.push_back({link.name, link.tier, d % 2 == 0, link.bw_Bps, bytes_[d],
                   bytes_[d] / (link.bw_Bps * step_s)});
  }
  std::stable_sort(out.begin(), out.end(), [](const LinkLoad& a, const LinkLoad& b) {
    // Equal to a part in 1e9 is equal: links of a ring carry the same bytes.
    const double scale = 1e-9 * std::max(a.utilization, b.utilization);
    if (std::fabs(a.utilization - b.utilization) > scale) return a.utilization > b.utilization;
    const bool a_nic = a.tier == "nic";
    if (a_nic != (b.tier == "nic")) return !a_nic;  // switch uplinks first: fewer, shared
    return a.name < b.name;
  });
  return out;
}

}  // namespace myriad::sim
