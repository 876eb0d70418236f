// cuDNN's fused attention backward through the backend graph API (see
// attention_cudnn.hpp), on cudnn_graph.hpp's machinery, shared with the forward.
//
// The graph is the one cudnn-frontend's composite SDPA backward node lowers to
// for cuDNN 9 before 9.21 (no dropout, bias or padding; dP not kept in a
// workspace, as the frontend chooses from cuDNN 9.0 on), tensor by tensor:
//   delta = rowsum(dO * O) * 1       MUL, ADD reduction, MUL by a by-value one; fp32, bound: the
//                                    caller's grads.delta, which cuDNN writes and then reads
//   S  = Q · K^T                     matmul, fp32
//   P  = exp(mask(S * scale - stats)) the forward's mask, applied after the stats are subtracted
//   dV = (P^T) · dO                  P^T a bf16 reshape (transposed strides) of P
//   dP = dO · V^T                    matmul, fp32, V^T is V with the last two dims swapped
//   dS = (dP - delta) * P * scale    SUB, MUL, MUL
//   dK = (dS^T) · Q                  dS^T a bf16 reshape of dS
//   dQ_acc = dS · K                  K a reshape of the bound K^T; dQ_acc fp32, bound to a
//                                    workspace the engine accumulates in (zeroed here before 9.6)
//   dQ = identity(dQ_acc)            bf16
// GQA: dV and dK are first computed per query head (bf16, virtual), then summed
// over each group of q_heads / kv_heads heads by an ADD reduction into the
// kv_heads tensor, as the frontend builds it for every cuDNN 9 release.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/attention_cudnn.hpp"
#include "kernels/ops/cudnn_graph.hpp"

namespace myriad::kernels::ops {
namespace {

using cudnn_graph::Dims;
using cudnn_graph::Direction;
using cudnn_graph::GraphBuilder;
using cudnn_graph::Role;

constexpr std::int64_t kUidDo = 10;
constexpr std::int64_t kUidDq = 11;
constexpr std::int64_t kUidDk = 12;
constexpr std::int64_t kUidDv = 13;
constexpr std::int64_t kUidDelta = 14;    // fp32 [b, q_heads, seq, 1]: rowsum(dO * O)
constexpr std::int64_t kUidDqAccum = 15;  // fp32 [b, q_heads, seq, head_dim], in the workspace
constexpr std::int64_t kUidOne = 16;      // by value, fp32 1: the frontend's dropout-free scale

// Bytes of dQ's fp32 accumulator, rounded up so that cuDNN's workspace after it stays aligned.
std::int64_t accum_bytes(const cudnn_graph::PlanKey& k) {
  const std::int64_t bytes =
      k.batch * k.q_heads * k.seq * k.head_dim * static_cast<std::int64_t>(sizeof(float));
  return (bytes + 255) / 256 * 256;
}

// The scores' transpose [b, h, seq_k, seq_q] over the same elements, in bf16,
// as the frontend's reshape before dV and dK.
cudnnBackendDescriptor_t transpose_scores(GraphBuilder& g, cudnnBackendDescriptor_t x) {
  const Dims d = g.scores();
  const cudnnBackendDescriptor_t t =
      g.scratch(CUDNN_DATA_BFLOAT16, d, {d[1] * d[2] * d[3], d[2] * d[3], 1, d[3]});
  g.reshape(x, t);
  return t;
}

// grad = a · b into the bound kv_heads tensor; with GQA per query head first,
// then summed over each group.
void kv_gradient(GraphBuilder& g, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                 cudnnBackendDescriptor_t grad) {
  if (g.key().q_heads == g.key().kv_heads) {
    g.matmul(a, b, grad);
    return;
  }
  const cudnnBackendDescriptor_t per_head = g.scratch(CUDNN_DATA_BFLOAT16, g.q_dims());
  g.matmul(a, b, per_head);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, per_head, grad);
}

void build_backward(GraphBuilder& g) {
  const cudnn_graph::PlanKey& k = g.key();
  const cudnn_graph::AttentionTensors t = g.attention_tensors();  // t.v is V^T here
  const auto d_o = g.tensor(kUidDo, CUDNN_DATA_BFLOAT16, g.q_dims(), Role::kBound);
  const auto dq = g.tensor(kUidDq, CUDNN_DATA_BFLOAT16, g.q_dims(), Role::kBound);
  const auto dk = g.tensor(kUidDk, CUDNN_DATA_BFLOAT16, g.kv_dims(), Role::kBound);
  const auto dv = g.tensor(kUidDv, CUDNN_DATA_BFLOAT16, g.kv_dims(), Role::kBound);
  const auto one = g.scalar(kUidOne);

  // delta = rowsum(dO * O); the product's strides are the frontend's (virtual, never stored).
  const auto product =
      g.scratch(CUDNN_DATA_FLOAT, g.q_dims(),
                {k.q_heads * k.seq * k.head_dim, k.seq * k.head_dim, k.q_heads * k.head_dim, 1});
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, {d_o, t.o, nullptr}, product);
  const auto row_sum = g.scratch(CUDNN_DATA_FLOAT, g.rows());
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, product, row_sum);
  const auto delta = g.tensor(kUidDelta, CUDNN_DATA_FLOAT, g.rows(), Role::kBound);
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, {row_sum, one, nullptr}, delta);

  // P = exp(mask(Q · K^T * scale - stats)); dV = P^T · dO.
  const auto shifted = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, {g.scaled_scores(t), t.stats, nullptr},
              shifted);
  const auto p = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, {g.mask(shifted), nullptr, nullptr}, p);
  kv_gradient(g, transpose_scores(g, p), d_o, dv);

  // dS = (dO · V^T - delta) * P * scale; dK = dS^T · Q.
  const auto dp = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.matmul(d_o, t.v, dp);
  const auto centered = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, {dp, delta, nullptr}, centered);
  const auto ds_unscaled = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, {centered, p, nullptr}, ds_unscaled);
  const auto ds = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, {ds_unscaled, t.scale, nullptr}, ds);
  kv_gradient(g, transpose_scores(g, ds), t.q, dk);

  // dQ = dS · K, accumulated in fp32, then rounded to bf16.
  const auto key = g.scratch(CUDNN_DATA_BFLOAT16, g.kv_dims());
  g.reshape(t.kt, key);
  const auto accum = g.tensor(kUidDqAccum, CUDNN_DATA_FLOAT, g.q_dims(), Role::kBound);
  g.matmul(ds, key, accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, CUDNN_DATA_FLOAT, {accum, nullptr, nullptr}, dq);
}

