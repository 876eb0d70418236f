// bf16 and fp8 E4M3 conversions: exact values, ties to even, saturation, NaN,
// and on random inputs the encoded value is the nearest representable one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/fp8_e4m3.hpp"

namespace myriad::kernels::ops {
namespace {

TEST(Bf16, ExactValuesAndTiesToEven) {
  EXPECT_EQ(Bf16::from_float(1.0F).bits, 0x3F80);
  EXPECT_EQ(Bf16::from_float(-2.0F).bits, 0xC000);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the even mantissa (1.0) wins.
  EXPECT_EQ(Bf16::from_float(1.0F + 0x1p-8F).to_float(), 1.0F);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(Bf16::from_float(1.0F + 3.0F * 0x1p-8F).to_float(), 1.0F + 0x1p-6F);
  EXPECT_EQ(Bf16::from_float(1.0F + 0x1p-8F + 0x1p-20F).to_float(), 1.0F + 0x1p-7F);
}

TEST(Bf16, SpecialValues) {
  EXPECT_TRUE(std::isnan(Bf16::from_float(std::numeric_limits<float>::quiet_NaN()).to_float()));
  EXPECT_EQ(Bf16::from_float(std::numeric_limits<float>::infinity()).to_float(),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(Bf16::from_float(std::numeric_limits<float>::max()).to_float(),
            std::numeric_limits<float>::infinity());  // rounds past the largest bf16
  EXPECT_TRUE(std::signbit(Bf16::from_float(-0.0F).to_float()));
}

TEST(Bf16, RandomValuesRoundToNearest) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1000.0F, 1000.0F);
  for (int i = 0; i < 20000; ++i) {
    const float x = dist(rng);
    const Bf16 b = Bf16::from_float(x);
    const double err = std::fabs(static_cast<double>(b.to_float()) - x);
    for (const int step : {-1, 1}) {
      const Bf16 neighbour{static_cast<std::uint16_t>(b.bits + step)};
      ASSERT_LE(err, std::fabs(static_cast<double>(neighbour.to_float()) - x)) << x;
    }
  }
}

TEST(Fp8E4M3, ExactCodes) {
  EXPECT_EQ(Fp8E4M3::from_float(1.0F).bits, 0x38);
  EXPECT_EQ(Fp8E4M3::from_float(448.0F).bits, 0x7E);
  EXPECT_EQ(Fp8E4M3::from_float(-448.0F).bits, 0xFE);
  EXPECT_EQ(Fp8E4M3::from_float(0x1p-9F).bits, 0x01);  // smallest subnormal
  EXPECT_EQ(Fp8E4M3::from_float(0x1p-6F).bits, 0x08);  // smallest normal
  EXPECT_EQ(Fp8E4M3{0x7E}.to_float(), 448.0F);
  EXPECT_EQ(Fp8E4M3{0x07}.to_float(), 7.0F * 0x1p-9F);
}

TEST(Fp8E4M3, TiesToEvenSaturationAndNan) {
  EXPECT_EQ(Fp8E4M3::from_float(1.0625F).to_float(), 1.0F);   // halfway 1 / 1.125
  EXPECT_EQ(Fp8E4M3::from_float(1.1875F).to_float(), 1.25F);  // halfway 1.125 / 1.25
  EXPECT_EQ(Fp8E4M3::from_float(0x1p-10F).to_float(), 0.0F);  // halfway 0 / 2^-9
  EXPECT_EQ(Fp8E4M3::from_float(3.0F * 0x1p-10F).to_float(), 0x1p-8F);
  EXPECT_EQ(Fp8E4M3::from_float(0.0146484375F).to_float(), 0x1p-6F);  // 7.5 * 2^-9: into normal
  EXPECT_EQ(Fp8E4M3::from_float(470.0F).to_float(), 448.0F);
  EXPECT_EQ(Fp8E4M3::from_float(-1e30F).to_float(), -448.0F);
  EXPECT_EQ(Fp8E4M3::from_float(std::numeric_limits<float>::infinity()).to_float(), 448.0F);
  EXPECT_TRUE(std::isnan(Fp8E4M3::from_float(std::nanf("")).to_float()));
  EXPECT_TRUE(std::isnan(Fp8E4M3{0xFF}.to_float()));
}

TEST(Fp8E4M3, EveryFiniteCodeRoundTrips) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) continue;  // NaN
    const Fp8E4M3 code{static_cast<std::uint8_t>(c)};
    EXPECT_EQ(Fp8E4M3::from_float(code.to_float()).bits, c) << c;
  }
}

TEST(Fp8E4M3, RandomValuesRoundToNearest) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> exponent(-12.0F, 9.5F);
  for (int i = 0; i < 5000; ++i) {
    const float x = std::exp2(exponent(rng)) * ((i % 2) != 0 ? -1.0F : 1.0F);
    const float got = Fp8E4M3::from_float(x).to_float();
    double best = std::numeric_limits<double>::infinity();
    for (int c = 0; c < 256; ++c) {
      if ((c & 0x7F) == 0x7F) continue;
      best = std::min(
          best,
          std::fabs(static_cast<double>(Fp8E4M3{static_cast<std::uint8_t>(c)}.to_float()) - x));
    }
    ASSERT_EQ(std::fabs(static_cast<double>(got) - x), best) << x;
  }
}

}  // namespace
}  // namespace myriad::kernels::ops
