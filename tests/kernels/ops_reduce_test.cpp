// The collectives' reduction, CPU backend: sum, max and min over fp32 and bf16
// buffers against float64, and the many-source form with an averaging scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/ops/reduce.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::random_floats;

double apply_ref(ReduceOp op, double a, double b) {
  if (op == ReduceOp::sum) return a + b;
  return op == ReduceOp::max ? std::max(a, b) : std::min(a, b);
}

TEST(ReduceCpu, Fp32AndBf16MatchFloat64) {
  std::mt19937_64 rng(81);
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    for (const std::size_t n : {1U, 3U, 130U}) {
      auto dst = random_floats(rng, n);
      const auto src = random_floats(rng, n);
      std::vector<double> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = apply_ref(op, dst[i], src[i]);
      reduce_cpu(op, std::span<float>(dst), std::span<const float>(src));
      expect_close(dst, want, 0.0, 1e-7, "fp32");
      std::vector<Bf16> bd(n), bs(n);
      for (std::size_t i = 0; i < n; ++i) {
        bd[i] = Bf16::from_float(src[i] * 3.0F);
        bs[i] = Bf16::from_float(dst[i]);
        want[i] = apply_ref(op, bd[i].to_float(), bs[i].to_float());
      }
      reduce_cpu(op, std::span<Bf16>(bd), std::span<const Bf16>(bs));
      std::vector<float> got(n);
      for (std::size_t i = 0; i < n; ++i) got[i] = bd[i].to_float();
      expect_close(got, want, 0.0, 0x1p-8, "bf16");
    }
  }
}

TEST(ReduceCpu, ManySourcesAverage) {
  std::mt19937_64 rng(82);
  std::vector<std::vector<float>> bufs(7);
  for (auto& b : bufs) b = random_floats(rng, 17);
  const std::vector<std::span<const float>> srcs(bufs.begin(), bufs.end());
  auto dst = testing::poisoned(17);
  reduce_many_cpu(ReduceOp::sum, srcs, dst, 1.0F / 7.0F);
  std::vector<double> want(17, 0.0);
  for (const auto& b : bufs) {
    for (std::size_t i = 0; i < 17; ++i) want[i] += b[i] / 7.0;
  }
  expect_close(dst, want, 1e-6, 1e-6, "average");
  EXPECT_THROW(reduce_many_cpu(ReduceOp::sum, {}, dst), std::invalid_argument);
  EXPECT_DOUBLE_EQ(reduce_op(100, 4.0).bytes, 3.0 * 100 * 4.0);
}

}  // namespace
}  // namespace myriad::kernels::ops
