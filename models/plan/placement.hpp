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
};

// The span of the group of kind `group` holding rank 0 (every group of a kind
// spans alike).
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
