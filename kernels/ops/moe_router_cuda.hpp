// MoE routing on the GPU, same results as moe_router.hpp's CPU backend: top-k
// router (softmax, k best experts, ties to the lower index, capacity given
// choice by choice in token order) and token permute/unpermute, each with its
// backward (moe_router_backward_cuda.cu). Device pointers.
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
// x: [tokens, hidden] -> buffer: [experts, capacity, hidden]; empty slots zeroed. The row
// moves below take r as route_top_k_cuda wrote it: an expert's kept choices fill its slots
// 0 .. load - 1, and the slots past load are the empty ones. One warp a row, 16 bytes a load
// and a store where the pointers are aligned and hidden is a multiple of 4.
void permute_tokens_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                         const float* x, float* buffer, cudaStream_t stream);
// buffer: [experts, capacity, hidden] -> y: [tokens, hidden], weighted sum of kept choices.
void unpermute_tokens_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                           const float* buffer, float* y, cudaStream_t stream);

// Backward, formulas as in moe_router.hpp's CPU backend. logits, dlogits: [tokens, experts];
// dweight: [tokens, top_k]. One thread per token.
void route_top_k_backward_cuda(const RouterShape& s, const RoutingCuda& r, const float* logits,
                               const float* dweight, float* dlogits, cudaStream_t stream);
// dbuffer: [experts, capacity, hidden] -> dx: [tokens, hidden].
void permute_tokens_backward_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                                  const float* dbuffer, float* dx, cudaStream_t stream);
// dy: [tokens, hidden]; buffer: the forward's input -> dbuffer: [experts, capacity, hidden]
// (empty slots zeroed), dweight: [tokens, top_k] (one warp per buffer row, dy read once for
// both, no atomics).
void unpermute_tokens_backward_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                                    const float* dy, const float* buffer, float* dbuffer,
                                    float* dweight, cudaStream_t stream);

}  // namespace myriad::kernels::ops
