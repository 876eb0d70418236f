// fp8 E4M3 (the OCP "FN" variant used by H100 tensor cores): 1 sign bit, 4
// exponent bits (bias 7), 3 mantissa bits, no infinities, NaN = S.1111.111,
// largest finite value 448. Encoding rounds to nearest even and saturates.
#pragma once

#include <cstdint>

namespace myriad::kernels::ops {

struct Fp8E4M3 {
  std::uint8_t bits = 0;

  static constexpr float max_finite = 448.0F;

  // Rounds to nearest even; magnitudes beyond 448 saturate to +-448; NaN -> NaN.
  static Fp8E4M3 from_float(float f);
  [[nodiscard]] float to_float() const;
};

}  // namespace myriad::kernels::ops
