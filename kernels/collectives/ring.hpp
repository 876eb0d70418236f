// Ring collectives as NCCL runs them: `channels` rings, each over its own
// chunks, all through the ranks in order 0 -> 1 -> ... -> n-1 -> 0.
//
// Layout (shared by every rank): the buffer of `bytes` is cut evenly into
// nranks * channels chunks; chunk s * channels + c is shard s's part on
// channel c. Reduce-scatter leaves rank r with the reduction of shard r;
// all-gather starts from rank r's shard r. Per channel and rank, reduce-scatter
// and all-gather take n - 1 steps (a send and a receive each), all-reduce 2(n - 1).
#pragma once

#include <cstdint>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// Each throws std::invalid_argument on nranks < 1, channels < 1, bytes < 0, or
// bytes not a whole number of elem_bytes elements.
Schedule make_ring_allreduce(int nranks, std::int64_t bytes, int channels = 1, int elem_bytes = 1);
Schedule make_ring_reduce_scatter(int nranks, std::int64_t bytes, int channels = 1,
                                  int elem_bytes = 1);
Schedule make_ring_allgather(int nranks, std::int64_t bytes, int channels = 1, int elem_bytes = 1);

}  // namespace myriad::kernels::collectives
