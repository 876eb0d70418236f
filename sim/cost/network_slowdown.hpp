// How much the fat tree's oversubscription slows the flows of one kind of group
// (the data-parallel rings, the pipeline transfers) when every group of that kind
// sends at once, as they do in lockstep. For each tier below the top, the share of
// a subtree's NIC bandwidth whose flows leave the subtree, times the
// oversubscription of that tier and the tiers below it (the uplinks a subtree
// has, over its NICs): above 1, the uplinks are the bottleneck and every flow
// leaving gets that much less than its NIC rate. The largest over tiers and
// subtrees. A ring's edges rarely leave a subtree (one per ring and subtree), and
// the stages' rings send at different times, so rings are rarely slowed;
// pipeline transfers between stages placed side by side all leave together, and
// are.
#pragma once

#include <string>

#include "models/plan/collective.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::sim {

struct NetworkSlowdown {
  double factor = 1;   // >= 1: the flows' NIC rate is divided by it
  int tier = -1;       // the tier whose uplinks bind; -1: none
  double leaving = 0;  // at that tier, the share of a subtree's NIC bandwidth leaving it
  double uplinks = 1;  // and the subtree's uplink bandwidth over its NIC bandwidth
};

// For the data-parallel (ring neighbours) and pipeline (next stage) traffic of
// the scenario's placement; other kinds: no slowdown (all-to-alls are priced on
// their own, comm_cost.hpp).
NetworkSlowdown network_slowdown(const scenario::Scenario& s, models::GroupKind group);

// Whether flows of a job on this cluster can slow each other: a tier below the
// one that joins all its nodes hands its uplinks less than its NICs carry.
bool oversubscribed_below_join(const scenario::ClusterSpec& cluster);

// "pipeline transfers: 100 % of a leaf's NIC bandwidth leaves it through 1/3 as
// much uplink bandwidth: 3.00x slower": for reports; empty without slowdown.
std::string describe(const NetworkSlowdown& n, const scenario::Scenario& s,
                     models::GroupKind group);

}  // namespace myriad::sim
