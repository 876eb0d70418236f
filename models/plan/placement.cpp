#include "models/plan/placement.hpp"

#include <algorithm>

namespace myriad::models {
namespace {

// A group of `size` ranks spaced `stride` apart, on nodes of `per_node_gpus`.
GroupSpan span(int size, long long stride, int per_node_gpus) {
  GroupSpan g;
  g.size = size;
  if (stride >= per_node_gpus) {
    g.per_node = 1;
  } else {
    g.per_node = static_cast<int>(std::min<long long>(size, per_node_gpus / stride));
  }
  g.per_node = std::max(1, g.per_node);
  g.nodes = std::max(1, (size + g.per_node - 1) / g.per_node);
  return g;
}

}  // namespace

GroupSpan group_span(GroupKind group, const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  const int gpn = s.cluster.gpus_per_node;
  switch (group) {
    case GroupKind::tp:
      return span(p.tp, 1, gpn);
    case GroupKind::cp:
      return span(p.cp, p.tp, gpn);
    case GroupKind::ep:
      return span(p.ep, p.tp, gpn);
    case GroupKind::dp:
      return span(p.dp, static_cast<long long>(p.tp) * p.cp, gpn);
    case GroupKind::pp:
      return span(p.pp, static_cast<long long>(p.tp) * p.cp * p.dp, gpn);
  }
  return {};
}

}  // namespace myriad::models
