// A point-to-point transfer as a schedule (pipeline-parallel activations and
// gradients): rank `src` sends its buffer to rank `dst`. The schedule spans
// ranks 0..max(src, dst); the others have no steps, and src == dst has
// nothing to do. Layout (shared): one chunk.
#pragma once

#include <cstdint>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// Throws std::invalid_argument on src < 0, dst < 0, bytes < 0, or bytes not a
// whole number of elem_bytes elements.
Schedule make_sendrecv(int src, int dst, std::int64_t bytes, int elem_bytes = 1);

}  // namespace myriad::kernels::collectives
