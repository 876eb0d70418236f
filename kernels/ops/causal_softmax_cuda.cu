#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/block_reduce.cuh"
#include "kernels/ops/causal_softmax_cuda.hpp"

namespace myriad::kernels::ops {

namespace {

// One block per row of [matrices * seq, seq]; row r is query i = r % seq, which sees keys 0..i.
__global__ void softmax_forward_kernel(SoftmaxShape s, const float* x, float* y) {
  __shared__ float shared[kThreadsPerBlock];
  for (std::int64_t row = blockIdx.x; row < s.matrices * s.seq; row += gridDim.x) {
    const std::int64_t i = row % s.seq;
    const float* xr = x + row * s.seq;
    float* yr = y + row * s.seq;
    float mx = -INFINITY;
    for (std::int64_t j = threadIdx.x; j <= i; j += blockDim.x) mx = fmaxf(mx, s.scale * xr[j]);
    mx = block_max(mx, shared);
    float sum = 0.0F;
    for (std::int64_t j = threadIdx.x; j <= i; j += blockDim.x) sum += expf(s.scale * xr[j] - mx);
    const float inv = 1.0F / block_sum(sum, shared);
    for (std::int64_t j = threadIdx.x; j < s.seq; j += blockDim.x) {
      yr[j] = j <= i ? expf(s.scale * xr[j] - mx) * inv : 0.0F;
    }
  }
}

// dx = scale * y * (dy - sum_j dy * y) over the visible keys, 0 above the diagonal.
__global__ void softmax_backward_kernel(SoftmaxShape s, const float* dy, const float* y,
                                        float* dx) {
  __shared__ float shared[kThreadsPerBlock];
  for (std::int64_t row = blockIdx.x; row < s.matrices * s.seq; row += gridDim.x) {
    const std::int64_t i = row % s.seq;
    const std::int64_t base = row * s.seq;
    float part = 0.0F;
    for (std::int64_t j = threadIdx.x; j <= i; j += blockDim.x) part += dy[base + j] * y[base + j];
    const float dot = block_sum(part, shared);
    for (std::int64_t j = threadIdx.x; j < s.seq; j += blockDim.x) {
      dx[base + j] = j <= i ? s.scale * y[base + j] * (dy[base + j] - dot) : 0.0F;
    }
  }
}

unsigned int row_blocks(const SoftmaxShape& s) {
  const std::string why = causal_softmax_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("causal_softmax_cuda: " + why);
  const std::int64_t rows = s.matrices * s.seq;
  return static_cast<unsigned int>(rows < 65535 ? rows : 65535);
}

}  // namespace

void causal_softmax_forward_cuda(const SoftmaxShape& s, const float* x, float* y,
                                 cudaStream_t stream) {
  softmax_forward_kernel<<<row_blocks(s), kThreadsPerBlock, 0, stream>>>(s, x, y);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void causal_softmax_backward_cuda(const SoftmaxShape& s, const float* dy, const float* y, float* dx,
                                  cudaStream_t stream) {
  softmax_backward_kernel<<<row_blocks(s), kThreadsPerBlock, 0, stream>>>(s, dy, y, dx);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
