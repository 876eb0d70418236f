// All-to-all by pairwise exchange: at step k (1 <= k < n) rank r sends its
// block for rank r + k and receives the block from rank r - k (mod n); its own
// block is a local copy. The uneven form (all-to-all-v) carries MoE token
// traffic, where each pair exchanges a different number of bytes.
//
// Layout of rank r's buffer: 2n chunks, an input half then an output half;
// chunk j (j < n) is the block r sends to j, chunk n + i the block r receives
// from i. Blocks of zero bytes are not sent.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// Throws std::invalid_argument on nranks < 1, bytes_per_pair < 0, or
// bytes_per_pair not a whole number of elem_bytes elements.
Schedule make_alltoall(int nranks, std::int64_t bytes_per_pair, int elem_bytes = 1);

// matrix[i][j]: the bytes rank i sends to rank j. Throws std::invalid_argument
// unless the matrix is square, non-empty, with entries >= 0 of whole elements.
Schedule make_alltoallv(const std::vector<std::vector<std::int64_t>>& matrix, int elem_bytes = 1);

}  // namespace myriad::kernels::collectives
