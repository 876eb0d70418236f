// Activations on the CPU in fp32 (fp32 or bf16 storage), forward and backward: GeLU (tanh
// approximation), SwiGLU (silu(gate) * up), and GeLU with a fused bias add.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/ops/bf16.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// x, y: [n]
void gelu_forward_cpu(std::span<const float> x, std::span<float> y);
// dy, x, dx: [n]
void gelu_backward_cpu(std::span<const float> dy, std::span<const float> x, std::span<float> dx);

// gate, up, y: [n]; y = silu(gate) * up
void swiglu_forward_cpu(std::span<const float> gate, std::span<const float> up, std::span<float> y);
// dy, gate, up, dgate, dup: [n]
void swiglu_backward_cpu(std::span<const float> dy, std::span<const float> gate,
                         std::span<const float> up, std::span<float> dgate, std::span<float> dup);

// y = gelu(x + bias). x, y: [rows, cols]; bias: [cols].
void bias_gelu_forward_cpu(std::int64_t rows, std::int64_t cols, std::span<const float> x,
                           std::span<const float> bias, std::span<float> y);
// dy, x, dx: [rows, cols]; bias, dbias: [cols] (dbias overwritten with the column sums).
void bias_gelu_backward_cpu(std::int64_t rows, std::int64_t cols, std::span<const float> dy,
                            std::span<const float> x, std::span<const float> bias,
                            std::span<float> dx, std::span<float> dbias);

// bf16 storage, fp32 compute (bf16_paths.cpp): same formulas, every input widened,
// every output rounded once.
void gelu_forward_cpu(std::span<const Bf16> x, std::span<Bf16> y);
void gelu_backward_cpu(std::span<const Bf16> dy, std::span<const Bf16> x, std::span<Bf16> dx);
void swiglu_forward_cpu(std::span<const Bf16> gate, std::span<const Bf16> up, std::span<Bf16> y);
void swiglu_backward_cpu(std::span<const Bf16> dy, std::span<const Bf16> gate,
                         std::span<const Bf16> up, std::span<Bf16> dgate, std::span<Bf16> dup);
// x, y, dy, dx bf16; bias and dbias fp32 (dbias sums the fp32 dx, before rounding).
void bias_gelu_forward_cpu(std::int64_t rows, std::int64_t cols, std::span<const Bf16> x,
                           std::span<const float> bias, std::span<Bf16> y);
void bias_gelu_backward_cpu(std::int64_t rows, std::int64_t cols, std::span<const Bf16> dy,
                            std::span<const Bf16> x, std::span<const float> bias,
                            std::span<Bf16> dx, std::span<float> dbias);

// Memory-bound ops over n output elements of elem_bytes each.
models::Op gelu_op(std::int64_t n, double elem_bytes);
models::Op swiglu_op(std::int64_t n, double elem_bytes);

}  // namespace myriad::kernels::ops
