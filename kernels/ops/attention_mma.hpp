// Attention on tensor cores, forward (attention_mma.cu) and backward
// (attention_mma_backward.cu): FlashAttention-2 on mma.sync, bf16 storage, fp32
// accumulation, head dims 64 and 128, causal or not, sliding window, GQA; the
// same mask, outputs and saved log-sum-exp as the CPU backend (attention.hpp),
// with P (and in the backward dS) rounded to bf16 before the next product, as
// FlashAttention does. Device pointers, 16-byte aligned.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kernels/ops/attention_cuda.hpp"
#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/bf16.hpp"

namespace myriad::kernels::ops {

// Empty when the tensor-core kernel can run this shape, otherwise why not.
std::string attention_mma_can_implement(const AttentionShape& s);

// q, o: [batch, q_heads, seq, head_dim]; k, v: [batch, kv_heads, seq, head_dim];
// lse: [batch, q_heads, seq]. Throws std::invalid_argument for a shape it cannot run.
void attention_forward_mma_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k,
                                const Bf16* v, Bf16* o, float* lse, cudaStream_t stream);

// dq, dk, dv (bf16) from the forward's o and lse and the output gradient do_
// (same layouts as q, o); grads.delta, [batch, q_heads, seq] fp32, is workspace.
// Deterministic: no atomics. Throws std::invalid_argument as the forward.
void attention_backward_mma_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k,
                                 const Bf16* v, const Bf16* o, const float* lse, const Bf16* do_,
                                 const AttentionCudaGradsBf16& grads, cudaStream_t stream);

}  // namespace myriad::kernels::ops
