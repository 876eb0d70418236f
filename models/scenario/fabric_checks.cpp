#include "models/scenario/fabric_checks.hpp"

#include <fmt/format.h>

#include "models/scenario/checker.hpp"
#include "models/scenario/fabric_domains.hpp"

namespace myriad::models::scenario {
namespace {

// A spine's or an uplink's tier: one with such switches or up ports. `tier` is
// the resolved one; `at` and `key` where the tier (or the domain) was written.
void check_fabric_tier(const Scenario& s, Domain domain, int tier, const Location& at,
                       const std::string& key, Diagnostics& d) {
  const auto tiers = static_cast<int>(s.cluster.network.tiers.size());
  if (tiers == 0) {
    d.error(at, key, "spines and uplinks need cluster.network's tiers");
  } else if (tier >= tiers) {
    d.error(at, key,
            fmt::format("tier {} does not exist: cluster.network has {} (0 to {})", tier, tiers,
                        tiers - 1));
  } else if (domain == Domain::spine && tier == 0) {
    d.error(at, key,
            "a spine is a switch above the leaves: tier 1 or above (a leaf failing takes its "
            "nodes down: domain leaf)");
  } else if (domain == Domain::uplink && tier == tiers - 1) {
    d.error(at, key,
            fmt::format("tier {} is the top tier: its switches have no up ports (a switch of it "
                        "failing is domain spine, tier {})",
                        tier, tier));
  }
}

}  // namespace

// What spine and uplink processes and events need beyond the others': a tier
// they have (and a tier only for them), and a repair.
void check_fabric_domain(const Scenario& s, const std::string& path, Domain domain, int tier,
                         bool replace, const Location& file, Diagnostics& d) {
  const bool given_tier = written(s, path + ".tier");
  if (!is_fabric_port(domain)) {
    if (given_tier) {
      d.error(written_at(s, path + ".tier", file), path + ".tier",
              "applies to domain spine and uplink");
    }
    return;
  }
  const std::string key = path + (given_tier ? ".tier" : ".domain");
  check_fabric_tier(s, domain, tier < 0 ? default_fabric_tier(domain) : tier,
                    written_at(s, key, file), key, d);
  if (!replace) {
    d.error(written_at(s, path + ".replace_node", file), path + ".replace_node",
            fmt::format("a {} is out until it is repaired: replace_node false (or component "
                        "software) does not apply to domain {}",
                        domain_name(domain), domain_name(domain)));
  }
}

// A spine's or an uplink's event: its tier (a replayed row's, which has no
// keys), its id among the tier's switches or up ports, a time, and no slowdown.
void check_fabric_event(const Scenario& s, const InjectedEventSpec& e, const std::string& path,
                        const std::string& prefix, const std::string& name,
                        const std::function<Location(const std::string&)>& where, Diagnostics& d) {
  const auto domain = std::string(domain_name(e.domain));
  const int tier = e.tier < 0 ? default_fabric_tier(e.domain) : e.tier;
  if (prefix.empty()) check_fabric_tier(s, e.domain, tier, where(""), name, d);
  const long long units = fabric_units(s.cluster, e.domain, tier);
  if (units > 0 && e.id >= units) {
    d.error(where(".id"), name,
            fmt::format("{} {} does not exist: tier {} has {} {} (0 to {})", domain, e.id, tier,
                        units, e.domain == Domain::spine ? "switches" : "up ports", units - 1));
  }
  if (e.at_s < 0) d.error(where(".at"), name, "an event's time must be 0 or later");
  for (const char* key : {".slowdown", ".until"}) {
    if (!prefix.empty() && given(s, path + key)) {
      d.error(where(key), path + key, "applies to a slow node (node: N), not a " + domain);
    }
  }
}

}  // namespace myriad::models::scenario
