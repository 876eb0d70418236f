// The memory axes of the layout search (PlanOptions::partial_recompute and
// ::offload): a layout estimated as the search enumerates it, taken again with the
// fewest layers recomputed, or the layers or modules offloaded, that fit it.
#pragma once

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/planning/layout_search.hpp"

namespace myriad::sim {

// PlanOptions::partial_recompute: `l`, a layout of `s` recomputing every layer
// within the headroom, takes the fewest layers of each chunk recomputed that
// still fit it; whether it did.
bool fewest_recomputed(const models::scenario::Scenario& s, const DeviceProfile& profile,
                       double headroom, PlannedLayout& l);

// PlanOptions::offload: `l`, a layout of `s` above the headroom, takes the
// faster of the fewest layers offloaded that fit it (one stage, no recomputation)
// and the modules offloaded that fit it (offloaded_modules_that_fit; the layers at
// equal steps); whether it did.
bool fewest_offloaded(const models::scenario::Scenario& s, const DeviceProfile& profile,
                      double headroom, PlannedLayout& l);

}  // namespace myriad::sim
