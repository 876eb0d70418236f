// The shape of a causal softmax over attention scores, shared by the CPU and
// CUDA backends (C++17, for nvcc).
#pragma once

#include <cstdint>
#include <string>

namespace myriad::kernels::ops {

struct SoftmaxShape {
  std::int64_t matrices = 0;  // batch * heads
  std::int64_t seq = 0;       // scores are [seq, seq] per matrix
  float scale = 1.0F;         // applied to the scores before the softmax
};

// Empty when the shape is usable, otherwise why not.
std::string causal_softmax_can_implement(const SoftmaxShape& s);

}  // namespace myriad::kernels::ops
