// Flash-style attention on the CPU in fp32: keys are visited in tiles with an
// online softmax, so no [seq, seq] score matrix is ever held; the backward
// recomputes scores from the saved log-sum-exp. Causal masking, a sliding
// window and grouped-query attention (several query heads share a KV head).
// fp32 or bf16 storage, fp32 compute.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/bf16.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// True when query i may attend to key j under the shape's mask.
bool attention_allowed(const AttentionShape& s, std::int64_t i, std::int64_t j);

// q, o: [batch, q_heads, seq, head_dim]; k, v: [batch, kv_heads, seq, head_dim];
// lse: [batch, q_heads, seq] (natural log-sum-exp of the scaled scores, saved for backward).
void attention_forward_cpu(const AttentionShape& s, std::span<const float> q,
                           std::span<const float> k, std::span<const float> v, std::span<float> o,
                           std::span<float> lse);

struct AttentionGrads {
  std::span<float> dq;  // [batch, q_heads, seq, head_dim]
  std::span<float> dk;  // [batch, kv_heads, seq, head_dim], overwritten
  std::span<float> dv;  // [batch, kv_heads, seq, head_dim], overwritten
};

// do_: [batch, q_heads, seq, head_dim]; o, lse: from the forward.
void attention_backward_cpu(const AttentionShape& s, std::span<const float> q,
                            std::span<const float> k, std::span<const float> v,
                            std::span<const float> o, std::span<const float> lse,
                            std::span<const float> do_, const AttentionGrads& grads);

// bf16 storage, fp32 compute (bf16_paths.cpp): q, k, v, o, do_ and the gradients are
// bf16, rounded once when stored; lse stays fp32.
void attention_forward_cpu(const AttentionShape& s, std::span<const Bf16> q,
                           std::span<const Bf16> k, std::span<const Bf16> v, std::span<Bf16> o,
                           std::span<float> lse);
struct AttentionGradsBf16 {
  std::span<Bf16> dq;  // [batch, q_heads, seq, head_dim]
  std::span<Bf16> dk;  // [batch, kv_heads, seq, head_dim]
  std::span<Bf16> dv;  // [batch, kv_heads, seq, head_dim]
};
void attention_backward_cpu(const AttentionShape& s, std::span<const Bf16> q,
                            std::span<const Bf16> k, std::span<const Bf16> v,
                            std::span<const Bf16> o, std::span<const float> lse,
                            std::span<const Bf16> do_, const AttentionGradsBf16& grads);

// FLOPs counted over the pairs the mask allows (4*d each forward: QK^T and PV);
// bytes: q, k, v, o read or written once in elem_bytes.
models::Op attention_op(const AttentionShape& s, double elem_bytes);

}  // namespace myriad::kernels::ops
