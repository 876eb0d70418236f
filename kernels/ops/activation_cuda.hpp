// Activations on the GPU, fp32 compute, same formulas as activation.hpp's CPU
// backend: GeLU (tanh approximation), SwiGLU and the fused bias + GeLU, forward
// and backward, with fp32 or bf16 storage (fp32 bias and dbias). Device
// pointers, n elements each, enqueued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/ops/bf16.hpp"

namespace myriad::kernels::ops {

void gelu_forward_cuda(const float* x, float* y, std::int64_t n, cudaStream_t stream);
void gelu_backward_cuda(const float* dy, const float* x, float* dx, std::int64_t n,
                        cudaStream_t stream);
void swiglu_forward_cuda(const float* gate, const float* up, float* y, std::int64_t n,
                         cudaStream_t stream);
void swiglu_backward_cuda(const float* dy, const float* gate, const float* up, float* dgate,
                          float* dup, std::int64_t n, cudaStream_t stream);

// bf16 storage, fp32 compute, each output rounded once (activation.hpp's bf16 CPU path).
void gelu_forward_cuda(const Bf16* x, Bf16* y, std::int64_t n, cudaStream_t stream);
void gelu_backward_cuda(const Bf16* dy, const Bf16* x, Bf16* dx, std::int64_t n,
                        cudaStream_t stream);
void swiglu_forward_cuda(const Bf16* gate, const Bf16* up, Bf16* y, std::int64_t n,
                         cudaStream_t stream);
void swiglu_backward_cuda(const Bf16* dy, const Bf16* gate, const Bf16* up, Bf16* dgate, Bf16* dup,
                          std::int64_t n, cudaStream_t stream);

// y = gelu(x + bias). x, y: [rows, cols]; bias: [cols].
void bias_gelu_forward_cuda(const float* x, const float* bias, float* y, std::int64_t rows,
                            std::int64_t cols, cudaStream_t stream);
// dy, x, dx: [rows, cols]; bias, dbias: [cols] (dbias: column sums of dx, one thread a column).
void bias_gelu_backward_cuda(const float* dy, const float* x, const float* bias, float* dx,
                             float* dbias, std::int64_t rows, std::int64_t cols,
                             cudaStream_t stream);
// bf16 storage: x, y, dy, dx bf16; bias, dbias fp32 (dbias sums the fp32 dx).
void bias_gelu_forward_cuda(const Bf16* x, const float* bias, Bf16* y, std::int64_t rows,
                            std::int64_t cols, cudaStream_t stream);
void bias_gelu_backward_cuda(const Bf16* dy, const Bf16* x, const float* bias, Bf16* dx,
                             float* dbias, std::int64_t rows, std::int64_t cols,
                             cudaStream_t stream);

}  // namespace myriad::kernels::ops
