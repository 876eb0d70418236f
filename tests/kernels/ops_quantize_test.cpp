// Quantize/dequantize, CPU backend: bf16 within half an ulp; fp8 E4M3 with group
// scales per token or per channel: scales equal amax/448 per group, every
// element within half an fp8 ulp of its scaled value, groups' maxima exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/ops/quantize.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::poisoned;
using testing::random_floats;

TEST(QuantizeCpu, Bf16RoundTripWithinHalfUlp) {
  std::mt19937_64 rng(71);
  const auto x = random_floats(rng, 1031, -50.0F, 50.0F);
  std::vector<Bf16> q(x.size(), Bf16::from_float(std::nanf("")));
  auto back = poisoned(x.size());
  quantize_bf16_cpu(x, q);
  dequantize_bf16_cpu(q, back);
  expect_close(back, testing::to_double(x), 0.0, 0x1p-8, "bf16");
}

// Reference scales, float64: amax of each group / 448, 1 for an all-zero group.
std::vector<double> reference_scales(const QuantShape& s, const std::vector<float>& x) {
  std::vector<double> amax(static_cast<std::size_t>(quant_scale_count(s)), 0.0);
  const std::int64_t groups_per_row = (s.cols + s.group - 1) / s.group;
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const auto idx = static_cast<std::size_t>(s.scaling == QuantScaling::per_token
                                                    ? r * groups_per_row + c / s.group
                                                    : (r / s.group) * s.cols + c);
      amax[idx] = std::max(
          amax[idx], std::fabs(static_cast<double>(x[static_cast<std::size_t>(r * s.cols + c)])));
    }
  }
  for (double& a : amax) a = a > 0.0 ? a / 448.0 : 1.0;
  return amax;
}

TEST(QuantizeCpu, Fp8GroupScalesPerTokenAndPerChannel) {
  std::mt19937_64 rng(72);
  for (const QuantScaling scaling : {QuantScaling::per_token, QuantScaling::per_channel}) {
    for (const auto& [rows, cols] :
         {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 130}, {130, 3}, {17, 257}}) {
      const QuantShape s{rows, cols, scaling};
      SCOPED_TRACE(::testing::Message()
                   << rows << " x " << cols << " scaling " << static_cast<int>(scaling));
      const auto n = static_cast<std::size_t>(rows * cols);
      const auto x = random_floats(rng, n, -30.0F, 30.0F);
      std::vector<Fp8E4M3> q(n, Fp8E4M3{0x7F});  // NaN codes
      auto scales = poisoned(static_cast<std::size_t>(quant_scale_count(s)));
      quantize_fp8_cpu(s, x, q, scales);
      const auto want_scales = reference_scales(s, x);
      expect_close(scales, want_scales, 0.0, 1e-6, "scales");
      auto back = poisoned(n);
      dequantize_fp8_cpu(s, q, scales, back);
      // Half an E4M3 ulp: 2^-4 relative for normals, 2^-10 * scale for subnormals
      // (the largest scale bounds every group).
      const double max_scale = *std::max_element(want_scales.begin(), want_scales.end());
      expect_close(back, testing::to_double(x), 0x1p-10 * max_scale, 0x1p-4 + 1e-6, "dequantized");
    }
  }
}

TEST(QuantizeCpu, GroupMaximumMapsTo448) {
  // One group of 128 per row: the row's largest magnitude becomes +-448 exactly.
  std::vector<float> x(std::size_t{2} * 128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.01F * static_cast<float>(i % 97) - 0.3F;
  x[5] = -9.0F;
  x[200] = 4.0F;
  const QuantShape s{2, 128};
  std::vector<Fp8E4M3> q(x.size());
  std::vector<float> scales(2);
  quantize_fp8_cpu(s, x, q, scales);
  EXPECT_EQ(q[5].to_float(), -448.0F);
  EXPECT_EQ(q[200].to_float(), 448.0F);
  EXPECT_FLOAT_EQ(scales[0], 9.0F / 448.0F);
}

TEST(QuantizeCpu, RefusesBadShapesAndDescribesTraffic) {
  EXPECT_FALSE(quantize_can_implement(QuantShape{0, 4}).empty());
  EXPECT_EQ(quant_scale_count(QuantShape{3, 257, QuantScaling::per_token}), 9);
  EXPECT_EQ(quant_scale_count(QuantShape{257, 3, QuantScaling::per_channel}), 9);
  std::vector<float> x(6), sc(1);
  std::vector<Fp8E4M3> q(5);
  EXPECT_THROW(quantize_fp8_cpu(QuantShape{2, 3}, x, q, sc), std::invalid_argument);
  EXPECT_GT(quantize_fp8_op(QuantShape{4, 256}).bytes, 4.0 * 256 * 4.0);
}

}  // namespace
}  // namespace myriad::kernels::ops
