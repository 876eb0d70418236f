// Quantize and dequantize for communication compression, on the CPU: bf16
// (plain rounding), and fp8 E4M3 with one fp32 scale per group of 128 elements
// along a row (per-token scaling) or along a column (per-channel scaling).
// scale = amax(group) / 448, so each group's largest magnitude maps to 448.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/fp8_e4m3.hpp"
#include "kernels/ops/quant_shape.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

// x: [rows, cols] -> q: [rows, cols], scales: [quant_scale_count(s)] (layout above).
void quantize_fp8_cpu(const QuantShape& s, std::span<const float> x, std::span<Fp8E4M3> q,
                      std::span<float> scales);
// q: [rows, cols], scales as written by quantize_fp8_cpu -> x: [rows, cols].
void dequantize_fp8_cpu(const QuantShape& s, std::span<const Fp8E4M3> q,
                        std::span<const float> scales, std::span<float> x);

// x, q: [n]
void quantize_bf16_cpu(std::span<const float> x, std::span<Bf16> q);
void dequantize_bf16_cpu(std::span<const Bf16> q, std::span<float> x);

// Memory-bound: reads fp32 (or writes, for dequantize) and the compressed form.
models::Op quantize_fp8_op(const QuantShape& s);

}  // namespace myriad::kernels::ops
