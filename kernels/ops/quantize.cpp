#include "kernels/ops/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace myriad::kernels::ops {

namespace {

void require(const QuantShape& s) {
  const std::string why = quantize_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("quantize: " + why);
}

void require_size(std::size_t got, std::int64_t expected, const char* what) {
  if (got != static_cast<std::size_t>(expected)) {
    throw std::invalid_argument(std::string("quantize: wrong size for ") + what);
  }
}

std::int64_t groups(std::int64_t n, std::int64_t group) { return (n + group - 1) / group; }

// Element (r, c) of the matrix and the index of its scale.
std::size_t scale_index(const QuantShape& s, std::int64_t r, std::int64_t c) {
  if (s.scaling == QuantScaling::per_token) {
    return static_cast<std::size_t>(r * groups(s.cols, s.group) + c / s.group);
  }
  return static_cast<std::size_t>((r / s.group) * s.cols + c);
}

}  // namespace

std::string quantize_can_implement(const QuantShape& s) {
  if (s.rows < 1 || s.cols < 1) return "rows and cols must be at least 1";
  if (s.group < 1) return "group must be at least 1";
  return {};
}

std::int64_t quant_scale_count(const QuantShape& s) {
  if (s.scaling == QuantScaling::per_token) return s.rows * groups(s.cols, s.group);
  return groups(s.rows, s.group) * s.cols;
}

void quantize_fp8_cpu(const QuantShape& s, std::span<const float> x, std::span<Fp8E4M3> q,
                      std::span<float> scales) {
  require(s);
  require_size(x.size(), s.rows * s.cols, "x");
  require_size(q.size(), s.rows * s.cols, "q");
  require_size(scales.size(), quant_scale_count(s), "scales");
  std::fill(scales.begin(), scales.end(), 0.0F);  // amax first
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      float& amax = scales[scale_index(s, r, c)];
      amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(r * s.cols + c)]));
    }
  }
  for (float& sc : scales) sc = sc > 0.0F ? sc / Fp8E4M3::max_finite : 1.0F;
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const auto i = static_cast<std::size_t>(r * s.cols + c);
      q[i] = Fp8E4M3::from_float(x[i] / scales[scale_index(s, r, c)]);
    }
  }
}

void dequantize_fp8_cpu(const QuantShape& s, std::span<const Fp8E4M3> q,
                        std::span<const float> scales, std::span<float> x) {
  require(s);
  require_size(x.size(), s.rows * s.cols, "x");
  require_size(q.size(), s.rows * s.cols, "q");
  require_size(scales.size(), quant_scale_count(s), "scales");
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const auto i = static_cast<std::size_t>(r * s.cols + c);
      x[i] = q[i].to_float() * scales[scale_index(s, r, c)];
    }
  }
}

void quantize_bf16_cpu(std::span<const float> x, std::span<Bf16> q) {
  if (x.size() != q.size()) throw std::invalid_argument("quantize: x and q differ in size");
  for (std::size_t i = 0; i < x.size(); ++i) q[i] = Bf16::from_float(x[i]);
}

void dequantize_bf16_cpu(std::span<const Bf16> q, std::span<float> x) {
  if (x.size() != q.size()) throw std::invalid_argument("quantize: x and q differ in size");
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = q[i].to_float();
}

models::Op quantize_fp8_op(const QuantShape& s) {
  const double n = static_cast<double>(s.rows) * static_cast<double>(s.cols);
  const double scale_bytes = 4.0 * static_cast<double>(quant_scale_count(s));
  // The bytes the op must move: the fp32 input once (the CUDA kernel encodes each
  // group from the registers its amax was taken from), the fp8 output, the scales.
  return models::make_elementwise("quantize.fp8", 4.0 * n + n + scale_bytes, 3.0 * n);
}

}  // namespace myriad::kernels::ops
