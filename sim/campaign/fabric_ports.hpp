// The fabric's up ports during a campaign (issue 40 item 6): which spines and
// up ports are out, and how many up ports the worst switch of each tier has
// lost (models/scenario/fabric_domains.hpp places them). A synchronous step
// goes at the pace of the subtree that lost the most, so the step time is that
// of the fabric with cluster.network.tiers[i].uplinks_down set to it (the
// scenario's own what-if added); a switch with none left cuts its nodes off.
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/scenario/fabric_domains.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::sim::campaign {

class FabricPorts {
 public:
  explicit FabricPorts(const models::scenario::Scenario& s);

  // Unit `unit` (a switch for spine, an up port for uplink; fabric_units) of
  // tier `tier` goes out: false where it is out already.
  bool fail(models::scenario::Domain domain, int tier, long long unit);
  // It is back (nothing where it was not out).
  void repair(models::scenario::Domain domain, int tier, long long unit);

  // By tier: up ports out of service on its worst switch, the scenario's own
  // uplinks_down included (what the step time is priced at).
  [[nodiscard]] const std::vector<int>& uplinks_down() const { return worst_; }
  // Whether any spine or up port is out.
  [[nodiscard]] bool degraded() const { return !out_.empty(); }
  // Whether some switch has none of its up ports left.
  [[nodiscard]] bool cut_off() const;
  // "tier 0: 2 of 32 up ports out on the worst switch", for the event log.
  [[nodiscard]] std::string describe(int tier) const;
  // The tier whose switches lose up ports when a unit of `domain` at `tier` fails.
  [[nodiscard]] static int losing_tier(models::scenario::Domain domain, int tier) {
    return domain == models::scenario::Domain::spine ? tier - 1 : tier;
  }

 private:
  void change(models::scenario::Domain domain, int tier, long long unit, int by);
  int lanes_ = 1;
  std::vector<models::scenario::FabricTier> tiers_;
  std::vector<int> base_;               // the scenario's uplinks_down, by tier
  std::vector<std::vector<int>> down_;  // by tier, by switch: up ports out (sized on first use)
  // By tier, by count: how many switches have that many up ports out (what the
  // most on one switch is read from without a pass over a 100k-GPU tier's).
  std::vector<std::vector<long long>> switches_with_;
  std::vector<int> most_;                          // by tier: the most on one switch
  std::vector<int> worst_;                         // by tier: base + most
  std::set<std::tuple<int, int, long long>> out_;  // (domain, tier, unit)
};

}  // namespace myriad::sim::campaign
