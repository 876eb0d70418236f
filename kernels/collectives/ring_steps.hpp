// Shared by the ring and hierarchical generators, not part of the public API:
// the steps of a ring reduce-scatter and a ring all-gather, as NCCL's runRing
// performs them, over any ring of ranks and any chunk ranges.
#pragma once

#include <vector>

#include "kernels/collectives/schedule_builder.hpp"

namespace myriad::kernels::collectives {

// A ring: members[p] sends to members[p + 1] (mod size) on `channel`;
// ranges[p] is position p's shard.
struct Ring {
  std::vector<int> members;
  std::vector<ChunkRange> ranges;  // one per member
  int channel = 0;
};

// Reduce-scatter, size - 1 steps: at step k, position p sends shard p - k - 1
// and receives and reduces shard p - k - 2 (mod size), so that position p ends
// with the full reduction of its own shard. Rings are interleaved step by
// step, so that a rank's channels advance together.
void append_ring_reduce_scatter(ScheduleBuilder& builder, const std::vector<Ring>& rings);

// All-gather, size - 1 steps: at step k, position p sends shard p - k and
// receives shard p - k - 1 (mod size), so that every position ends with every
// shard. Position p starts with its own shard.
void append_ring_allgather(ScheduleBuilder& builder, const std::vector<Ring>& rings);

}  // namespace myriad::kernels::collectives
