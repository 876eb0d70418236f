// Flash-style attention on the GPU, fp32 compute (fp32 or bf16 storage), same mask, GQA mapping and
// saved log-sum-exp as attention.hpp's CPU backend. Forward: one thread per query row, key/value
// tiles staged in shared memory, online softmax, no score matrix. Backward: dq one thread per query
// row, dk/dv one thread per key row (no atomics), scores recomputed from the saved log-sum-exp.
// Device pointers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/bf16.hpp"

namespace myriad::kernels::ops {

// Largest head_dim the CUDA kernels take (per-thread accumulators).
constexpr std::int64_t kAttentionCudaMaxHeadDim = 256;

// Empty when the CUDA backend can run this shape, otherwise why not.
std::string attention_cuda_can_implement(const AttentionShape& s);

// q, o: [batch, q_heads, seq, head_dim]; k, v: [batch, kv_heads, seq, head_dim];
// lse: [batch, q_heads, seq].
void attention_forward_cuda(const AttentionShape& s, const float* q, const float* k, const float* v,
                            float* o, float* lse, cudaStream_t stream);

struct AttentionCudaGrads {
  float* dq;     // [batch, q_heads, seq, head_dim]
  float* dk;     // [batch, kv_heads, seq, head_dim]
  float* dv;     // [batch, kv_heads, seq, head_dim]
  float* delta;  // workspace [batch, q_heads, seq]: rowsum(dO * O)
};

// do_: [batch, q_heads, seq, head_dim]; o, lse from the forward.
void attention_backward_cuda(const AttentionShape& s, const float* q, const float* k,
                             const float* v, const float* o, const float* lse, const float* do_,
                             const AttentionCudaGrads& grads, cudaStream_t stream);

// bf16 storage, fp32 compute: q, k, v, o, do_ and the gradients bf16 (each output
// rounded once), lse and the delta workspace fp32, as attention.hpp's bf16 CPU path.
void attention_forward_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                            Bf16* o, float* lse, cudaStream_t stream);
struct AttentionCudaGradsBf16 {
  Bf16* dq;      // [batch, q_heads, seq, head_dim]
  Bf16* dk;      // [batch, kv_heads, seq, head_dim]
  Bf16* dv;      // [batch, kv_heads, seq, head_dim]
  float* delta;  // workspace [batch, q_heads, seq]: rowsum(dO * O)
};
void attention_backward_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                             const Bf16* o, const float* lse, const Bf16* do_,
                             const AttentionCudaGradsBf16& grads, cudaStream_t stream);

}  // namespace myriad::kernels::ops
