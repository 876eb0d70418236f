// Row moves of the MoE token permute and unpermute and their backward
// (moe_router_cuda.cu, moe_router_backward_cuda.cu): one warp per row of
// `hidden` floats, warps walking the rows grid-stride; each lane moves kUnroll
// packs of kWidth floats per step, all loads issued before the first store, so
// that enough bytes are in flight to reach memory speed. kWidth is 4 (16-byte
// loads and stores) when every pointer is 16-byte aligned and hidden a multiple
// of 4, otherwise 1 (same layout of threads, same results).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "kernels/ops/float_pack.cuh"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/moe_router_cuda.hpp"

namespace myriad::kernels::ops::moe_rows {

constexpr int kWarp = 32;
constexpr int kUnroll = 4;

__device__ inline int lane() { return static_cast<int>(threadIdx.x % kWarp); }
__device__ inline std::int64_t warp_index() { return grid_index() / kWarp; }
__device__ inline std::int64_t warp_stride() { return grid_stride() / kWarp; }

// The buffer row ([experts * capacity]) of choice a, or -1 when it was dropped.
__device__ inline std::int64_t slot_row(const RouterShape& s, const RoutingCuda& r,
                                        std::int64_t a) {
  const std::int32_t slot = r.slot[a];
  return slot < 0 ? -1 : static_cast<std::int64_t>(r.expert[a]) * s.capacity + slot;
}

// Whether buffer row b holds no choice: the kept choices of an expert take its
// slots 0 .. load - 1 (the router's capacity rule), the rest stay empty.
__device__ inline bool empty_slot(const RouterShape& s, const RoutingCuda& r, std::int64_t b) {
  const std::int64_t e = b / s.capacity;
  return b - e * s.capacity >= r.load[e];
}

// Pack p of a row, or zeros past its end.
template <int kWidth>
__device__ inline Floats<kWidth> load_pack(const float* row, std::int64_t p, std::int64_t packs) {
  return p < packs ? load_floats<kWidth>(row + p * kWidth) : uniform<kWidth>(0.0F);
}

// dst = src, or w * src when kScaled, over `packs` packs; the warp's lanes together.
template <int kWidth, bool kScaled>
__device__ void move_row(const float* src, float w, float* dst, std::int64_t packs) {
  for (std::int64_t p0 = lane(); p0 < packs; p0 += kWarp * kUnroll) {
    Floats<kWidth> v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_pack<kWidth>(src, p0 + u * kWarp, packs);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (p0 + u * kWarp >= packs) continue;
      if constexpr (kScaled) {
#pragma unroll
        for (int j = 0; j < kWidth; ++j) v[u].v[j] = w * v[u].v[j];
      }
      store_floats(dst + (p0 + u * kWarp) * kWidth, v[u]);
    }
  }
}

template <int kWidth>
__device__ void zero_row(float* dst, std::int64_t packs) {
  for (std::int64_t p = lane(); p < packs; p += kWarp) {
    store_floats(dst + p * kWidth, uniform<kWidth>(0.0F));
  }
}

// out[t] = sum over the token's kept choices a, in choice order, of rows[slot_row(a)],
// times weight[a] when kWeighted: one warp per token, the sum per element in the
// CPU backend's order.
template <int kWidth, bool kWeighted>
__global__ void gather_rows_kernel(RouterShape s, RoutingCuda r, std::int64_t hidden,
                                   const float* rows, float* out) {
  const std::int64_t packs = hidden / kWidth;
  for (std::int64_t t = warp_index(); t < s.tokens; t += warp_stride()) {
    for (std::int64_t p0 = lane(); p0 < packs; p0 += kWarp * kUnroll) {
      Floats<kWidth> acc[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc[u] = uniform<kWidth>(0.0F);
      for (std::int64_t c = 0; c < s.top_k; ++c) {
        const std::int64_t a = t * s.top_k + c;
        const std::int64_t row = slot_row(s, r, a);
        if (row < 0) continue;
        const float* src = rows + row * hidden;
        Floats<kWidth> v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = load_pack<kWidth>(src, p0 + u * kWarp, packs);
        if constexpr (kWeighted) {
          const float w = r.weight[a];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
            for (int j = 0; j < kWidth; ++j) acc[u].v[j] += w * v[u].v[j];
          }
        } else {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
            for (int j = 0; j < kWidth; ++j) acc[u].v[j] += v[u].v[j];
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t p = p0 + u * kWarp;
        if (p < packs) store_floats(out + t * hidden + p * kWidth, acc[u]);
      }
    }
  }
}

// Whether the 4-wide kernels apply to rows of `hidden` floats at these pointers.
inline bool four_wide(std::int64_t hidden, std::initializer_list<const void*> pointers) {
  bool ok = hidden % 4 == 0;
  for (const void* p : pointers) ok = ok && aligned(p, 16);
  return ok;
}

// Blocks for one warp per row.
inline unsigned int blocks_for_rows(std::int64_t rows) { return blocks_for(rows * kWarp); }

}  // namespace myriad::kernels::ops::moe_rows
