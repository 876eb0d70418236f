// The shape and mask of an attention, shared by the CPU and CUDA backends
// (C++17, for nvcc).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace myriad::kernels::ops
