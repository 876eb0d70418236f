// Broadcast as a pipelined chain: root -> root + 1 -> ... -> root + n - 1
// (mod n), the buffer cut into `chunks` chunks that follow each other down
// the chain, so that with many chunks every link is busy at once.
// Layout (shared): `chunks` even chunks of the buffer.
#pragma once

#include <cstdint>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// Throws std::invalid_argument on nranks < 1, root outside [0, nranks),
// chunks < 1, bytes < 0, or bytes not a whole number of elem_bytes elements.
Schedule make_broadcast(int nranks, int root, std::int64_t bytes, int chunks = 1,
                        int elem_bytes = 1);

}  // namespace myriad::kernels::collectives
