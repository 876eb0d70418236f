// Attention forward and backward by cuDNN's fused flash attention (SDPA), the
// production reference the calibration grid times beside Myriad's own kernels.
// The graphs are the patterns cuDNN's runtime fusion engines recognise (forward:
// Q·K^T, scale, mask, softmax with its statistics, P·V; backward: the scores
// recomputed from the statistics, then dV, dP, dS, dK, dQ), built through
// cuDNN 9's backend API.
// libcudnn is loaded on first use, not linked, so a machine without it still
// runs every other kernel and is told why this one cannot. bf16 storage, fp32
// scores and softmax, P rounded to bf16 before it meets V; the same layouts,
// mask, GQA mapping and saved log-sum-exp as the CPU backend (attention.hpp).
// C++17, no cuDNN types, so that any translation unit can include it.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kernels/ops/attention_cuda.hpp"
#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/bf16.hpp"

namespace myriad::kernels::ops {

// Empty when cuDNN can be asked to run this shape (head_dim 64 or 128, causal
// or not, sliding window, GQA), otherwise why not. Looks at the shape only:
// whether a GPU and libcudnn are there is attention_cudnn_available()'s answer,
// and cuDNN may still refuse a shape on a given GPU, which the forward reports.
std::string attention_cudnn_can_implement(const AttentionShape& s);

// Empty when libcudnn could be loaded and a handle created on the current
// device, otherwise why not (the library, the call and cuDNN's status).
std::string attention_cudnn_available();

// q, o: [batch, q_heads, seq, head_dim]; k, v: [batch, kv_heads, seq, head_dim];
// lse: [batch, q_heads, seq], the natural log of each row's softmax denominator
// (max included) over the scaled scores. Device pointers, 16-byte aligned; scale
// s.scale, or 1/sqrt(head_dim) when 0. The plan is built once per shape, device
// and calling thread, then reused. Throws std::invalid_argument for a shape it
// cannot run and std::runtime_error naming the cuDNN call and status that failed.
void attention_forward_cudnn(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                             Bf16* o, float* lse, cudaStream_t stream);

// The gradients of attention_forward_cudnn: q, k, v, o, lse as the forward took
// and gave them, do_ [batch, q_heads, seq, head_dim]; grads.dq, dk, dv bf16, each
// rounded once (dk and dv summed over the query heads of each GQA group).
// grads.delta, fp32 [batch, q_heads, seq], is used: the graph writes rowsum(dO * O)
// there and reads it back. Device pointers, 16-byte aligned. cuDNN's default,
// non-deterministic algorithm accumulates dq in fp32 across key blocks, so dq
// may differ in its last bits between two runs.
// Besides the forward's refusals, std::invalid_argument for seq 1 and for shapes
// the loaded cuDNN release runs wrongly without workarounds not built here (before
// 9.15.1, seq not a multiple of 128; 9.14.0, a non-causal window past 1024 keys).
// Plans are cached apart from the forward's, per shape, device and thread.
void attention_backward_cudnn(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                              const Bf16* o, const float* lse, const Bf16* do_,
                              const AttentionCudaGradsBf16& grads, cudaStream_t stream);

}  // namespace myriad::kernels::ops
