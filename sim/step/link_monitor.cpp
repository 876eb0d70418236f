#include "sim/step/link_monitor.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::sim {

LinkMonitor::LinkMonitor(const FatTreePlatform& platform)
    : platform_(platform),
      flows_(platform.links().size() * 2, 0),
      peak_(platform.links().size() * 2, 0.0),
      listed_(platform.links().size() * 2, false) {}

std::size_t LinkMonitor::direction(const LinkCrossing& c) {
  return static_cast<std::size_t>(c.link) * 2 + (c.up ? 0 : 1);
}

void LinkMonitor::flow_started(int from_host, int to_host) {
  for (const LinkCrossing& c : platform_.route(from_host, to_host)) {
    const std::size_t d = direction(c);
    ++flows_[d];
    if (!listed_[d]) active_.push_back(d);
    listed_[d] = true;
  }
}

void LinkMonitor::flow_ended(int from_host, int to_host) {
  for (const LinkCrossing& c : platform_.route(from_host, to_host)) --flows_[direction(c)];
}

void LinkMonitor::sample() {
  std::size_t kept = 0;
  for (const std::size_t d : active_) {
    const PlatformLink& link = platform_.links()[d / 2];
    const simgrid::s4u::Link* l = d % 2 == 0 ? link.up : link.down;
    peak_[d] = std::max(peak_[d], l->get_usage() / link.bw_Bps);
    if (flows_[d] > 0) {
      active_[kept++] = d;
    } else {
      listed_[d] = false;
    }
  }
  active_.resize(kept);
}

std::vector<LinkPeak> LinkMonitor::peaks() const {
  std::vector<LinkPeak> out;
  for (std::size_t d = 0; d < peak_.size(); ++d) {
    if (peak_[d] <= 0) continue;
    const PlatformLink& link = platform_.links()[d / 2];
    out.push_back({link.name, link.tier, d % 2 == 0, link.bw_Bps, peak_[d]});
  }
  std::stable_sort(out.begin(), out.end(), [](const LinkPeak& a, const LinkPeak& b) {
    // Peaks equal to a part in 1e9 are equal: a shared link's load sums the rates of its flows.
    const double scale = 1e-9 * std::max(a.peak_utilization, b.peak_utilization);
    if (std::fabs(a.peak_utilization - b.peak_utilization) > scale) {
      return a.peak_utilization > b.peak_utilization;
    }
    const bool a_nic = a.tier == "nic";
    if (a_nic != (b.tier == "nic")) return !a_nic;  // switch uplinks first: fewer, shared
    return a.name < b.name;
  });
  return out;
}

}  // namespace myriad::sim
