// LayerNorm and RMSNorm on the GPU, fp32 compute (fp32 or bf16 storage), forward and backward, same
// formulas and saved statistics as norm.hpp's CPU backend. One block per row; dgamma and dbeta by
// partial sums over chunks of rows, then a sum of the chunks per column in order (deterministic,
// no atomics). Device pointers, enqueued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/norm_shape.hpp"

namespace myriad::kernels::ops {

// x, y: [rows, hidden]; gamma, beta: [hidden]; mean, rstd: [rows].
void layer_norm_forward_cuda(const NormShape& s, const float* x, const float* gamma,
                             const float* beta, float* y, float* mean, float* rstd,
                             cudaStream_t stream);
// dy, x, dx: [rows, hidden]; mean, rstd: [rows]; dgamma, dbeta: [hidden].
void layer_norm_backward_cuda(const NormShape& s, const float* dy, const float* x,
                              const float* gamma, const float* mean, const float* rstd, float* dx,
                              float* dgamma, float* dbeta, cudaStream_t stream);
// x, y: [rows, hidden]; gamma: [hidden]; rstd: [rows].
void rms_norm_forward_cuda(const NormShape& s, const float* x, const float* gamma, float* y,
                           float* rstd, cudaStream_t stream);
// dy, x, dx: [rows, hidden]; rstd: [rows]; dgamma: [hidden].
void rms_norm_backward_cuda(const NormShape& s, const float* dy, const float* x, const float* gamma,
                            const float* rstd, float* dx, float* dgamma, cudaStream_t stream);

// bf16 storage, fp32 compute: x, y, dy, dx bf16 (each output rounded once); gamma,
// beta, statistics, dgamma, dbeta fp32, as norm.hpp's bf16 CPU path.
void layer_norm_forward_cuda(const NormShape& s, const Bf16* x, const float* gamma,
                             const float* beta, Bf16* y, float* mean, float* rstd,
                             cudaStream_t stream);
void layer_norm_backward_cuda(const NormShape& s, const Bf16* dy, const Bf16* x, const float* gamma,
                              const float* mean, const float* rstd, Bf16* dx, float* dgamma,
                              float* dbeta, cudaStream_t stream);
void rms_norm_forward_cuda(const NormShape& s, const Bf16* x, const float* gamma, Bf16* y,
                           float* rstd, cudaStream_t stream);
void rms_norm_backward_cuda(const NormShape& s, const Bf16* dy, const Bf16* x, const float* gamma,
                            const float* rstd, Bf16* dx, float* dgamma, cudaStream_t stream);

}  // namespace myriad::kernels::ops
