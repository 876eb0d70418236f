// MoE routing on the GPU, same results as moe_router.hpp's CPU backend: top-k
// router (softmax, k best experts, ties to the lower index, capacity given
// choice by choice in token order) and token permute/unpermute. Device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/ops/router_shape.hpp"

namespace myriad::kernels::ops {

// The router's output on the device; layouts as in Routing.
struct RoutingCuda {
  std::int32_t* expert;  // [tokens, top_k]
  float* weight;         // [tokens, top_k]
  std::int32_t* slot;    // [tokens, top_k], -1: dropped
  std::int32_t* load;    // [experts]
};

// logits: [tokens, experts].
void route_top_k_cuda(const RouterShape& s, const float* logits, const RoutingCuda& r,
                      cudaStream_t stream);
// x: [tokens, hidden] -> buffer: [experts, capacity, hidden]; empty slots zeroed.
void permute_tokens_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                         const float* x, float* buffer, cudaStream_t stream);
// buffer: [experts, capacity, hidden] -> y: [tokens, hidden], weighted sum of kept choices.
void unpermute_tokens_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                           const float* buffer, float* y, cudaStream_t stream);

}  // namespace myriad::kernels::ops
