// Conversions between bf16 storage and fp32 working copies on the CPU, for the
// bf16 storage paths of the ops (fp32 compute, one rounding per stored output).
#pragma once

#include <span>
#include <stdexcept>
#include <vector>

#include "kernels/ops/bf16.hpp"

namespace myriad::kernels::ops {

inline std::vector<float> widen(std::span<const Bf16> x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i].to_float();
  return out;
}

// out[i] = x[i] rounded to nearest even; the sizes must agree.
inline void narrow(std::span<const float> x, std::span<Bf16> out) {
  if (x.size() != out.size()) throw std::invalid_argument("bf16: wrong size for an output");
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = Bf16::from_float(x[i]);
}

}  // namespace myriad::kernels::ops
