// Where a parallel group's ranks sit. Ranks are laid out in Megatron-LM's
// default order, tp fastest, then cp, then dp (experts drawn from a stage's
// tp x cp x dp ranks with stride tp), then pp; nodes take consecutive ranks.
#pragma once

#include "models/plan/collective.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models {

struct GroupSpan {
  int size = 1;      // ranks in the group
  int per_node = 1;  // of them in one node
  int nodes = 1;     // nodes the group spans
};

GroupSpan group_span(GroupKind group, const scenario::Scenario& s);

}  // namespace myriad::models
