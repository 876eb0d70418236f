// What a spine or uplink process or event needs beyond the others' checks
// (reliability_checks.cpp): a tier with such switches or up ports, a tier only
// for them, an id among the tier's, a repair, no slowdown.
#pragma once

#include <functional>
#include <string>

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

// A process's or given event's domain, tier and replace_node at `path`: for
// another domain, a tier is an error.
void check_fabric_domain(const Scenario& s, const std::string& path, Domain domain, int tier,
                         bool replace, const Location& file, Diagnostics& d);
// A spine's or uplink's event (a replayed row's when `prefix` is empty), its
// problems reported at where(key).
void check_fabric_event(const Scenario& s, const InjectedEventSpec& e, const std::string& path,
                        const std::string& prefix, const std::string& name,
                        const std::function<Location(const std::string&)>& where, Diagnostics& d);

}  // namespace myriad::models::scenario
