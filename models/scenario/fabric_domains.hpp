// Where a campaign's spine and uplink failures land: the switches of each tier
// of cluster.network and their up ports (issue 40 item 6).
//
// A rail-optimized fabric keeps each rail's switches apart (each takes one NIC
// of every node), and a multi-plane fabric copies its tiers per plane, so a
// node hangs under lanes = rails x planes switches of every tier. Above the
// leaves the wiring is a fat tree's: each switch of tier t - 1 has one up port
// to each of U(t-1) switches of tier t, and a switch of tier t reaches down(t)
// subtrees of tier t - 1. So a subtree of tier t holds M(t) = U(0) ... U(t-1)
// of its switches on each lane, and a switch of tier t failing takes one up
// port from one switch of tier t - 1 in each of the subtrees below it, on its
// lane.
#pragma once

#include <cstddef>

#include "models/scenario/cluster_spec.hpp"
#include "models/scenario/reliability_spec.hpp"

namespace myriad::models::scenario {

struct FabricTier {
  double nodes_per_subtree = 0;  // nodes under one subtree of this tier (a leaf's, a pod's)
  long long subtrees = 0;        // such subtrees over the cluster's nodes
  long long per_lane = 1;        // M(t): this tier's switches in a subtree, on one lane
  long long switches = 0;        // subtrees x lanes x per_lane
  int up_ports = 0;              // U(t) of each switch (0 at the top tier)
  int children = 0;              // down(t): subtrees of the tier below a switch reaches
};

// rails x planes (see the header).
int fabric_lanes(const ClusterSpec& c);
// Tier `tier` of the cluster's network (which must exist).
FabricTier fabric_tier(const ClusterSpec& c, std::size_t tier);
// The tier a process or event of `domain` takes when it names none: an uplink
// of a leaf (0), a spine above the leaves (1).
int default_fabric_tier(Domain domain);
// What a fabric process draws from: the up ports of tier `tier` (uplink) or its
// switches (spine); 0 where that tier has none (no such tier; the top tier has
// no up ports; spines start at tier 1).
long long fabric_units(const ClusterSpec& c, Domain domain, int tier);
// Whether the domain is a spine or an uplink: it stops no node, and slows the
// job while it is out.
[[nodiscard]] constexpr bool is_fabric_port(Domain d) {
  return d == Domain::spine || d == Domain::uplink;
}

}  // namespace myriad::models::scenario
