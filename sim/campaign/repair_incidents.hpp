// The event log's repairs, one event an incident. The nodes one failure sends
// to repair (a leaf, a pod, a rack, or one node) come back together, after one
// repair draw: one `repaired` event names the domain, its nodes and how many
// of them came back, where one event a node would give a pod's repair hundreds
// of lines that differ only in the node. Kept only while the engine logs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/campaign/campaign_event.hpp"

namespace myriad::sim::campaign {

class RepairIncidents {
 public:
  // A failure of `domain` `id`, nodes [first, first + count), sends nodes to
  // repair: those passed to `sent` until the next `open` belong to it.
  void open(std::string_view component, std::string_view domain, int id, int first, int count);
  // `node` leaves for repair under the incident opened last; a node already
  // under repair for another incident leaves that one (it comes back later).
  void sent(int node);
  // `node` is back at `time_s`. The nodes of an incident come back at one
  // time: the first of them returns the incident's event (the domain, its
  // nodes, and in `detail` how many came back when some are still under a
  // longer repair), the others nothing.
  [[nodiscard]] std::optional<CampaignEvent> back(int node, double time_s);
  // Incidents with nodes still under repair.
  [[nodiscard]] std::size_t open_incidents() const { return incidents_.size(); }

 private:
  struct Incident {
    std::string_view component;
    std::string_view domain;
    int id = -1;
    int first = 0;
    int count = 0;
    int pending = 0;        // its nodes under repair for it
    bool reported = false;  // its event was returned
  };
  void leave(std::uint64_t incident);

  std::map<std::uint64_t, Incident> incidents_;  // ordered: determinism needs no hash
  std::vector<std::uint64_t> of_node_;           // by node: its incident (0: none)
  std::uint64_t last_ = 0;                       // the incident opened last
};

}  // namespace myriad::sim::campaign
