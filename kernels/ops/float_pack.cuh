// kWidth consecutive floats in registers, loaded and stored in one instruction
// when kWidth is 4 (the pointer 16-byte aligned) or one by one when it is 1: the
// kernels that move rows or groups at memory speed are templates on the width,
// 4 on aligned views and 1 otherwise, with the same layout of threads.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace myriad::kernels::ops {

template <int kWidth>
struct alignas(sizeof(float) * kWidth) Floats {
  static_assert(kWidth == 1 || kWidth == 4, "packs of 1 or 4 floats");
  float v[kWidth];
};

template <int kWidth>
__device__ inline Floats<kWidth> load_floats(const float* p) {
  if constexpr (kWidth == 4) {
    const float4 f = *reinterpret_cast<const float4*>(p);
    return {{f.x, f.y, f.z, f.w}};
  } else {
    return {{*p}};
  }
}

template <int kWidth>
__device__ inline void store_floats(float* p, const Floats<kWidth>& f) {
  if constexpr (kWidth == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(f.v[0], f.v[1], f.v[2], f.v[3]);
  } else {
    *p = f.v[0];
  }
}

template <int kWidth>
__device__ inline Floats<kWidth> uniform(float s) {
  Floats<kWidth> f;
#pragma unroll
  for (int j = 0; j < kWidth; ++j) f.v[j] = s;
  return f;
}

inline bool aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace myriad::kernels::ops
