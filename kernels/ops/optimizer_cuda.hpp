// Fused optimizer steps on the GPU over fp32 master weights, same update as
// optimizer.hpp's CPU backend (AdamW, Lion, optional cautious weight decay).
// Device pointers, n elements each, updated in place, enqueued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/ops/optimizer_arguments.hpp"

namespace myriad::kernels::ops {

void adamw_step_cuda(const AdamWArguments& a, float* param, const float* grad, float* m, float* v,
                     std::int64_t n, cudaStream_t stream);
void lion_step_cuda(const LionArguments& a, float* param, const float* grad, float* m,
                    std::int64_t n, cudaStream_t stream);

}  // namespace myriad::kernels::ops
