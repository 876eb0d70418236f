#include "kernels/ops/causal_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>

namespace myriad::kernels::ops {

namespace {

void require(const SoftmaxShape& s, std::initializer_list<std::size_t> sizes) {
  const std::string why = causal_softmax_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("causal_softmax: " + why);
  const auto n = static_cast<std::size_t>(s.matrices * s.seq * s.seq);
  for (const std::size_t size : sizes) {
    if (size != n)
      throw std::invalid_argument("causal_softmax: buffers must hold matrices*seq*seq");
  }
}

}  // namespace

std::string causal_softmax_can_implement(const SoftmaxShape& s) {
  if (s.matrices < 1 || s.seq < 1) return "matrices and seq must be at least 1";
  if (!(s.scale > 0.0F)) return "scale must be positive";
  return {};
}

void causal_softmax_forward_cpu(const SoftmaxShape& s, std::span<const float> x,
                                std::span<float> y) {
  require(s, {x.size(), y.size()});
  const auto n = static_cast<std::size_t>(s.seq);
  for (std::size_t row = 0; row < static_cast<std::size_t>(s.matrices) * n; ++row) {
    const std::size_t i = row % n;  // query index: keys 0..i are visible
    const auto xr = x.subspan(row * n, n);
    auto yr = y.subspan(row * n, n);
    const float mx =
        s.scale * *std::max_element(xr.begin(), xr.begin() + static_cast<std::ptrdiff_t>(i + 1));
    float sum = 0.0F;
    for (std::size_t j = 0; j <= i; ++j) {
      yr[j] = std::exp(s.scale * xr[j] - mx);
      sum += yr[j];
    }
    for (std::size_t j = 0; j <= i; ++j) yr[j] /= sum;
    for (std::size_t j = i + 1; j < n; ++j) yr[j] = 0.0F;
  }
}

void causal_softmax_backward_cpu(const SoftmaxShape& s, std::span<const float> dy,
                                 std::span<const float> y, std::span<float> dx) {
  require(s, {dy.size(), y.size(), dx.size()});
  const auto n = static_cast<std::size_t>(s.seq);
  for (std::size_t row = 0; row < static_cast<std::size_t>(s.matrices) * n; ++row) {
    const std::size_t i = row % n;
    const std::size_t base = row * n;
    float dot = 0.0F;
    for (std::size_t j = 0; j <= i; ++j) dot += dy[base + j] * y[base + j];
    for (std::size_t j = 0; j <= i; ++j)
      dx[base + j] = s.scale * y[base + j] * (dy[base + j] - dot);
    for (std::size_t j = i + 1; j < n; ++j) dx[base + j] = 0.0F;
  }
}

models::Op causal_softmax_op(const SoftmaxShape& s, double elem_bytes) {
  const double scores =
      static_cast<double>(s.matrices) * static_cast<double>(s.seq) * static_cast<double>(s.seq);
  models::Op op = models::make_elementwise("softmax", 2.0 * scores * elem_bytes, 5.0 * scores);
  op.backward_bytes = 3.0 * scores * elem_bytes;
  return op;
}

}  // namespace myriad::kernels::ops
