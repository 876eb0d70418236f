// bfloat16 storage: the upper 16 bits of an IEEE binary32, rounded to nearest
// even on conversion from float. Arithmetic happens in float; Bf16 only stores.
// C++17, so that the CUDA backend's .cu files can include it too.
#pragma once

#include <cstdint>
#include <cstring>

namespace myriad::kernels::ops {

struct Bf16 {
  std::uint16_t bits = 0;

  static Bf16 from_float(float f) {
    std::uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFU) > 0x7F800000U) {  // NaN: keep the sign, force a quiet payload
      return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040U)};
    }
    const std::uint32_t rounding = 0x7FFFU + ((u >> 16) & 1U);  // ties to even
    return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
  }

  [[nodiscard]] float to_float() const {
    const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f = 0.0F;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};

}  // namespace myriad::kernels::ops
