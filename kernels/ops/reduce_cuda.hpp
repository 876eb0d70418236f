// The collectives' reduction on the GPU: dst = dst (op) src element by element,
// fp32 or bf16 (reduced in fp32, rounded once), as reduce.hpp's CPU backend.
// Device pointers, n elements, enqueued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/reduce_kind.hpp"

namespace myriad::kernels::ops {

void reduce_cuda(ReduceOp op, float* dst, const float* src, std::int64_t n, cudaStream_t stream);
void reduce_cuda(ReduceOp op, Bf16* dst, const Bf16* src, std::int64_t n, cudaStream_t stream);

}  // namespace myriad::kernels::ops
