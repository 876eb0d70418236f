// GeLU (tanh approximation), SwiGLU and bias+GeLU, CPU backend: forward against
// float64, backward against finite differences of the float64 forward.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "kernels/ops/activation.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::numeric_grad;
using testing::poisoned;
using testing::random_floats;
using testing::to_double;
using Vec = std::vector<double>;

double gelu_ref(double x) {
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

Vec gelu_all(const Vec& x) {
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = gelu_ref(x[i]);
  return y;
}

Vec swiglu_ref(const Vec& gate, const Vec& up) {
  Vec y(gate.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
  return y;
}

TEST(GeluCpu, ForwardAndBackwardMatchFloat64) {
  std::mt19937_64 rng(31);
  for (const std::size_t n : {1U, 3U, 17U, 130U, 1000U}) {
    const auto x = random_floats(rng, n, -6.0F, 6.0F);
    const auto dy = random_floats(rng, n);
    auto y = poisoned(n);
    auto dx = poisoned(n);
    gelu_forward_cpu(x, y);
    gelu_backward_cpu(dy, x, dx);
    expect_close(y, gelu_all(to_double(x)), 1e-6, 1e-5, "y");
    expect_close(dx, numeric_grad(gelu_all, to_double(x), to_double(dy)), 1e-5, 1e-4, "dx");
  }
}

TEST(SwigluCpu, ForwardAndBackwardMatchFloat64) {
  std::mt19937_64 rng(32);
  for (const std::size_t n : {1U, 3U, 17U, 130U}) {
    const auto gate = random_floats(rng, n, -6.0F, 6.0F);
    const auto up = random_floats(rng, n, -2.0F, 2.0F);
    const auto dy = random_floats(rng, n);
    auto y = poisoned(n);
    auto dgate = poisoned(n);
    auto dup = poisoned(n);
    swiglu_forward_cpu(gate, up, y);
    swiglu_backward_cpu(dy, gate, up, dgate, dup);
    const Vec gd = to_double(gate), ud = to_double(up), dyd = to_double(dy);
    expect_close(y, swiglu_ref(gd, ud), 1e-6, 1e-5, "y");
    const auto fg = [&](const Vec& v) { return swiglu_ref(v, ud); };
    const auto fu = [&](const Vec& v) { return swiglu_ref(gd, v); };
    expect_close(dgate, numeric_grad(fg, gd, dyd), 1e-5, 1e-4, "dgate");
    expect_close(dup, numeric_grad(fu, ud, dyd), 1e-5, 1e-4, "dup");
  }
}

Vec bias_gelu_ref(std::int64_t cols, const Vec& x, const Vec& bias) {
  Vec y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = gelu_ref(x[i] + bias[i % static_cast<std::size_t>(cols)]);
  }
  return y;
}

TEST(BiasGeluCpu, ForwardAndBackwardMatchFloat64) {
  std::mt19937_64 rng(33);
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 17}, {17, 130}}) {
    const auto n = static_cast<std::size_t>(rows * cols);
    const auto c = static_cast<std::size_t>(cols);
    const auto x = random_floats(rng, n, -4.0F, 4.0F);
    const auto bias = random_floats(rng, c);
    const auto dy = random_floats(rng, n);
    auto y = poisoned(n);
    auto dx = poisoned(n);
    auto dbias = poisoned(c);
    bias_gelu_forward_cpu(rows, cols, x, bias, y);
    bias_gelu_backward_cpu(rows, cols, dy, x, bias, dx, dbias);
    const Vec xd = to_double(x), bd = to_double(bias), dyd = to_double(dy);
    const std::int64_t ncols = cols;
    expect_close(y, bias_gelu_ref(ncols, xd, bd), 1e-6, 1e-5, "y");
    const auto fx = [&](const Vec& v) { return bias_gelu_ref(ncols, v, bd); };
    const auto fb = [&](const Vec& v) { return bias_gelu_ref(ncols, xd, v); };
    expect_close(dx, numeric_grad(fx, xd, dyd), 1e-5, 1e-4, "dx");
    expect_close(dbias, numeric_grad(fb, bd, dyd), 1e-4, 1e-4, "dbias");
  }
}

TEST(ActivationCpu, RefusesMismatchedSizesAndDescribesTraffic) {
  std::vector<float> x(4), y(3);
  EXPECT_THROW(gelu_forward_cpu(x, y), std::invalid_argument);
  EXPECT_DOUBLE_EQ(swiglu_op(100, 2.0).bytes, 3.0 * 100 * 2.0);
  EXPECT_DOUBLE_EQ(gelu_op(100, 2.0).backward_bytes, 3.0 * 100 * 2.0);
}

}  // namespace
}  // namespace myriad::kernels::ops
