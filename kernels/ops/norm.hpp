// Fused LayerNorm and RMSNorm over the last dimension, forward and backward, on
// the CPU in fp32 (fp32 or bf16 storage). Forward saves per-row statistics (mean, reciprocal
// standard deviation) for the backward, as fused GPU kernels do.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/norm_shape.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// x, y: [rows, hidden]; gamma, beta: [hidden]; mean, rstd: [rows] (saved for backward).
void layer_norm_forward_cpu(const NormShape& s, std::span<const float> x,
                            std::span<const float> gamma, std::span<const float> beta,
                            std::span<float> y, std::span<float> mean, std::span<float> rstd);
// dy, x, dx: [rows, hidden]; mean, rstd: [rows]; dgamma, dbeta: [hidden] (overwritten).
void layer_norm_backward_cpu(const NormShape& s, std::span<const float> dy,
                             std::span<const float> x, std::span<const float> gamma,
                             std::span<const float> mean, std::span<const float> rstd,
                             std::span<float> dx, std::span<float> dgamma, std::span<float> dbeta);

// y = x / sqrt(mean(x^2) + eps) * gamma. x, y: [rows, hidden]; rstd: [rows].
void rms_norm_forward_cpu(const NormShape& s, std::span<const float> x,
                          std::span<const float> gamma, std::span<float> y, std::span<float> rstd);
// dy, x, dx: [rows, hidden]; rstd: [rows]; dgamma: [hidden] (overwritten).
void rms_norm_backward_cpu(const NormShape& s, std::span<const float> dy, std::span<const float> x,
                           std::span<const float> gamma, std::span<const float> rstd,
                           std::span<float> dx, std::span<float> dgamma);

// bf16 storage, fp32 compute (bf16_paths.cpp): x, y, dy and dx are bf16, each output
// rounded once; gamma, beta, the saved statistics and dgamma, dbeta stay fp32
// (master parameters and their gradients).
void layer_norm_forward_cpu(const NormShape& s, std::span<const Bf16> x,
                            std::span<const float> gamma, std::span<const float> beta,
                            std::span<Bf16> y, std::span<float> mean, std::span<float> rstd);
void layer_norm_backward_cpu(const NormShape& s, std::span<const Bf16> dy, std::span<const Bf16> x,
                             std::span<const float> gamma, std::span<const float> mean,
                             std::span<const float> rstd, std::span<Bf16> dx,
                             std::span<float> dgamma, std::span<float> dbeta);
void rms_norm_forward_cpu(const NormShape& s, std::span<const Bf16> x, std::span<const float> gamma,
                          std::span<Bf16> y, std::span<float> rstd);
void rms_norm_backward_cpu(const NormShape& s, std::span<const Bf16> dy, std::span<const Bf16> x,
                           std::span<const float> gamma, std::span<const float> rstd,
                           std::span<Bf16> dx, std::span<float> dgamma);

// Memory-bound ops: forward reads x, writes y (elem_bytes each); backward reads dy, x, writes dx.
models::Op layer_norm_op(const NormShape& s, double elem_bytes);
models::Op rms_norm_op(const NormShape& s, double elem_bytes);

}  // namespace myriad::kernels::ops
