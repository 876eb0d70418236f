#include <cuda_bf16.h>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/reduce_cuda.hpp"

namespace myriad::kernels::ops {

namespace {

__device__ float apply(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::sum:
      return a + b;
    case ReduceOp::max:
      return fmaxf(a, b);
    case ReduceOp::min:
      return fminf(a, b);
  }
  return a + b;
}

__global__ void reduce_f32_kernel(ReduceOp op, float* dst, const float* src, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) dst[i] = apply(op, dst[i], src[i]);
}

__global__ void reduce_bf16_kernel(ReduceOp op, __nv_bfloat16* dst, const __nv_bfloat16* src,
                                   std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    dst[i] = __float2bfloat16_rn(apply(op, __bfloat162float(dst[i]), __bfloat162float(src[i])));
  }
}

}  // namespace

void reduce_cuda(ReduceOp op, float* dst, const float* src, std::int64_t n, cudaStream_t stream) {
  reduce_f32_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(op, dst, src, n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void reduce_cuda(ReduceOp op, Bf16* dst, const Bf16* src, std::int64_t n, cudaStream_t stream) {
  static_assert(sizeof(Bf16) == sizeof(__nv_bfloat16), "Bf16 stores the bits of a bfloat16");
  reduce_bf16_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      op, reinterpret_cast<__nv_bfloat16*>(dst), reinterpret_cast<const __nv_bfloat16*>(src), n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