// The frontend's refusals of its backward for shapes and releases where cuDNN
// fails or needs a workaround this file does not build (std::invalid_argument).
void check_backward_release(const cudnn_graph::PlanKey& key, std::size_t version) {
  const std::string release = cudnn_graph::version_text(version);
  if (version <= 91500 && key.seq % 128 != 0) {
    throw std::invalid_argument(
        "attention_cudnn: before cuDNN 9.15.1 the attention backward needs seq a multiple of "
        "128 (the frontend adds a padding mask otherwise, which is not built here); cuDNN " +
        release + ", seq " + std::to_string(key.seq));
  }
  if (version == 91400 && key.seq > 1024 && key.window > 0 && !key.causal) {
    throw std::invalid_argument(
        "attention_cudnn: cuDNN 9.14.0 has a known bug in the backward of a sliding window "
        "without the causal mask past 1024 keys");
  }
}

}  // namespace

void attention_backward_cudnn(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                              const Bf16* o, const float* lse, const Bf16* do_,
                              const AttentionCudaGradsBf16& grads, cudaStream_t stream) {
  if (s.seq == 1) {
    throw std::invalid_argument("attention_cudnn: cuDNN's attention backward does not run seq 1");
  }
  const cudnn_graph::PlanKey key = cudnn_graph::checked_key(
      s, Direction::kBackward, {q, k, v, o, lse, do_, grads.dq, grads.dk, grads.dv, grads.delta},
      "q, k, v, o, lse, do_, dq, dk, dv and delta");
  const std::size_t version = cudnn_graph::loaded_api().get_version();
  check_backward_release(key, version);
  cudnn_graph::DeviceContext& c = cudnn_graph::context_on(stream);
  const cudnn_graph::Plan& plan = cudnn_graph::plan_for(c, key, build_backward);
  cudnn_graph::Scalars values = cudnn_graph::scalars(s, key);
  float one = 1.0F;
  const std::int64_t accum = accum_bytes(key);
  const cudnn_graph::StreamWorkspace workspace(accum + plan.workspace_bytes, stream);
  auto* const base = static_cast<unsigned char*>(workspace.get());
  if (version < 90600) {
    MYRIAD_CUDA_CHECK(cudaMemsetAsync(base, 0, static_cast<std::size_t>(accum), stream));
  }
  cudnn_graph::VariantPack pack;
  pack.add_attention(q, k, v, o, lse);
  pack.add(kUidDo, do_);
  pack.add(kUidDq, grads.dq);
  pack.add(kUidDk, grads.dk);
  pack.add(kUidDv, grads.dv);
  pack.add(kUidDelta, grads.delta);
  pack.add(kUidDqAccum, base);
  pack.add(kUidOne, &one);
  pack.add_scalars(key, values);
  cudnn_graph::execute(c, plan, pack, plan.workspace_bytes > 0 ? base + accum : nullptr);
}

}  // namespace myriad::kernels::ops
