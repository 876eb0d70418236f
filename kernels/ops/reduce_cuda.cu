#include <cuda_bf16.h>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/reduce_cuda.hpp"
#include "kernels/ops/vector_map.cuh"

namespace myriad::kernels::ops {

namespace {

__device__ float apply(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::sum:
      return a + b;
    case ReduceOp::max:
      return fmaxf(a, b);
    case ReduceOp::min:
      return fminf(a, b);
  }
  return a + b;
}

// dst = dst op src, 16 bytes a load (vector_map.cuh): dst is read and written.
struct Reduce {
  ReduceOp op;
  __device__ void operator()(std::int64_t, const float* in, float* out) const {
    out[0] = apply(op, in[0], in[1]);
  }
};

}  // namespace

void reduce_cuda(ReduceOp op, float* dst, const float* src, std::int64_t n, cudaStream_t stream) {
  launch_map<float, 2, 1>({{dst, src}, {dst}}, n, Reduce{op}, stream);
}

void reduce_cuda(ReduceOp op, Bf16* dst, const Bf16* src, std::int64_t n, cudaStream_t stream) {
  static_assert(sizeof(Bf16) == sizeof(__nv_bfloat16), "Bf16 stores the bits of a bfloat16");
  auto* d = reinterpret_cast<__nv_bfloat16*>(dst);
  launch_map<__nv_bfloat16, 2, 1>({{d, reinterpret_cast<const __nv_bfloat16*>(src)}, {d}}, n,
                                  Reduce{op}, stream);
}

}  // namespace myriad::kernels::ops
