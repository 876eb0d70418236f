#include "sim/campaign/fabric_ports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace myriad::sim::campaign {

using models::scenario::Domain;

FabricPorts::FabricPorts(const models::scenario::Scenario& s)
    : lanes_(models::scenario::fabric_lanes(s.cluster)) {
  const auto& tiers = s.cluster.network.tiers;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    tiers_.push_back(models::scenario::fabric_tier(s.cluster, i));
    base_.push_back(tiers[i].uplinks_down);
  }
  worst_ = base_;
  down_.resize(tiers.size());
  switches_with_.resize(tiers.size());
  most_.assign(tiers.size(), 0);
}

bool FabricPorts::fail(Domain domain, int tier, long long unit) {
  if (!out_.emplace(static_cast<int>(domain), tier, unit).second) return false;
  change(domain, tier, unit, 1);
  return true;
}

void FabricPorts::repair(Domain domain, int tier, long long unit) {
  if (out_.erase({static_cast<int>(domain), tier, unit}) == 0) return;
  change(domain, tier, unit, -1);
}

bool FabricPorts::cut_off() const {
  for (std::size_t i = 0; i < worst_.size(); ++i) {
    if (tiers_[i].up_ports > 0 && worst_[i] >= tiers_[i].up_ports) return true;
  }
  return false;
}

std::string FabricPorts::describe(int tier) const {
  const auto i = static_cast<std::size_t>(tier);
  return fmt::format("tier {}: {} of {} up ports out on the worst switch", tier, worst_[i],
                     tiers_[i].up_ports);
}

// An up port of switch u / U of tier `tier` (uplink); or switch `unit` of tier
// `tier` (spine), whose block (subtree, lane) and position k among the block's
// switches name the switch k of the tier below in each subtree under it, on its
// lane: each loses its up port to it.
void FabricPorts::change(Domain domain, int tier, long long unit, int by) {
  const auto t = static_cast<std::size_t>(tier);
  const int losing = losing_tier(domain, tier);
  if (losing < 0 || static_cast<std::size_t>(losing) >= tiers_.size() || unit < 0) {
    throw std::logic_error("FabricPorts: no such spine or up port");
  }
  const auto l = static_cast<std::size_t>(losing);
  auto& down = down_[l];
  auto& with = switches_with_[l];
  int& most = most_[l];
  if (down.empty()) {
    down.assign(static_cast<std::size_t>(tiers_[l].switches), 0);
    with.assign(1, tiers_[l].switches);
  }
  const auto bump = [&](long long sw) {
    if (sw < 0 || sw >= static_cast<long long>(down.size())) return;
    int& count = down[static_cast<std::size_t>(sw)];
    --with[static_cast<std::size_t>(count)];
    count += by;
    if (static_cast<std::size_t>(count) >= with.size()) {
      with.resize(static_cast<std::size_t>(count) + 1, 0);
    }
    ++with[static_cast<std::size_t>(count)];
    most = std::max(most, count);
    while (most > 0 && with[static_cast<std::size_t>(most)] == 0) --most;
  };
  if (domain == Domain::uplink) {
    bump(unit / std::max(1, tiers_[t].up_ports));
  } else {
    const long long per_block = tiers_[t].per_lane;
    const long long block = unit / per_block;
    const long long subtree = block / lanes_;
    const long long lane = block % lanes_;
    const long long k = unit % per_block / std::max(1, tiers_[l].up_ports);
    const long long below = tiers_[l].per_lane;
    const long long first = subtree * tiers_[t].children;
    const long long last = std::min(first + tiers_[t].children, tiers_[l].subtrees);
    for (long long child = first; child < last; ++child) bump((child * lanes_ + lane) * below + k);
  }
  worst_[l] = base_[l] + most;
}

}  // namespace myriad::sim::campaign
