#include "sim/campaign/repair_incidents.hpp"

#include <fmt/format.h>

namespace myriad::sim::campaign {

void RepairIncidents::open(std::string_view component, std::string_view domain, int id, int first,
                           int count) {
  ++last_;
  incidents_[last_] = Incident{component, domain, id, first, count, 0, false};
}

void RepairIncidents::leave(std::uint64_t incident) {
  const auto it = incidents_.find(incident);
  if (it == incidents_.end()) return;
  if (--it->second.pending <= 0) incidents_.erase(it);
}

void RepairIncidents::sent(int node) {
  const auto n = static_cast<std::size_t>(node);
  if (n >= of_node_.size()) of_node_.resize(n + 1, 0);
  if (of_node_[n] != 0) leave(of_node_[n]);
  const auto it = incidents_.find(last_);
  if (it == incidents_.end()) {
    of_node_[n] = 0;
    return;
  }
  of_node_[n] = last_;
  ++it->second.pending;
}

std::optional<CampaignEvent> RepairIncidents::back(int node, double time_s) {
  const auto n = static_cast<std::size_t>(node);
  if (n >= of_node_.size() || of_node_[n] == 0) return std::nullopt;
  const std::uint64_t incident = of_node_[n];
  of_node_[n] = 0;
  const auto it = incidents_.find(incident);
  if (it == incidents_.end()) return std::nullopt;
  Incident& i = it->second;
  std::optional<CampaignEvent> out;
  if (!i.reported) {
    i.reported = true;
    CampaignEvent e;
    e.time_s = time_s;
    e.kind = EventKind::repaired;
    e.component = i.component;
    e.domain = i.domain;
    e.id = i.id;
    e.first_node = i.first;
    e.node_count = i.count;
    if (i.pending < i.count) {
      e.detail = fmt::format("{} of its {} nodes back; the others under a longer repair", i.pending,
                             i.count);
    }
    out = std::move(e);
  }
  leave(incident);
  return out;
}

}  // namespace myriad::sim::campaign
