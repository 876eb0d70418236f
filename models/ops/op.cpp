#include "models/ops/op.hpp"

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

std::string kernel_family(const Op& op) {
  if (op.kernel.empty()) return std::string(op.name);
  return std::string(op.kernel) + (op.backward ? ".bwd" : ".fwd");
}

}  // namespace myriad::models
