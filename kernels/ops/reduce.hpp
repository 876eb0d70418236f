// The reduction the collectives apply when chunks meet: dst = dst (op) src,
// element by element, over fp32 or bf16 buffers (bf16 reduced in fp32, rounded
// once). A sum can be turned into an average by a final scale.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/reduce_kind.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// dst, src: [n]; dst updated in place.
void reduce_cpu(ReduceOp op, std::span<float> dst, std::span<const float> src);
void reduce_cpu(ReduceOp op, std::span<Bf16> dst, std::span<const Bf16> src);
// dst, srcs[i]: [n]; dst = srcs[0] (op) srcs[1] (op) ..., accumulated in fp32, then
// multiplied by `scale` (1/nranks for an average).
void reduce_many_cpu(ReduceOp op, std::span<const std::span<const float>> srcs,
                     std::span<float> dst, float scale = 1.0F);

// Reads two buffers and writes one, of n elements of elem_bytes.
models::Op reduce_op(std::int64_t n, double elem_bytes);

}  // namespace myriad::kernels::ops
