// Column sums in two stages, for the parameter gradients of row-wise kernels
// (norms' dgamma and dbeta, bias+GeLU's dbias): the rows are cut into chunks, a
// block sums its chunk of rows for its columns into partial[chunk][column], and
// column_sum_kernel adds the chunks of each column in order. Deterministic (no
// atomics), and the rows are spread over the whole GPU: one thread per column
// over every row ran the norms' dgamma at 2-6 % of the copy bandwidth on an H200
// (2026-11-30).
#pragma once

#include <cstdint>

#include "kernels/ops/launch.cuh"

namespace myriad::kernels::ops {

// Chunks of rows for the first stage: up to kMaxChunks, each of rows_per_chunk rows.
constexpr std::int64_t kMaxColumnChunks = 128;
inline std::int64_t column_chunks(std::int64_t rows) {
  return rows < kMaxColumnChunks ? rows : kMaxColumnChunks;
}

__global__ inline void column_sum_kernel(std::int64_t chunks, std::int64_t columns,
                                         const float* partial, float* out) {
  for (std::int64_t j = grid_index(); j < columns; j += grid_stride()) {
    float sum = 0.0F;
    for (std::int64_t c = 0; c < chunks; ++c) sum += partial[c * columns + j];
    out[j] = sum;
  }
}

}  // namespace myriad::kernels::ops
