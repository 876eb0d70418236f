// Hierarchical all-reduce for nodes of several GPUs: a ring reduce-scatter
// inside each node, a ring all-reduce of each shard across the nodes (between
// the ranks with the same local index), and a ring all-gather inside each node.
// Only 1/ranks_per_node of the data crosses the inter-node network per rank.
//
// Ranks n * ranks_per_node .. (n + 1) * ranks_per_node - 1 form node n.
// Layout (shared): ranks_per_node shards of `nodes` chunks each; chunk
// l * nodes + m is part m of shard l, the shard local rank l reduces.
#pragma once

#include <cstdint>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// Throws std::invalid_argument on nranks < 1, ranks_per_node < 1, nranks not a
// multiple of ranks_per_node, bytes < 0, or bytes not whole elements.
Schedule make_hierarchical_allreduce(int nranks, int ranks_per_node, std::int64_t bytes,
                                     int elem_bytes = 1);

}  // namespace myriad::kernels::collectives
