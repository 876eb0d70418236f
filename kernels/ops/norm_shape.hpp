// The shape of a LayerNorm/RMSNorm over the last dimension, shared by the CPU
// and CUDA backends (C++17, for nvcc).
#pragma once

#include <cstdint>
#include <string>

namespace myriad::kernels::ops {

struct NormShape {
  std::int64_t rows = 0;    // tokens
  std::int64_t hidden = 0;  // normalized dimension
  float eps = 1e-5F;
};

// Empty when the shape is usable, otherwise why not.
std::string norm_can_implement(const NormShape& s);

}  // namespace myriad::kernels::ops
