// Mixture-of-experts routing on the CPU: a top-k router (softmax over expert
// logits, the k best experts per token, a per-expert capacity) and the token
// permutation into per-expert buffers and back, each with its backward
// (moe_router_backward.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/ops/router_shape.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// ceil(capacity_factor * tokens * top_k / experts), at least 1.
std::int64_t expert_capacity(std::int64_t tokens, std::int64_t experts, std::int64_t top_k,
                             double capacity_factor);

struct Routing {
  std::vector<std::int32_t> expert;  // [tokens, top_k], best first; ties go to the lower index
  std::vector<float> weight;         // [tokens, top_k]
  std::vector<std::int32_t> slot;  // [tokens, top_k], slot within the expert's buffer, -1: dropped
  std::vector<std::int32_t> load;  // [experts], assignments kept per expert
};

// logits: [tokens, experts]. Slots are given choice by choice (every token's first
// choice before any second choice), tokens in order, as in GShard.
Routing route_top_k_cpu(const RouterShape& s, std::span<const float> logits);

// x: [tokens, hidden] -> buffer: [experts, capacity, hidden]; empty slots are zeroed.
void permute_tokens_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                        std::span<const float> x, std::span<float> buffer);
// buffer: [experts, capacity, hidden] -> y: [tokens, hidden], y[t] = sum over kept
// choices of weight * buffer[expert, slot]; tokens whose choices were all dropped get 0.
void unpermute_tokens_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                          std::span<const float> buffer, std::span<float> y);

// Backward of the routing, the chosen experts held fixed (top-k and capacity are
// not differentiable). logits, dlogits: [tokens, experts]; dweight: [tokens, top_k].
// Without renormalization weight = softmax(logits)[expert], so
// dlogits[j] = p[j] * (g[j] - sum_c dweight[c] * weight[c]) over every expert j, with
// g[j] = dweight[c] where j is choice c (else 0). With renormalization the weights are
// a softmax over the chosen logits only: the same formula with p[j] = weight[c] on
// the chosen experts and dlogits 0 elsewhere.
void route_top_k_backward_cpu(const RouterShape& s, const Routing& r, std::span<const float> logits,
                              std::span<const float> dweight, std::span<float> dlogits);
// dbuffer: [experts, capacity, hidden] -> dx: [tokens, hidden]; dx[t] = sum over t's kept
// choices of dbuffer[expert, slot] (0 for tokens with every choice dropped).
void permute_tokens_backward_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                                 std::span<const float> dbuffer, std::span<float> dx);
// dy: [tokens, hidden], buffer: the forward's input. dbuffer: [experts, capacity, hidden]
// gets weight * dy[t] in each kept slot and 0 in empty slots; dweight: [tokens, top_k]
// gets dot(dy[t], buffer[expert, slot]) for kept choices and 0 for dropped ones.
void unpermute_tokens_backward_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                                   std::span<const float> dy, std::span<const float> buffer,
                                   std::span<float> dbuffer, std::span<float> dweight);

// Router: softmax and top-k over [tokens, experts] fp32 logits, memory-bound.
models::Op router_op(const RouterShape& s);
// Permutation: memory-bound, reads and writes tokens*top_k rows of hidden elements.
models::Op permute_op(const RouterShape& s, std::int64_t hidden, double elem_bytes);

}  // namespace myriad::kernels::ops
