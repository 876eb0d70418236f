#include "kernels/ops/reduce.hpp"

#include <algorithm>
#include <stdexcept>

namespace myriad::kernels::ops {

namespace {

float apply(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::sum:
      return a + b;
    case ReduceOp::max:
      return std::max(a, b);
    case ReduceOp::min:
      return std::min(a, b);
  }
  throw std::invalid_argument("reduce: unknown op");
}

void require_same(std::size_t a, std::size_t b) {
  if (a != b) throw std::invalid_argument("reduce: buffers differ in size");
}

}  // namespace

void reduce_cpu(ReduceOp op, std::span<float> dst, std::span<const float> src) {
  require_same(dst.size(), src.size());
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = apply(op, dst[i], src[i]);
}

void reduce_cpu(ReduceOp op, std::span<Bf16> dst, std::span<const Bf16> src) {
  require_same(dst.size(), src.size());
  for (std::size_t i = 0; i < dst.size(); ++i) {
    dst[i] = Bf16::from_float(apply(op, dst[i].to_float(), src[i].to_float()));
  }
}

void reduce_many_cpu(ReduceOp op, std::span<const std::span<const float>> srcs,
                     std::span<float> dst, float scale) {
  if (srcs.empty()) throw std::invalid_argument("reduce: no sources");
  for (const auto& s : srcs) require_same(dst.size(), s.size());
  for (std::size_t i = 0; i < dst.size(); ++i) {
    float acc = srcs[0][i];
    for (std::size_t r = 1; r < srcs.size(); ++r) acc = apply(op, acc, srcs[r][i]);
    dst[i] = acc * scale;
  }
}

models::Op reduce_op(std::int64_t n, double elem_bytes) {
  const auto e = static_cast<double>(n);
  return models::make_elementwise("reduce", 3.0 * e * elem_bytes, e);
}

}  // namespace myriad::kernels::ops
