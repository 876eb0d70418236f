// Backward of the MoE routing on the GPU, the CPU backend's formulas
// (moe_router.hpp): router through the softmax of the chosen experts, permute
// (a gather-sum over a token's kept slots) and unpermute (a scatter into the
// slots and one dot product per choice).
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/block_reduce.cuh"
#include "kernels/ops/moe_router_cuda.hpp"

namespace myriad::kernels::ops {

namespace {

// One thread per token. q: softmax probability (or renormalized weight on the
// chosen experts, 0 elsewhere); g: dweight of the choice that picked the expert.
__global__ void route_backward_kernel(RouterShape s, RoutingCuda r, const float* logits,
                                      const float* dweight, float* dlogits) {
  for (std::int64_t t = grid_index(); t < s.tokens; t += grid_stride()) {
    const float* lt = logits + t * s.experts;
    const std::int64_t a0 = t * s.top_k;
    float dot = 0.0F;
    for (std::int64_t c = 0; c < s.top_k; ++c) dot += dweight[a0 + c] * r.weight[a0 + c];
    float mx = lt[0];
    float sum = 0.0F;
    if (!s.renormalize) {
      for (std::int64_t e = 1; e < s.experts; ++e) mx = fmaxf(mx, lt[e]);
      for (std::int64_t e = 0; e < s.experts; ++e) sum += expf(lt[e] - mx);
    }
    for (std::int64_t e = 0; e < s.experts; ++e) {
      float q = s.renormalize ? 0.0F : expf(lt[e] - mx) / sum;
      float g = 0.0F;
      for (std::int64_t c = 0; c < s.top_k; ++c) {
        if (r.expert[a0 + c] != e) continue;
        g = dweight[a0 + c];
        if (s.renormalize) q = r.weight[a0 + c];
      }
      dlogits[t * s.experts + e] = q * (g - dot);
    }
  }
}

// One thread per (token, column): the sum of the token's kept slot rows.
__global__ void permute_backward_kernel(RouterShape s, RoutingCuda r, std::int64_t hidden,
                                        const float* dbuffer, float* dx) {
  const std::int64_t n = s.tokens * hidden;
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const std::int64_t t = i / hidden, j = i % hidden;
    float acc = 0.0F;
    for (std::int64_t c = 0; c < s.top_k; ++c) {
      const std::int64_t a = t * s.top_k + c;
      if (r.slot[a] < 0) continue;
      acc += dbuffer[(r.expert[a] * s.capacity + r.slot[a]) * hidden + j];
    }
    dx[i] = acc;
  }
}

// One thread per (choice, column): each kept slot has exactly one choice.
__global__ void unpermute_dbuffer_kernel(RouterShape s, RoutingCuda r, std::int64_t hidden,
                                         const float* dy, float* dbuffer) {
  const std::int64_t n = s.tokens * s.top_k * hidden;
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const std::int64_t a = i / hidden, j = i % hidden;
    if (r.slot[a] < 0) continue;
    dbuffer[(r.expert[a] * s.capacity + r.slot[a]) * hidden + j] =
        r.weight[a] * dy[(a / s.top_k) * hidden + j];
  }
}

// One block per choice: dweight = dot(dy[token], buffer[expert, slot]), 0 when dropped.
__global__ void unpermute_dweight_kernel(RouterShape s, RoutingCuda r, std::int64_t hidden,
                                         const float* dy, const float* buffer, float* dweight) {
  __shared__ float shared[kThreadsPerBlock];
  for (std::int64_t a = blockIdx.x; a < s.tokens * s.top_k; a += gridDim.x) {
    float part = 0.0F;
    if (r.slot[a] >= 0) {
      const float* row = buffer + (r.expert[a] * s.capacity + r.slot[a]) * hidden;
      const float* dyt = dy + (a / s.top_k) * hidden;
      for (std::int64_t j = threadIdx.x; j < hidden; j += blockDim.x) part += dyt[j] * row[j];
    }
    const float dot = block_sum(part, shared);
    if (threadIdx.x == 0) dweight[a] = dot;
  }
}

void require(const RouterShape& s, std::int64_t hidden) {
  const std::string why = router_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("router_cuda backward: " + why);
  if (hidden < 1) throw std::invalid_argument("router_cuda backward: hidden must be at least 1");
}

}  // namespace

void route_top_k_backward_cuda(const RouterShape& s, const RoutingCuda& r, const float* logits,
                               const float* dweight, float* dlogits, cudaStream_t stream) {
  require(s, 1);
  route_backward_kernel<<<blocks_for(s.tokens), kThreadsPerBlock, 0, stream>>>(s, r, logits,
                                                                               dweight, dlogits);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void permute_tokens_backward_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                                  const float* dbuffer, float* dx, cudaStream_t stream) {
  require(s, hidden);
  permute_backward_kernel<<<blocks_for(s.tokens * hidden), kThreadsPerBlock, 0, stream>>>(
      s, r, hidden, dbuffer, dx);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void unpermute_tokens_backward_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                                    const float* dy, const float* buffer, float* dbuffer,
                                    float* dweight, cudaStream_t stream) {
  require(s, hidden);
  const auto bytes = static_cast<std::size_t>(s.experts * s.capacity * hidden) * sizeof(float);
  MYRIAD_CUDA_CHECK(cudaMemsetAsync(dbuffer, 0, bytes, stream));
  unpermute_dbuffer_kernel<<<blocks_for(s.tokens * s.top_k * hidden), kThreadsPerBlock, 0,
                             stream>>>(s, r, hidden, dy, dbuffer);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  const std::int64_t choices = s.tokens * s.top_k;
  const auto blocks = static_cast<unsigned int>(choices < 65535 ? choices : 65535);
  unpermute_dweight_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, dy, buffer,
                                                                    dweight);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
