// Scaled, causally masked softmax over attention scores on the CPU in fp32,
// forward and backward: the unfused path (scores materialized), which the flash
// attention kernel replaces; kept for models and checks that need the scores.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/ops/softmax_shape.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// x, y: [matrices, seq, seq]; y[i, j] = softmax_j(scale * x[i, j]) over j <= i, and 0 for j > i.
void causal_softmax_forward_cpu(const SoftmaxShape& s, std::span<const float> x,
                                std::span<float> y);
// dy, y, dx: [matrices, seq, seq]; dx = scale * y * (dy - sum_j dy * y); 0 above the diagonal.
void causal_softmax_backward_cpu(const SoftmaxShape& s, std::span<const float> dy,
                                 std::span<const float> y, std::span<float> dx);

// Memory-bound: reads and writes every score once in elem_bytes.
models::Op causal_softmax_op(const SoftmaxShape& s, double elem_bytes);

}  // namespace myriad::kernels::ops
