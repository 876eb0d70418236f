// Sum and maximum of one float per thread over a block of kThreadsPerBlock
// threads, for the row-wise CUDA kernels (norms, softmax). Every thread of the
// block must call them.
#pragma once

#include "kernels/ops/launch.cuh"

namespace myriad::kernels::ops {

// shared: kThreadsPerBlock floats of shared memory. Returns the sum to every thread.
__device__ inline float block_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int half = kThreadsPerBlock / 2; half > 0; half >>= 1U) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

// shared: kThreadsPerBlock floats of shared memory. Returns the maximum to every thread.
__device__ inline float block_max(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int half = kThreadsPerBlock / 2; half > 0; half >>= 1U) {
    if (threadIdx.x < half)
      shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const float most = shared[0];
  __syncthreads();
  return most;
}

}  // namespace myriad::kernels::ops
