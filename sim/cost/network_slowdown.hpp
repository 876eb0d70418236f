// How much the fat tree's oversubscription slows the flows of one kind of group
// (the data-parallel rings, the pipeline transfers) when every group of that kind
// sends at once, as they do in lockstep. For each tier below the top, the share of
// a subtree's NIC bandwidth whose flows leave the subtree, times the
// oversubscription of that tier and the tiers below it (the uplinks a subtree
// has, over its NICs): above 1, the uplinks are the bottleneck and every flow
// leaving gets that much less than its NIC rate. The largest over tiers and
// subtrees. A ring's edges rarely leave a subtree (one per ring and subtree);
// the stages reduce their gradients at different times (the last stage first),
// but gather their parameters together at the start of the step, so a subtree
// holding the ends of two stages' rings carries both (a ring runs at its slowest
// edge); a stage's pipeline transfers, one per replica, all leave together,
// a forward pass after the previous stage's. Under ECMP the flows leaving each
// subtree are hashed onto its up ports, and every tier below the top can slow
// them, oversubscribed or not: the busiest port of all the subtrees sending at
// once sets the pace (sim/cost/ecmp.hpp).
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
  // Under ECMP (cluster.network.load_balancing), `factor` is the expectation over
  // the hash of the busiest up port's slowdown (sim/cost/ecmp.hpp); these are what
  // perfect balancing would give at that tier, and the 10th and 90th percentiles.
  bool hashed = false;
  double balanced = 1;
  double low = 1;
  double high = 1;
  double flows_per_port = 0;  // at that tier: flows over up ports (the mean load)
};

// Which traffic: the data-parallel rings as the stages gather their parameters
// (all stages at once) or reduce their gradients (one stage at a time), or the
// pipeline transfers (to the next stage).
enum class Traffic { dp_gather, dp_reduce, pp };

// For the scenario's placement; other kinds: no slowdown (all-to-alls are priced
// on their own, comm_cost.hpp).
NetworkSlowdown network_slowdown(const models::scenario::Scenario& s, Traffic traffic);

// Whether flows of a job on this cluster can slow each other: a tier below the
// one that joins all its nodes hands its uplinks less than its NICs carry.
bool oversubscribed_below_join(const models::scenario::ClusterSpec& cluster);

// "pipeline transfers: 100 % of a leaf's NIC bandwidth leaves it through 1/3 as
// much uplink bandwidth: 3.00x slower": for reports; empty without slowdown.
std::string describe(const NetworkSlowdown& n, const models::scenario::Scenario& s,
                     Traffic traffic);

}  // namespace myriad::sim
