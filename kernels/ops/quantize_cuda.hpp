// fp8 E4M3 quantize/dequantize on the GPU with group scales per token or per
// channel, bit-identical to quantize.hpp's CPU backend (same scale arithmetic,
// round to nearest even, saturation to +-448), and bf16 rounding. Device
// pointers, enqueued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/fp8_e4m3.hpp"
#include "kernels/ops/quant_shape.hpp"

namespace myriad::kernels::ops {

// x: [rows, cols] -> q: [rows, cols], scales: [quant_scale_count(s)].
void quantize_fp8_cuda(const QuantShape& s, const float* x, Fp8E4M3* q, float* scales,
                       cudaStream_t stream);
// q, scales as written by quantize_fp8_cuda -> x: [rows, cols].
void dequantize_fp8_cuda(const QuantShape& s, const Fp8E4M3* q, const float* scales, float* x,
                         cudaStream_t stream);

// bf16 compression, round to nearest even. x, q: [n].
void quantize_bf16_cuda(const float* x, Bf16* q, std::int64_t n, cudaStream_t stream);
void dequantize_bf16_cuda(const Bf16* q, float* x, std::int64_t n, cudaStream_t stream);

}  // namespace myriad::kernels::ops
