// The shape of a top-k MoE routing, shared by the CPU and CUDA backends (C++17,
// for nvcc).
#pragma once

#include <cstdint>
#include <string>

namespace myriad::kernels::ops {

struct RouterShape {
  std::int64_t tokens = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 1;
  std::int64_t capacity = 0;  // slots per expert; assignments beyond it are dropped
  bool renormalize = true;    // weights of the k chosen experts sum to 1
};

// Empty when the shape is usable, otherwise why not.
std::string router_can_implement(const RouterShape& s);

}  // namespace myriad::kernels::ops
