// Causal softmax, CPU backend: forward against float64 (masked entries exactly
// zero), backward against finite differences of the float64 forward.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/ops/causal_softmax.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::numeric_grad;
using testing::poisoned;
using testing::random_floats;
using testing::to_double;
using Vec = std::vector<double>;

Vec softmax_reference(const SoftmaxShape& s, const Vec& x) {
  Vec y(x.size(), 0.0);
  const auto n = static_cast<std::size_t>(s.seq);
  for (std::size_t row = 0; row < x.size() / n; ++row) {
    const std::size_t i = row % n;
    double sum = 0.0;
    for (std::size_t j = 0; j <= i; ++j) sum += std::exp(s.scale * x[row * n + j]);
    for (std::size_t j = 0; j <= i; ++j) y[row * n + j] = std::exp(s.scale * x[row * n + j]) / sum;
  }
  return y;
}

TEST(CausalSoftmaxCpu, ForwardAndBackwardMatchFloat64) {
  std::mt19937_64 rng(91);
  for (const auto& [matrices, seq] :
       {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 5}, {2, 17}}) {
    const SoftmaxShape s{matrices, seq, 0.7F};
    const auto n = static_cast<std::size_t>(matrices * seq * seq);
    const auto x = random_floats(rng, n, -4.0F, 4.0F);
    const auto dy = random_floats(rng, n);
    auto y = poisoned(n);
    auto dx = poisoned(n);
    causal_softmax_forward_cpu(s, x, y);
    causal_softmax_backward_cpu(s, dy, y, dx);
    const auto f = [&s](const Vec& v) { return softmax_reference(s, v); };
    expect_close(y, f(to_double(x)), 1e-7, 1e-5, "y");
    expect_close(dx, numeric_grad(f, to_double(x), to_double(dy)), 1e-6, 1e-4, "dx");
  }
}

TEST(CausalSoftmaxCpu, RefusesBadShapesAndDescribesTraffic) {
  EXPECT_FALSE(causal_softmax_can_implement(SoftmaxShape{1, 0}).empty());
  EXPECT_FALSE(causal_softmax_can_implement(SoftmaxShape{1, 4, 0.0F}).empty());
  std::vector<float> x(15), y(16);
  EXPECT_THROW(causal_softmax_forward_cpu(SoftmaxShape{1, 4}, x, y), std::invalid_argument);
  EXPECT_DOUBLE_EQ(causal_softmax_op(SoftmaxShape{2, 8}, 2.0).bytes, 2.0 * 128 * 2.0);
}

}  // namespace
}  // namespace myriad::kernels::ops
