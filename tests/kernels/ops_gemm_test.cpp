// GEMM, CPU backend: every layout at odd shapes against a float64 reference, in
// fp32 and in bf16 storage (inputs rounded to bf16, fp32 accumulation, output
// rounded once), with alpha/beta, and the cost-model descriptor.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <tuple>

#include "kernels/ops/gemm.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::poisoned;
using testing::random_floats;

// C = alpha * op(A) op(B) + beta * C in float64, from the stored layouts.
std::vector<double> reference(const GemmArguments& g, const std::vector<double>& a,
                              const std::vector<double>& b, const std::vector<double>& c) {
  std::vector<double> out(static_cast<std::size_t>(g.m * g.n));
  for (std::int64_t i = 0; i < g.m; ++i) {
    for (std::int64_t j = 0; j < g.n; ++j) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < g.k; ++p) {
        const double av = g.layout == GemmLayout::tn ? a[static_cast<std::size_t>(p * g.m + i)]
                                                     : a[static_cast<std::size_t>(i * g.k + p)];
        const double bv = g.layout == GemmLayout::nt ? b[static_cast<std::size_t>(j * g.k + p)]
                                                     : b[static_cast<std::size_t>(p * g.n + j)];
        acc += av * bv;
      }
      const auto idx = static_cast<std::size_t>(i * g.n + j);
      out[idx] = g.alpha * acc + (g.beta != 0.0F ? g.beta * c[idx] : 0.0);
    }
  }
  return out;
}

constexpr std::array kLayouts{GemmLayout::nn, GemmLayout::nt, GemmLayout::tn};
constexpr std::array kShapes{std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1},
                             std::tuple<std::int64_t, std::int64_t, std::int64_t>{3, 17, 5},
                             std::tuple<std::int64_t, std::int64_t, std::int64_t>{17, 130, 33},
                             std::tuple<std::int64_t, std::int64_t, std::int64_t>{64, 3, 130}};

TEST(GemmCpu, Fp32EveryLayoutMatchesFloat64) {
  std::mt19937_64 rng(1);
  for (const GemmLayout layout : kLayouts) {
    for (const auto& [m, n, k] : kShapes) {
      const GemmArguments g{m, n, k, layout};
      SCOPED_TRACE(::testing::Message() << "layout " << static_cast<int>(layout) << " m " << m
                                        << " n " << n << " k " << k);
      const auto a = random_floats(rng, static_cast<std::size_t>(m * k));
      const auto b = random_floats(rng, static_cast<std::size_t>(k * n));
      auto c = poisoned(static_cast<std::size_t>(m * n));  // beta = 0: C is never read
      gemm_cpu(g, a, b, c);
      const auto want = reference(g, testing::to_double(a), testing::to_double(b), {});
      expect_close(c, want, 2e-6 * static_cast<double>(k), 1e-6, "C");
    }
  }
}

TEST(GemmCpu, AlphaBetaReadC) {
  std::mt19937_64 rng(2);
  const GemmArguments g{17, 9, 13, GemmLayout::nt, 2.0F, 0.5F};
  const auto a = random_floats(rng, std::size_t{17} * 13);
  const auto b = random_floats(rng, std::size_t{9} * 13);
  auto c = random_floats(rng, std::size_t{17} * 9);
  const auto want =
      reference(g, testing::to_double(a), testing::to_double(b), testing::to_double(c));
  gemm_cpu(g, a, b, c);
  expect_close(c, want, 1e-5, 1e-6, "C");
}

std::vector<Bf16> to_bf16(const std::vector<float>& x) {
  std::vector<Bf16> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = Bf16::from_float(x[i]);
  return out;
}

std::vector<double> widen(const std::vector<Bf16>& x) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i].to_float();
  return out;
}

TEST(GemmCpu, Bf16StorageFp32Accumulation) {
  std::mt19937_64 rng(3);
  for (const GemmLayout layout : kLayouts) {
    for (const auto& [m, n, k] : kShapes) {
      const GemmArguments g{m, n, k, layout};
      SCOPED_TRACE(::testing::Message() << "layout " << static_cast<int>(layout) << " k " << k);
      const auto a = to_bf16(random_floats(rng, static_cast<std::size_t>(m * k)));
      const auto b = to_bf16(random_floats(rng, static_cast<std::size_t>(k * n)));
      std::vector<Bf16> c(static_cast<std::size_t>(m * n), Bf16::from_float(std::nanf("")));
      gemm_cpu(g, a, b, c);
      const auto want = reference(g, widen(a), widen(b), {});
      std::vector<float> got(c.size());
      for (std::size_t i = 0; i < c.size(); ++i) got[i] = c[i].to_float();
      // One bf16 rounding of the output (2^-8 relative) on top of fp32 accumulation.
      expect_close(got, want, 2e-6 * static_cast<double>(k), 0x1p-8, "C");
    }
  }
}

TEST(GemmCpu, RefusesMismatchedBuffers) {
  const GemmArguments g{4, 5, 6, GemmLayout::nn};
  EXPECT_TRUE(gemm_can_implement(g, 24, 30, 20).empty());
  EXPECT_FALSE(gemm_can_implement(g, 24, 30, 21).empty());
  EXPECT_FALSE(gemm_can_implement(GemmArguments{0, 5, 6}, 0, 30, 0).empty());
  std::vector<float> a(24);
  std::vector<float> b(29);
  std::vector<float> c(20);
  EXPECT_THROW(gemm_cpu(g, a, b, c), std::invalid_argument);
}

TEST(GemmCpu, DescriptorCountsTwoMnkFlops) {
  const models::Op op = gemm_op(GemmArguments{17, 130, 33, GemmLayout::nt}, 2.0);
  EXPECT_EQ(op.cls, models::OpClass::gemm);
  EXPECT_DOUBLE_EQ(op.flops, 2.0 * 17 * 130 * 33);
  EXPECT_DOUBLE_EQ(op.bytes, 2.0 * (17 * 33 + 33 * 130 + 17 * 130));
}

}  // namespace
}  // namespace myriad::kernels::ops
