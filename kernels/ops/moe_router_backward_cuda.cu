// Backward of the MoE routing on the GPU, the CPU backend's formulas
// (moe_router.hpp): router through the softmax of the chosen experts, permute
// (a gather-sum over a token's kept slots) and unpermute (a scatter into the
// slots and one dot product per choice).
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/moe_router_cuda.hpp"
#include "kernels/ops/moe_rows.cuh"

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

// Unpermute's backward, one warp per row: for a kept choice a, dbuffer[slot] =
// weight[a] * dy[token] and dweight[a] = dot(dy[token], buffer[slot]) (lane
// partials, then shuffles), reading dy once for both; 0 for a dropped choice;
// then the empty slots of dbuffer zeroed (no memset before: written once).
template <int kWidth>
__global__ void unpermute_backward_kernel(RouterShape s, RoutingCuda r, std::int64_t hidden,
                                          const float* dy, const float* buffer, float* dbuffer,
                                          float* dweight) {
  using moe_rows::kUnroll;
  using moe_rows::kWarp;
  const std::int64_t packs = hidden / kWidth;
  const std::int64_t choices = s.tokens * s.top_k;
  const std::int64_t rows = choices + s.experts * s.capacity;
  for (std::int64_t w = moe_rows::warp_index(); w < rows; w += moe_rows::warp_stride()) {
    if (w >= choices) {
      if (moe_rows::empty_slot(s, r, w - choices)) {
        moe_rows::zero_row<kWidth>(dbuffer + (w - choices) * hidden, packs);
      }
      continue;
    }
    const std::int64_t row = moe_rows::slot_row(s, r, w);  // the same on the warp's lanes
    float dot = 0.0F;
    if (row >= 0) {
      const float weight = r.weight[w];
      const float* dyt = dy + (w / s.top_k) * hidden;
      const float* b = buffer + row * hidden;
      float* db = dbuffer + row * hidden;
      for (std::int64_t p0 = moe_rows::lane(); p0 < packs; p0 += kWarp * kUnroll) {
        Floats<kWidth> g[kUnroll];
        Floats<kWidth> v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          g[u] = moe_rows::load_pack<kWidth>(dyt, p0 + u * kWarp, packs);
          v[u] = moe_rows::load_pack<kWidth>(b, p0 + u * kWarp, packs);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
          for (int j = 0; j < kWidth; ++j) dot += g[u].v[j] * v[u].v[j];  // 0 past the end
          if (p0 + u * kWarp >= packs) continue;
#pragma unroll
          for (int j = 0; j < kWidth; ++j) g[u].v[j] = weight * g[u].v[j];
          store_floats(db + (p0 + u * kWarp) * kWidth, g[u]);
        }
      }
    }
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      dot += __shfl_xor_sync(0xFFFFFFFFU, dot, offset);
    }
    if (moe_rows::lane() == 0) dweight[w] = dot;
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

// One warp per token: the sum of its kept choices' rows, in choice order.
void permute_tokens_backward_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                                  const float* dbuffer, float* dx, cudaStream_t stream) {
  require(s, hidden);
  const unsigned int blocks = moe_rows::blocks_for_rows(s.tokens);
  if (moe_rows::four_wide(hidden, {dbuffer, dx})) {
    moe_rows::gather_rows_kernel<4, false>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, dbuffer, dx);
  } else {
    moe_rows::gather_rows_kernel<1, false>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, dbuffer, dx);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void unpermute_tokens_backward_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                                    const float* dy, const float* buffer, float* dbuffer,
                                    float* dweight, cudaStream_t stream) {
  require(s, hidden);
  const unsigned int blocks =
      moe_rows::blocks_for_rows(s.tokens * s.top_k + s.experts * s.capacity);
  if (moe_rows::four_wide(hidden, {dy, buffer, dbuffer})) {
    unpermute_backward_kernel<4>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, dy, buffer, dbuffer, dweight);
  } else {
    unpermute_backward_kernel<1>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, dy, buffer, dbuffer, dweight);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
