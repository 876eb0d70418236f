// Element storage of the CUDA kernels: fp32 or bf16 in memory, fp32 in registers.
// Kernels templated on the storage type T load with to_float and store with
// from_float<T> (round to nearest even, as Bf16::from_float on the CPU).
#pragma once

#include <cuda_bf16.h>

#include "kernels/ops/bf16.hpp"

namespace myriad::kernels::ops {

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) {
  return v;
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// The device type behind the host's storage types: float stays float, Bf16 is __nv_bfloat16.
inline const float* device_ptr(const float* p) { return p; }
inline float* device_ptr(float* p) { return p; }
inline const __nv_bfloat16* device_ptr(const Bf16* p) {
  static_assert(sizeof(Bf16) == sizeof(__nv_bfloat16), "Bf16 stores the bits of a bfloat16");
  return reinterpret_cast<const __nv_bfloat16*>(p);
}
inline __nv_bfloat16* device_ptr(Bf16* p) { return reinterpret_cast<__nv_bfloat16*>(p); }

}  // namespace myriad::kernels::ops
