// The arguments of a GEMM, shared by the CPU and CUDA backends (C++17, for
// nvcc): row-major C = alpha * op(A) * op(B) + beta * C with C [m, n].
#pragma once

#include <cstdint>

namespace myriad::kernels::ops {

enum class GemmLayout {
  nn,  // A [m, k], B [k, n]
  nt,  // A [m, k], B [n, k]
  tn,  // A [k, m], B [k, n]
};

struct GemmArguments {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  GemmLayout layout = GemmLayout::nn;
  float alpha = 1.0F;
  float beta = 0.0F;  // 0: C is written without being read (may hold NaN)
};

}  // namespace myriad::kernels::ops
