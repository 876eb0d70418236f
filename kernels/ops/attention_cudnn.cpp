// cuDNN's fused attention forward through the backend graph API (see
// attention_cudnn.hpp); the library, descriptors, masks, plans and execution
// are cudnn_graph.hpp's, shared with the backward (attention_cudnn_backward.cpp).
//
// The graph is the one cudnn-frontend's SDPA node lowers to for cuDNN 9 before
// 9.21 (composite softmax and diagonal band masks), tensor by tensor:
//   S  = Q · K^T                      matmul, fp32        K^T is K with the last two dims swapped
//   S' = S * scale                    pointwise MUL       scale by value
//   S''= mask(S')                     GEN_INDEX rows/cols, CMP_GE / CMP_GT, BINARY_SELECT
//   m  = max_j S''; e = exp(S'' - m); l = sum_j e
//   stats = m + log(l)                the saved log-sum-exp, natural log
//   P  = e / l                        bf16, as FlashAttention rounds P
//   O  = P · V                        matmul
// GQA needs nothing more: K and V carry kv_heads, and cuDNN broadcasts them
// over the q_heads / kv_heads query heads of each group.
#include "kernels/ops/attention_cudnn.hpp"

#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>

#include "kernels/ops/cudnn_graph.hpp"

namespace myriad::kernels::ops {
namespace {

using cudnn_graph::Direction;
using cudnn_graph::GraphBuilder;

// P = softmax(x) over keys, in bf16 for P · V; stats = max + log(sum exp(x - max)).
cudnnBackendDescriptor_t softmax(GraphBuilder& g, cudnnBackendDescriptor_t x,
                                 cudnnBackendDescriptor_t stats) {
  const cudnnBackendDescriptor_t max = g.scratch(CUDNN_DATA_FLOAT, g.rows());
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, x, max);
  const cudnnBackendDescriptor_t shifted = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, {x, max, nullptr}, shifted);
  const cudnnBackendDescriptor_t e = g.scratch(CUDNN_DATA_FLOAT, g.scores());
  g.pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, {shifted, nullptr, nullptr}, e);
  const cudnnBackendDescriptor_t sum = g.scratch(CUDNN_DATA_FLOAT, g.rows());
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const cudnnBackendDescriptor_t log_sum = g.scratch(CUDNN_DATA_FLOAT, g.rows());
  g.pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, {sum, nullptr, nullptr}, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, {max, log_sum, nullptr}, stats);
  const cudnnBackendDescriptor_t p = g.scratch(CUDNN_DATA_BFLOAT16, g.scores());
  g.pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, {e, sum, nullptr}, p);
  return p;
}

void build_forward(GraphBuilder& g) {
  const cudnn_graph::AttentionTensors t = g.attention_tensors();
  g.matmul(softmax(g, g.mask(g.scaled_scores(t)), t.stats), t.v, t.o);
}

}  // namespace

std::string attention_cudnn_can_implement(const AttentionShape& s) {
  if (s.batch < 1 || s.q_heads < 1 || s.kv_heads < 1 || s.seq < 1 || s.head_dim < 1) {
    return "batch, heads, seq and head_dim must be at least 1";
  }
  if (s.q_heads % s.kv_heads != 0) return "kv_heads must divide q_heads";
  if (s.head_dim != 64 && s.head_dim != 128) {
    return "cuDNN's fused attention is asked for head_dim 64 or 128 only, not " +
           std::to_string(s.head_dim);
  }
  if (s.window < 0) return "window must be 0 (none) or positive";
  if (s.seq > std::numeric_limits<std::int32_t>::max()) {
    return "seq must fit the int32 row and column indices of cuDNN's mask";
  }
  if (!(s.scale >= 0.0F) || !std::isfinite(s.scale)) {
    return "scale must be 0 (default) or positive and finite";
  }
  return {};
}

std::string attention_cudnn_available() {
  const cudnn_graph::Api& a = cudnn_graph::api();
  if (!a.error.empty()) return a.error;
  const std::size_t version = a.get_version();
  if (version == 91000 || version == 91001) {
    return "cuDNN " + cudnn_graph::version_text(version) +
           " has known bugs in its bf16 attention forward";
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device for cuDNN: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device for cuDNN";
  int device = 0;
  int major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    return std::string("the current device could not be queried: ") +
           cudaGetErrorString(cudaGetLastError());
  }
  if (major < 8) {
    return "cuDNN's fused attention needs compute capability 8.0 or newer; device " +
           std::to_string(device) + " has " + std::to_string(major) + ".x";
  }
  try {
    (void)cudnn_graph::device_context(device);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

void attention_forward_cudnn(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                             Bf16* o, float* lse, cudaStream_t stream) {
  const cudnn_graph::PlanKey key =
      cudnn_graph::checked_key(s, Direction::kForward, {q, k, v, o, lse}, "q, k, v, o and lse");
  cudnn_graph::DeviceContext& c = cudnn_graph::context_on(stream);
  const cudnn_graph::Plan& plan = cudnn_graph::plan_for(c, key, build_forward);
  cudnn_graph::Scalars values = cudnn_graph::scalars(s, key);
  cudnn_graph::VariantPack pack;
  pack.add_attention(q, k, v, o, lse);
  pack.add_scalars(key, values);
  const cudnn_graph::StreamWorkspace workspace(plan.workspace_bytes, stream);
  cudnn_graph::execute(c, plan, pack, workspace.get());
}

}  // namespace myriad::kernels::ops
