#include "kernels/collectives/hierarchical.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "kernels/collectives/ring_steps.hpp"

namespace myriad::kernels::collectives {
namespace {

// One ring per node, through its local ranks; local rank l's shard is shard l.
std::vector<Ring> node_rings(int nodes, int ranks_per_node) {
  std::vector<Ring> rings(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    Ring& ring = rings[static_cast<std::size_t>(n)];
    for (int l = 0; l < ranks_per_node; ++l) {
      ring.members.push_back(n * ranks_per_node + l);
      ring.ranges.push_back({l * nodes, nodes});
    }
  }
  return rings;
}

// One ring per local index l, across the nodes, over the parts of shard l.
std::vector<Ring> cross_node_rings(int nodes, int ranks_per_node) {
  std::vector<Ring> rings(static_cast<std::size_t>(ranks_per_node));
  for (int l = 0; l < ranks_per_node; ++l) {
    Ring& ring = rings[static_cast<std::size_t>(l)];
    for (int n = 0; n < nodes; ++n) {
      ring.members.push_back(n * ranks_per_node + l);
      ring.ranges.push_back({l * nodes + n, 1});
    }
  }
  return rings;
}

}  // namespace

Schedule make_hierarchical_allreduce(int nranks, int ranks_per_node, std::int64_t bytes,
                                     int elem_bytes) {
  constexpr std::string_view kName = "make_hierarchical_allreduce";
  require_ranks(kName, nranks);
  require_at_least_one(kName, "ranks_per_node", ranks_per_node);
  require_bytes(kName, bytes, elem_bytes);
  if (nranks % ranks_per_node != 0) {
    throw std::invalid_argument(fmt::format(
        "{}: nranks ({}) is not a multiple of ranks_per_node ({})", kName, nranks, ranks_per_node));
  }
  const int nodes = nranks / ranks_per_node;
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.algorithm = CollectiveAlgorithm::hierarchical;
  spec.nranks = nranks;
  spec.bytes = bytes;
  spec.elem_bytes = elem_bytes;
  spec.ranks_per_node = ranks_per_node;
  ScheduleBuilder builder(spec, {ChunkLayout::even(bytes, nranks, elem_bytes)});
  const std::vector<Ring> inside = node_rings(nodes, ranks_per_node);
  const std::vector<Ring> across = cross_node_rings(nodes, ranks_per_node);
  append_ring_reduce_scatter(builder, inside);
  append_ring_reduce_scatter(builder, across);
  append_ring_allgather(builder, across);
  append_ring_allgather(builder, inside);
  return std::move(builder).finish();
}

}  // namespace myriad::kernels::collectives
