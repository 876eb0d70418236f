#include "models/ops/op.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace myriad::models {

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::gemm:
      return "gemm";
    case OpClass::attention:
      return "attention";
    case OpClass::elementwise:
      return "elementwise";
    case OpClass::optimizer:
      return "optimizer";
  }
  return "?";
}

Op make_gemm(std::string_view name, double m, double n, double k, double batch, double elem_bytes,
             bool fp8) {
  Op op;
  op.name = name;
  op.cls = OpClass::gemm;
  op.flops = 2 * m * n * k * batch;
  op.bytes = (m * k + k * n + m * n) * elem_bytes * batch;
  op.gemm = GemmShape{m, n, k, batch};
  op.fp8 = fp8;
  return op;
}

Op make_elementwise(std::string_view name, double bytes, double flops) {
  Op op;
  op.name = name;
  op.cls = OpClass::elementwise;
  op.bytes = bytes;
  op.flops = flops;
  return op;
}

Op attention_backward_of(const Op& forward) {
  Op op = forward;
  op.flops = 2.5 * forward.flops;
  op.bytes = 2 * forward.bytes;
  op.backward = true;
  return op;
}

std::string_view kernel_family(const Op& op, std::span<char> buffer) {
  if (op.kernel.empty()) return op.name;
  const std::string_view direction = op.backward ? ".bwd" : ".fwd";
  const std::size_t size = op.kernel.size() + direction.size();
  if (size > buffer.size()) {
    throw std::length_error("kernel_family: the kernel label '" + std::string(op.kernel) +
                            "' is longer than " + std::to_string(buffer.size() - 4) +
                            " characters");
  }
  std::copy(op.kernel.begin(), op.kernel.end(), buffer.begin());
  std::copy(direction.begin(), direction.end(),
            buffer.begin() + static_cast<std::ptrdiff_t>(op.kernel.size()));
  return {buffer.data(), size};
}

std::string kernel_family(const Op& op) {
  std::array<char, 64> buffer{};
  return std::string(kernel_family(op, buffer));
}

}  // namespace myriad::models
