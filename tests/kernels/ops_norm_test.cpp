// LayerNorm and RMSNorm, CPU backend: forward against a float64 reference, and
// every backward output against finite differences of that reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/ops/norm.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::numeric_grad;
using testing::poisoned;
using testing::random_floats;
using testing::to_double;
using Vec = std::vector<double>;

// Float64 reference: LayerNorm when beta is given, RMSNorm otherwise.
Vec norm_reference(const NormShape& s, const Vec& x, const Vec& gamma, const Vec* beta) {
  Vec y(x.size());
  const auto h = static_cast<std::size_t>(s.hidden);
  for (std::size_t r = 0; r < static_cast<std::size_t>(s.rows); ++r) {
    double mean = 0.0;
    if (beta != nullptr) {
      for (std::size_t j = 0; j < h; ++j) mean += x[r * h + j];
      mean /= static_cast<double>(h);
    }
    double var = 0.0;
    for (std::size_t j = 0; j < h; ++j) var += (x[r * h + j] - mean) * (x[r * h + j] - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(h) + s.eps);
    for (std::size_t j = 0; j < h; ++j) {
      y[r * h + j] = (x[r * h + j] - mean) * rstd * gamma[j] + (beta ? (*beta)[j] : 0.0);
    }
  }
  return y;
}

constexpr std::array<std::array<std::int64_t, 2>, 5> kShapes{
    {{1, 1}, {1, 3}, {3, 17}, {17, 130}, {2, 257}}};

TEST(LayerNormCpu, ForwardAndBackwardMatchFloat64) {
  std::mt19937_64 rng(21);
  for (const auto& [rows, hidden] : kShapes) {
    const NormShape s{rows, hidden};
    SCOPED_TRACE(::testing::Message() << rows << " x " << hidden);
    const auto n = static_cast<std::size_t>(rows * hidden);
    const auto h = static_cast<std::size_t>(hidden);
    const auto x = random_floats(rng, n, -2.0F, 3.0F);
    const auto gamma = random_floats(rng, h, 0.5F, 1.5F);
    const auto beta = random_floats(rng, h);
    const auto dy = random_floats(rng, n);
    auto y = poisoned(n);
    auto mean = poisoned(static_cast<std::size_t>(rows));
    auto rstd = poisoned(static_cast<std::size_t>(rows));
    layer_norm_forward_cpu(s, x, gamma, beta, y, mean, rstd);
    const Vec xd = to_double(x), gd = to_double(gamma), bd = to_double(beta), dyd = to_double(dy);
    expect_close(y, norm_reference(s, xd, gd, &bd), 1e-5, 1e-5, "y");
    auto dx = poisoned(n);
    auto dgamma = poisoned(h);
    auto dbeta = poisoned(h);
    layer_norm_backward_cpu(s, dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
    const auto fx = [&](const Vec& v) { return norm_reference(s, v, gd, &bd); };
    const auto fg = [&](const Vec& v) { return norm_reference(s, xd, v, &bd); };
    const auto fb = [&](const Vec& v) { return norm_reference(s, xd, gd, &v); };
    expect_close(dx, numeric_grad(fx, xd, dyd), 1e-4, 1e-4, "dx");
    expect_close(dgamma, numeric_grad(fg, gd, dyd), 1e-4, 1e-4, "dgamma");
    expect_close(dbeta, numeric_grad(fb, bd, dyd), 1e-4, 1e-4, "dbeta");
  }
}

TEST(RmsNormCpu, ForwardAndBackwardMatchFloat64) {
  std::mt19937_64 rng(22);
  for (const auto& [rows, hidden] : kShapes) {
    const NormShape s{rows, hidden};
    SCOPED_TRACE(::testing::Message() << rows << " x " << hidden);
    const auto n = static_cast<std::size_t>(rows * hidden);
    const auto h = static_cast<std::size_t>(hidden);
    const auto x = random_floats(rng, n, -2.0F, 3.0F);
    const auto gamma = random_floats(rng, h, 0.5F, 1.5F);
    const auto dy = random_floats(rng, n);
    auto y = poisoned(n);
    auto rstd = poisoned(static_cast<std::size_t>(rows));
    rms_norm_forward_cpu(s, x, gamma, y, rstd);
    const Vec xd = to_double(x), gd = to_double(gamma), dyd = to_double(dy);
    expect_close(y, norm_reference(s, xd, gd, nullptr), 1e-5, 1e-5, "y");
    auto dx = poisoned(n);
    auto dgamma = poisoned(h);
    rms_norm_backward_cpu(s, dy, x, gamma, rstd, dx, dgamma);
    const auto fx = [&](const Vec& v) { return norm_reference(s, v, gd, nullptr); };
    const auto fg = [&](const Vec& v) { return norm_reference(s, xd, v, nullptr); };
    expect_close(dx, numeric_grad(fx, xd, dyd), 1e-4, 1e-4, "dx");
    expect_close(dgamma, numeric_grad(fg, gd, dyd), 1e-4, 1e-4, "dgamma");
  }
}

TEST(NormCpu, RefusesBadShapesAndDescribesTraffic) {
  EXPECT_FALSE(norm_can_implement(NormShape{0, 4}).empty());
  EXPECT_FALSE(norm_can_implement(NormShape{4, 4, 0.0F}).empty());
  std::vector<float> x(12), g(4), y(11), r(3);
  EXPECT_THROW(rms_norm_forward_cpu(NormShape{3, 4}, x, g, y, r), std::invalid_argument);
  const models::Op op = layer_norm_op(NormShape{8, 1024}, 2.0);
  EXPECT_DOUBLE_EQ(op.bytes, 2.0 * 8 * 1024 * 2.0);
  EXPECT_DOUBLE_EQ(op.backward_bytes, 3.0 * 8 * 1024 * 2.0);
}

}  // namespace
}  // namespace myriad::kernels::ops
