// Where a parallel group's ranks sit. Ranks are laid out in the scenario's
// parallelism.placement order, fastest first: tp, then cp, then dp and pp in
// Megatron-LM's order (tp-cp-dp-pp, the default) or pp before dp
// (tp-cp-pp-dp); experts are drawn from a stage's cp x dp ranks, cp first.
// Nodes take consecutive ranks.
#pragma once

#include "models/plan/collective.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models {

struct GroupSpan {
  int size = 1;      // ranks in the group
  int per_node = 1;  // most of them in one node
  int nodes = 1;     // nodes the group spans
  // Nodes from the group's first to its last, inclusive: as many as `nodes` where
  // the group's nodes are consecutive, more where they are strided (dp outermost
  // in tp-cp-pp-dp), so that the farthest pair sits under a higher tier. 0: as nodes.
  int reach = 0;
  // The same for the farthest two consecutive members, what a transfer between
  // neighbouring pipeline stages crosses. 0: as nodes.
  int neighbour_reach = 0;
  // Whether each node it spans holds its members at the same local ranks, so on
  // the same rails (NIC i of a node on rail i): a ring or all-to-all between its
  // nodes can stay on each member's rail. Worked out on rail-only fabrics only
  // (the only ones where it changes a price); true elsewhere.
  bool rails_match = true;
  [[nodiscard]] int reach_nodes() const { return reach > nodes ? reach : nodes; }
  [[nodiscard]] int neighbour_nodes() const {
    return neighbour_reach > 0 ? neighbour_reach : nodes;
  }
};

// The span of a group of kind `group`: tp and cp groups, the most spread of the
// kind's (a group whose size or stride does not divide a node straddles nodes where
// others do not, and the collective waits for it); the others, the group holding
// rank 0 (each of those kinds spans alike in the layouts the step engine plays).
GroupSpan group_span(GroupKind group, const scenario::Scenario& s);

// A rank group: the tp x cp ranks of one pipeline stage and data-parallel replica.
struct RankGroup {
  int stage = 0;
  int replica = 0;
};

// The node holding a rank group's first GPU.
int first_node(const scenario::Scenario& s, RankGroup g);
// The rank group holding a node's first GPU.
RankGroup group_on_node(const scenario::Scenario& s, int node);

}  // namespace myriad::models
