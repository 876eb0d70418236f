// The shape of an fp8 quantization with group scales, shared by the CPU and CUDA
// backends (C++17, for nvcc).
#pragma once

#include <cstdint>
#include <string>

namespace myriad::kernels::ops {

enum class QuantScaling {
  per_token,    // groups run along a row: scales [rows, ceil(cols / group)]
  per_channel,  // groups run down a column: scales [ceil(rows / group), cols]
};

struct QuantShape {
  std::int64_t rows = 0;  // tokens
  std::int64_t cols = 0;  // channels
  QuantScaling scaling = QuantScaling::per_token;
  std::int64_t group = 128;
};

// Empty when the shape is usable, otherwise why not.
std::string quantize_can_implement(const QuantShape& s);
// Number of fp32 scales the shape needs.
std::int64_t quant_scale_count(const QuantShape& s);

}  // namespace myriad::kernels::ops
