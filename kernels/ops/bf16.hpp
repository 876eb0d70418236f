// bfloat16 storage: the upper 16 bits of an IEEE binary32, rounded to nearest
// even on conversion from float. Arithmetic happens in float; Bf16 only stores.
#pragma once

#include <bit>
#include <cstdint>

namespace myriad::kernels::ops {

struct Bf16 {
  std::uint16_t bits = 0;

  static Bf16 from_float(float f) {
    const auto u = std::bit_cast<std::uint32_t>(f);
    if ((u & 0x7FFFFFFFU) > 0x7F800000U) {  // NaN: keep the sign, force a quiet payload
      return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040U)};
    }
    const std::uint32_t rounding = 0x7FFFU + ((u >> 16) & 1U);  // ties to even
    return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
  }

  [[nodiscard]] float to_float() const {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
  }
};

}  // namespace myriad::kernels::ops
