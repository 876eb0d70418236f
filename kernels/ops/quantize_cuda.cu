#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/quantize_cuda.hpp"

namespace myriad::kernels::ops {

namespace {

constexpr float kFp8Max = 448.0F;

struct Groups {
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t group;
  bool per_token;
  std::int64_t per_row;  // scales per row (per token)

  __device__ std::int64_t scale_of(std::int64_t r, std::int64_t c) const {
    return per_token ? r * per_row + c / group : (r / group) * cols + c;
  }
};

Groups groups_of(const QuantShape& s) {
  const std::string why = quantize_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("quantize_cuda: " + why);
  return Groups{s.rows, s.cols, s.group, s.scaling == QuantScaling::per_token,
                (s.cols + s.group - 1) / s.group};
}

// One thread per group: amax over its (at most `group`) elements, then amax / 448.
__global__ void scales_kernel(Groups g, const float* x, float* scales, std::int64_t count) {
  for (std::int64_t sidx = grid_index(); sidx < count; sidx += grid_stride()) {
    const std::int64_t r0 = g.per_token ? sidx / g.per_row : (sidx / g.cols) * g.group;
    const std::int64_t c0 = g.per_token ? (sidx % g.per_row) * g.group : sidx % g.cols;
    const std::int64_t r1 = g.per_token ? r0 + 1 : min(g.rows, r0 + g.group);
    const std::int64_t c1 = g.per_token ? min(g.cols, c0 + g.group) : c0 + 1;
    float amax = 0.0F;
    for (std::int64_t r = r0; r < r1; ++r) {
      for (std::int64_t c = c0; c < c1; ++c) amax = fmaxf(amax, fabsf(x[r * g.cols + c]));
    }
    scales[sidx] = amax > 0.0F ? amax / kFp8Max : 1.0F;
  }
}

__global__ void encode_kernel(Groups g, const float* x, const float* scales,
                              __nv_fp8_storage_t* q) {
  const std::int64_t n = g.rows * g.cols;
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float scaled = x[i] / scales[g.scale_of(i / g.cols, i % g.cols)];
    q[i] = __nv_cvt_float_to_fp8(scaled, __NV_SATFINITE, __NV_E4M3);
  }
}

__global__ void decode_kernel(Groups g, const __nv_fp8_storage_t* q, const float* scales,
                              float* x) {
  const std::int64_t n = g.rows * g.cols;
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const __half h(__nv_cvt_fp8_to_halfraw(q[i], __NV_E4M3));
    x[i] = __half2float(h) * scales[g.scale_of(i / g.cols, i % g.cols)];
  }
}

__global__ void to_bf16_kernel(const float* x, __nv_bfloat16* q, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) q[i] = __float2bfloat16_rn(x[i]);
}

__global__ void from_bf16_kernel(const __nv_bfloat16* q, float* x, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) x[i] = __bfloat162float(q[i]);
}

}  // namespace

void quantize_fp8_cuda(const QuantShape& s, const float* x, Fp8E4M3* q, float* scales,
                       cudaStream_t stream) {
  static_assert(sizeof(Fp8E4M3) == sizeof(__nv_fp8_storage_t), "Fp8E4M3 stores one byte");
  const Groups g = groups_of(s);
  const std::int64_t count = quant_scale_count(s);
  scales_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(g, x, scales, count);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  encode_kernel<<<blocks_for(s.rows * s.cols), kThreadsPerBlock, 0, stream>>>(
      g, x, scales, reinterpret_cast<__nv_fp8_storage_t*>(q));
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void dequantize_fp8_cuda(const QuantShape& s, const Fp8E4M3* q, const float* scales, float* x,
                         cudaStream_t stream) {
  const Groups g = groups_of(s);
  decode_kernel<<<blocks_for(s.rows * s.cols), kThreadsPerBlock, 0, stream>>>(
      g, reinterpret_cast<const __nv_fp8_storage_t*>(q), scales, x);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void quantize_bf16_cuda(const float* x, Bf16* q, std::int64_t n, cudaStream_t stream) {
  static_assert(sizeof(Bf16) == sizeof(__nv_bfloat16), "Bf16 stores the bits of a bfloat16");
  to_bf16_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      x, reinterpret_cast<__nv_bfloat16*>(q), n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void dequantize_bf16_cuda(const Bf16* q, float* x, std::int64_t n, cudaStream_t stream) {
  from_bf16_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(q), x, n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
