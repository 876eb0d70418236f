// GEMM on the CPU: C = alpha * op(A) * op(B) + beta * C, row-major, fp32
// accumulation, fp32 or bf16 storage. The three layouts a transformer layer
// needs: forward Y = X W^T (NT), data gradient dX = dY W (NN), weight gradient
// dW = dY^T X (TN).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/gemm_arguments.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// Empty when the arguments and buffer sizes fit, otherwise why not.
std::string gemm_can_implement(const GemmArguments& args, std::size_t a_size, std::size_t b_size,
                               std::size_t c_size);

// a, b: shapes by layout (see GemmLayout); c: [m, n]. Throws std::invalid_argument
// when gemm_can_implement refuses.
void gemm_cpu(const GemmArguments& args, std::span<const float> a, std::span<const float> b,
              std::span<float> c);
void gemm_cpu(const GemmArguments& args, std::span<const Bf16> a, std::span<const Bf16> b,
              std::span<Bf16> c);

// The op as the cost model sees it: 2*m*n*k FLOPs, A, B and C moved once.
models::Op gemm_op(const GemmArguments& args, double elem_bytes);

}  // namespace myriad::kernels::ops
