// Flash-style attention on the CPU in fp32: keys are visited in tiles with an
// online softmax, so no [seq, seq] score matrix is ever held; the backward
// recomputes scores from the saved log-sum-exp. Causal masking, a sliding
// window and grouped-query attention (several query heads share a KV head).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

struct AttentionShape {
  std::int64_t batch = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;  // divides q_heads; q head h reads kv head h / (q_heads / kv_heads)
  std::int64_t seq = 0;       // queries and keys
  std::int64_t head_dim = 0;
  bool causal = true;
  std::int64_t window = 0;  // 0: no window; else a query sees keys with |i - j| < window
  float scale = 0.0F;       // 0: 1 / sqrt(head_dim)
  std::int64_t key_tile = 64;
};

// Empty when the shape is usable, otherwise why not.
std::string attention_can_implement(const AttentionShape& s);

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

// FLOPs counted over the pairs the mask allows (4*d each forward: QK^T and PV);
// bytes: q, k, v, o read or written once in elem_bytes.
models::Op attention_op(const AttentionShape& s, double elem_bytes);

}  // namespace myriad::kernels::ops
