// Launch shape shared by the elementwise CUDA kernels: 256 threads a block,
// grid-stride loops, the grid capped so that any n fits.
#pragma once

#include <cstdint>

namespace myriad::kernels::ops {

constexpr int kThreadsPerBlock = 256;

inline unsigned int blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t most = 65535;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > most ? most : blocks));
}

// Index of this thread and stride of the grid, 64-bit.
__device__ inline std::int64_t grid_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace myriad::kernels::ops
