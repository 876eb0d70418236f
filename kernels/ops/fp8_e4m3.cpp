#include "kernels/ops/fp8_e4m3.hpp"

#include <cmath>

namespace myriad::kernels::ops {

namespace {

constexpr int kBias = 7;
constexpr int kMantissaBits = 3;
constexpr int kMinNormalExp = 1 - kBias;  // -6
constexpr std::uint8_t kNan = 0x7F;
constexpr std::uint8_t kMaxBits = 0x7E;  // 0.1111.110 = 448

}  // namespace

Fp8E4M3 Fp8E4M3::from_float(float f) {
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  if (std::isnan(f)) return Fp8E4M3{static_cast<std::uint8_t>(sign | kNan)};
  const double a = std::fabs(static_cast<double>(f));
  if (a >= max_finite) return Fp8E4M3{static_cast<std::uint8_t>(sign | kMaxBits)};
  if (a == 0.0) return Fp8E4M3{sign};
  int e2 = 0;
  (void)std::frexp(a, &e2);  // a = frac * 2^e2, frac in [0.5, 1)
  const int exp = e2 - 1;    // a = 1.m * 2^exp
  if (exp < kMinNormalExp) {
    // Subnormal: multiples of 2^-9. q == 8 rounds up into the smallest normal,
    // whose bit pattern is exactly 8.
    const double q = std::nearbyint(std::ldexp(a, -(kMinNormalExp - kMantissaBits)));
    return Fp8E4M3{static_cast<std::uint8_t>(sign | static_cast<int>(q))};
  }
  // Normal: q in [8, 16]; q == 16 carries into the next exponent by plain addition.
  const double q = std::nearbyint(std::ldexp(a, -(exp - kMantissaBits)));
  int code = ((exp + kBias) << kMantissaBits) + static_cast<int>(q) - 8;
  if (code > kMaxBits) code = kMaxBits;  // rounding above 448 saturates
  return Fp8E4M3{static_cast<std::uint8_t>(sign | code)};
}

float Fp8E4M3::to_float() const {
  const int exp = (bits >> kMantissaBits) & 0xF;
  const int man = bits & 0x7;
  const float sign = (bits & 0x80) != 0 ? -1.0F : 1.0F;
  if (exp == 0xF && man == 0x7) return std::nanf("");
  if (exp == 0) return sign * std::ldexp(static_cast<float>(man), kMinNormalExp - kMantissaBits);
  return sign * std::ldexp(static_cast<float>(8 + man), exp - kBias - kMantissaBits);
}

}  // namespace myriad::kernels::ops
