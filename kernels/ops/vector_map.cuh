// Elementwise kernels at memory speed: every thread moves 16 bytes per tensor per
// step (4 floats or 8 bf16 in one load and one store instruction), over a
// grid-stride loop, and finishes the elements that do not fill a pack one by
// one. A kernel is a functor on floats: F{}(i, in, out) reads in[0..kIn) and
// writes out[0..kOut) for element i (i for what depends on the position, such as
// a bias column). When any pointer is not 16-byte aligned (an offset view),
// every element takes the one-by-one path: same results, slower.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/float_pack.cuh"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/storage.cuh"

namespace myriad::kernels::ops {

template <typename T>
inline constexpr int kPackElements = 16 / static_cast<int>(sizeof(T));

template <typename T>
struct alignas(16) Pack {
  T v[kPackElements<T>];
};

template <typename T, int kIn, int kOut>
struct MapPointers {
  const T* in[kIn];
  T* out[kOut];
};

template <typename T, int kIn, int kOut, typename F>
__global__ void map_kernel(MapPointers<T, kIn, kOut> p, std::int64_t n, std::int64_t packs, F f) {
  constexpr int kE = kPackElements<T>;
  for (std::int64_t k = grid_index(); k < packs; k += grid_stride()) {
    Pack<T> in[kIn];
    Pack<T> out[kOut];
#pragma unroll
    for (int a = 0; a < kIn; ++a) in[a] = reinterpret_cast<const Pack<T>*>(p.in[a])[k];
#pragma unroll
    for (int e = 0; e < kE; ++e) {
      float x[kIn];
      float y[kOut];
#pragma unroll
      for (int a = 0; a < kIn; ++a) x[a] = to_float(in[a].v[e]);
      f(k * kE + e, x, y);
#pragma unroll
      for (int b = 0; b < kOut; ++b) out[b].v[e] = from_float<T>(y[b]);
    }
#pragma unroll
    for (int b = 0; b < kOut; ++b) reinterpret_cast<Pack<T>*>(p.out[b])[k] = out[b];
  }
  for (std::int64_t i = packs * kE + grid_index(); i < n; i += grid_stride()) {
    float x[kIn];
    float y[kOut];
#pragma unroll
    for (int a = 0; a < kIn; ++a) x[a] = to_float(p.in[a][i]);
    f(i, x, y);
#pragma unroll
    for (int b = 0; b < kOut; ++b) p.out[b][i] = from_float<T>(y[b]);
  }
}

inline bool aligned16(const void* p) { return aligned(p, 16); }

// Runs f over n elements of the tensors in `p` on `stream`.
template <typename T, int kIn, int kOut, typename F>
void launch_map(const MapPointers<T, kIn, kOut>& p, std::int64_t n, F f, cudaStream_t stream) {
  if (n <= 0) return;
  bool aligned = true;
  for (int a = 0; a < kIn; ++a) aligned = aligned && aligned16(p.in[a]);
  for (int b = 0; b < kOut; ++b) aligned = aligned && aligned16(p.out[b]);
  const std::int64_t packs = aligned ? n / kPackElements<T> : 0;
  const std::int64_t work = packs > 0 ? packs : n;
  map_kernel<T, kIn, kOut, F><<<blocks_for(work), kThreadsPerBlock, 0, stream>>>(p, n, packs, f);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
