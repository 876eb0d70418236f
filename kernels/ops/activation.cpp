#include "kernels/ops/activation.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace myriad::kernels::ops {

namespace {

constexpr float kGeluCoeff = 0.044715F;
constexpr float kSqrt2OverPi = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);

void require_same(std::size_t expected, std::size_t got, const char* what) {
  if (got != expected)
    throw std::invalid_argument(std::string("activation: wrong size for ") + what);
}

float sigmoid(float x) { return 1.0F / (1.0F + std::exp(-x)); }

// The tanh approximation, through the identity 0.5 (1 + tanh u) = sigmoid(2u):
// one exp, as SwiGLU, where std::tanh made GeLU several times slower than
// SwiGLU at the same size (calibration's CPU rows; kernels/ops/ops_benchmark).
// Near u = 0 the sigmoid's error is absolute (~1e-7), as the output needs.
float gelu(float x) {
  const float u = kSqrt2OverPi * (x + kGeluCoeff * x * x * x);
  return x * sigmoid(2.0F * u);
}

// d/dx: s + x s (1 - s) 2 du/dx, with s = sigmoid(2u) (since 1 - tanh^2 u = 4 s (1 - s)).
float gelu_grad(float x) {
  const float u = kSqrt2OverPi * (x + kGeluCoeff * x * x * x);
  const float s = sigmoid(2.0F * u);
  const float dinner = kSqrt2OverPi * (1.0F + 3.0F * kGeluCoeff * x * x);
  return s + 2.0F * x * s * (1.0F - s) * dinner;
}

std::size_t count(std::int64_t rows, std::int64_t cols) {
  if (rows < 1 || cols < 1) throw std::invalid_argument("activation: rows and cols must be >= 1");
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

}  // namespace

void gelu_forward_cpu(std::span<const float> x, std::span<float> y) {
  require_same(x.size(), y.size(), "y");
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = gelu(x[i]);
}

void gelu_backward_cpu(std::span<const float> dy, std::span<const float> x, std::span<float> dx) {
  require_same(x.size(), dy.size(), "dy");
  require_same(x.size(), dx.size(), "dx");
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = dy[i] * gelu_grad(x[i]);
}

void swiglu_forward_cpu(std::span<const float> gate, std::span<const float> up,
                        std::span<float> y) {
  require_same(gate.size(), up.size(), "up");
  require_same(gate.size(), y.size(), "y");
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

void swiglu_backward_cpu(std::span<const float> dy, std::span<const float> gate,
                         std::span<const float> up, std::span<float> dgate, std::span<float> dup) {
  for (const std::size_t n : {dy.size(), up.size(), dgate.size(), dup.size()}) {
    require_same(gate.size(), n, "dy/up/dgate/dup");
  }
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const float g = gate[i];
    const float sg = sigmoid(g);
    dup[i] = dy[i] * g * sg;
    dgate[i] = dy[i] * up[i] * sg * (1.0F + g * (1.0F - sg));
  }
}

void bias_gelu_forward_cpu(std::int64_t rows, std::int64_t cols, std::span<const float> x,
                           std::span<const float> bias, std::span<float> y) {
  const std::size_t n = count(rows, cols);
  require_same(n, x.size(), "x");
  require_same(n, y.size(), "y");
  require_same(static_cast<std::size_t>(cols), bias.size(), "bias");
  const auto c = static_cast<std::size_t>(cols);
  for (std::size_t i = 0; i < n; ++i) y[i] = gelu(x[i] + bias[i % c]);
}

void bias_gelu_backward_cpu(std::int64_t rows, std::int64_t cols, std::span<const float> dy,
                            std::span<const float> x, std::span<const float> bias,
                            std::span<float> dx, std::span<float> dbias) {
  const std::size_t n = count(rows, cols);
  for (const std::size_t m : {x.size(), dy.size(), dx.size()}) require_same(n, m, "x/dy/dx");
  const auto c = static_cast<std::size_t>(cols);
  require_same(c, bias.size(), "bias");
  require_same(c, dbias.size(), "dbias");
  std::vector<double> db(c, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    dx[i] = dy[i] * gelu_grad(x[i] + bias[i % c]);
    db[i % c] += dx[i];
  }
  for (std::size_t j = 0; j < c; ++j) dbias[j] = static_cast<float>(db[j]);
}

models::Op gelu_op(std::int64_t n, double elem_bytes) {
  const auto e = static_cast<double>(n);
  models::Op op = models::make_elementwise("gelu", 2.0 * e * elem_bytes, 8.0 * e);
  op.backward_bytes = 3.0 * e * elem_bytes;
  return op;
}

models::Op swiglu_op(std::int64_t n, double elem_bytes) {
  const auto e = static_cast<double>(n);
  models::Op op = models::make_elementwise("swiglu", 3.0 * e * elem_bytes, 6.0 * e);
  op.backward_bytes = 5.0 * e * elem_bytes;
  return op;
}

}  // namespace myriad::kernels::ops
