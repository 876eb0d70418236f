#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/moe_router_cuda.hpp"
#include "kernels/ops/moe_rows.cuh"

namespace myriad::kernels::ops {

namespace {

__device__ bool already_chosen(const std::int32_t* chosen, std::int64_t count, std::int32_t e) {
  for (std::int64_t c = 0; c < count; ++c) {
    if (chosen[c] == e) return true;
  }
  return false;
}

// One thread per token: softmax over its logits, then k passes of selection.
__global__ void top_k_kernel(RouterShape s, const float* logits, RoutingCuda r) {
  for (std::int64_t t = grid_index(); t < s.tokens; t += grid_stride()) {
    const float* lt = logits + t * s.experts;
    float mx = lt[0];
    for (std::int64_t e = 1; e < s.experts; ++e) mx = fmaxf(mx, lt[e]);
    float sum = 0.0F;
    for (std::int64_t e = 0; e < s.experts; ++e) sum += expf(lt[e] - mx);
    std::int32_t* chosen = r.expert + t * s.top_k;
    float kept = 0.0F;
    for (std::int64_t c = 0; c < s.top_k; ++c) {
      std::int32_t best = -1;
      float best_p = 0.0F;
      for (std::int32_t e = 0; e < static_cast<std::int32_t>(s.experts); ++e) {
        const float p = expf(lt[e] - mx) / sum;
        if (!already_chosen(chosen, c, e) && (best < 0 || p > best_p)) {
          best = e;
          best_p = p;
        }
      }
      chosen[c] = best;
      r.weight[t * s.top_k + c] = best_p;
      kept += best_p;
    }
    for (std::int64_t c = 0; s.renormalize && c < s.top_k; ++c) r.weight[t * s.top_k + c] /= kept;
  }
}

// One thread per expert: slots in the CPU backend's order (choice, then token).
__global__ void capacity_kernel(RouterShape s, RoutingCuda r) {
  for (std::int64_t e = grid_index(); e < s.experts; e += grid_stride()) {
    std::int32_t load = 0;
    for (std::int64_t c = 0; c < s.top_k; ++c) {
      for (std::int64_t t = 0; t < s.tokens; ++t) {
        const std::int64_t a = t * s.top_k + c;
        if (r.expert[a] != e) continue;
        r.slot[a] = load < s.capacity ? load++ : -1;
      }
    }
    r.load[e] = load;
  }
}

// One warp per row: the rows of the kept choices (x[token] into buffer[slot]),
// then the buffer's empty slots (zeroed here, not by a memset before: the
// buffer is written once).
template <int kWidth>
__global__ void permute_kernel(RouterShape s, RoutingCuda r, std::int64_t hidden, const float* x,
                               float* buffer) {
  const std::int64_t packs = hidden / kWidth;
  const std::int64_t choices = s.tokens * s.top_k;
  const std::int64_t rows = choices + s.experts * s.capacity;
  for (std::int64_t w = moe_rows::warp_index(); w < rows; w += moe_rows::warp_stride()) {
    if (w < choices) {
      const std::int64_t row = moe_rows::slot_row(s, r, w);
      if (row < 0) continue;
      moe_rows::move_row<kWidth, false>(x + (w / s.top_k) * hidden, 1.0F, buffer + row * hidden,
                                        packs);
    } else if (moe_rows::empty_slot(s, r, w - choices)) {
      moe_rows::zero_row<kWidth>(buffer + (w - choices) * hidden, packs);
    }
  }
}

void require(const RouterShape& s, std::int64_t hidden) {
  const std::string why = router_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("router_cuda: " + why);
  if (hidden < 1) throw std::invalid_argument("router_cuda: hidden must be at least 1");
}

}  // namespace

void route_top_k_cuda(const RouterShape& s, const float* logits, const RoutingCuda& r,
                      cudaStream_t stream) {
  require(s, 1);
  top_k_kernel<<<blocks_for(s.tokens), kThreadsPerBlock, 0, stream>>>(s, logits, r);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  capacity_kernel<<<blocks_for(s.experts), kThreadsPerBlock, 0, stream>>>(s, r);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void permute_tokens_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                         const float* x, float* buffer, cudaStream_t stream) {
  require(s, hidden);
  const unsigned int blocks =
      moe_rows::blocks_for_rows(s.tokens * s.top_k + s.experts * s.capacity);
  if (moe_rows::four_wide(hidden, {x, buffer})) {
    permute_kernel<4><<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, x, buffer);
  } else {
    permute_kernel<1><<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, x, buffer);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

// One warp per token: the weighted sum of its kept choices' rows, in choice order.
void unpermute_tokens_cuda(const RouterShape& s, const RoutingCuda& r, std::int64_t hidden,
                           const float* buffer, float* y, cudaStream_t stream) {
  require(s, hidden);
  const unsigned int blocks = moe_rows::blocks_for_rows(s.tokens);
  if (moe_rows::four_wide(hidden, {buffer, y})) {
    moe_rows::gather_rows_kernel<4, true>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, buffer, y);
  } else {
    moe_rows::gather_rows_kernel<1, true>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, r, hidden, buffer, y);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
