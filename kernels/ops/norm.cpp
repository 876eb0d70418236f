#include "kernels/ops/norm.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace myriad::kernels::ops {

namespace {

void require(const NormShape& s) {
  const std::string why = norm_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("norm: " + why);
}

void require_size(std::span<const float> x, std::int64_t n, const char* what) {
  if (x.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument(std::string("norm: wrong size for ") + what);
  }
}

std::size_t row_offset(const NormShape& s, std::int64_t r) {
  return static_cast<std::size_t>(r * s.hidden);
}

// Per row: c1 = mean(g * xhat), c2 = mean(g), with g = dy * gamma.
void row_sums(std::span<const float> dy, std::span<const float> xhat, std::span<const float> gamma,
              double& c1, double& c2) {
  c1 = 0.0;
  c2 = 0.0;
  for (std::size_t j = 0; j < dy.size(); ++j) {
    const double g = static_cast<double>(dy[j]) * gamma[j];
    c1 += g * xhat[j];
    c2 += g;
  }
  c1 /= static_cast<double>(dy.size());
  c2 /= static_cast<double>(dy.size());
}

models::Op norm_op(const NormShape& s, double elem_bytes, double flops_per_elem) {
  const double n = static_cast<double>(s.rows) * static_cast<double>(s.hidden);
  models::Op op = models::make_elementwise("norm", 2.0 * n * elem_bytes, flops_per_elem * n);
  op.backward_bytes = 3.0 * n * elem_bytes;
  return op;
}

}  // namespace

std::string norm_can_implement(const NormShape& s) {
  if (s.rows < 1 || s.hidden < 1) return "rows and hidden must be at least 1";
  if (!(s.eps > 0.0F)) return "eps must be positive";
  return {};
}

void layer_norm_forward_cpu(const NormShape& s, std::span<const float> x,
                            std::span<const float> gamma, std::span<const float> beta,
                            std::span<float> y, std::span<float> mean, std::span<float> rstd) {
  require(s);
  require_size(x, s.rows * s.hidden, "x");
  require_size(y, s.rows * s.hidden, "y");
  require_size(gamma, s.hidden, "gamma");
  require_size(beta, s.hidden, "beta");
  require_size(mean, s.rows, "mean");
  require_size(rstd, s.rows, "rstd");
  const auto h = static_cast<std::size_t>(s.hidden);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const auto xr = x.subspan(row_offset(s, r), h);
    double sum = 0.0;
    for (const float v : xr) sum += v;
    const double mu = sum / static_cast<double>(h);
    double var = 0.0;  // two passes: no cancellation for rows far from zero
    for (const float v : xr) var += (v - mu) * (v - mu);
    const double rs = 1.0 / std::sqrt(var / static_cast<double>(h) + s.eps);
    auto yr = y.subspan(row_offset(s, r), h);
    for (std::size_t j = 0; j < h; ++j) {
      yr[j] = static_cast<float>((xr[j] - mu) * rs * gamma[j] + beta[j]);
    }
    mean[static_cast<std::size_t>(r)] = static_cast<float>(mu);
    rstd[static_cast<std::size_t>(r)] = static_cast<float>(rs);
  }
}

void layer_norm_backward_cpu(const NormShape& s, std::span<const float> dy,
                             std::span<const float> x, std::span<const float> gamma,
                             std::span<const float> mean, std::span<const float> rstd,
                             std::span<float> dx, std::span<float> dgamma, std::span<float> dbeta) {
  require(s);
  for (const auto& t : {dy, x, std::span<const float>(dx)})
    require_size(t, s.rows * s.hidden, "dy/x/dx");
  require_size(gamma, s.hidden, "gamma");
  require_size(dgamma, s.hidden, "dgamma");
  require_size(dbeta, s.hidden, "dbeta");
  require_size(mean, s.rows, "mean");
  require_size(rstd, s.rows, "rstd");
  const auto h = static_cast<std::size_t>(s.hidden);
  std::vector<double> dg(h, 0.0);
  std::vector<double> db(h, 0.0);
  std::vector<float> xhat(h);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const auto xr = x.subspan(row_offset(s, r), h);
    const auto dyr = dy.subspan(row_offset(s, r), h);
    const float mu = mean[static_cast<std::size_t>(r)];
    const float rs = rstd[static_cast<std::size_t>(r)];
    for (std::size_t j = 0; j < h; ++j) xhat[j] = (xr[j] - mu) * rs;
    double c1 = 0.0;
    double c2 = 0.0;
    row_sums(dyr, xhat, gamma, c1, c2);
    auto dxr = dx.subspan(row_offset(s, r), h);
    for (std::size_t j = 0; j < h; ++j) {
      const double g = static_cast<double>(dyr[j]) * gamma[j];
      dxr[j] = static_cast<float>(rs * (g - c2 - xhat[j] * c1));
      dg[j] += static_cast<double>(dyr[j]) * xhat[j];
      db[j] += dyr[j];
    }
  }
  for (std::size_t j = 0; j < h; ++j) {
    dgamma[j] = static_cast<float>(dg[j]);
    dbeta[j] = static_cast<float>(db[j]);
  }
}

void rms_norm_forward_cpu(const NormShape& s, std::span<const float> x,
                          std::span<const float> gamma, std::span<float> y, std::span<float> rstd) {
  require(s);
  require_size(x, s.rows * s.hidden, "x");
  require_size(y, s.rows * s.hidden, "y");
  require_size(gamma, s.hidden, "gamma");
  require_size(rstd, s.rows, "rstd");
  const auto h = static_cast<std::size_t>(s.hidden);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const auto xr = x.subspan(row_offset(s, r), h);
    double ss = 0.0;
    for (const float v : xr) ss += static_cast<double>(v) * v;
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(h) + s.eps);
    auto yr = y.subspan(row_offset(s, r), h);
    for (std::size_t j = 0; j < h; ++j) yr[j] = static_cast<float>(xr[j] * rs * gamma[j]);
    rstd[static_cast<std::size_t>(r)] = static_cast<float>(rs);
  }
}

void rms_norm_backward_cpu(const NormShape& s, std::span<const float> dy, std::span<const float> x,
                           std::span<const float> gamma, std::span<const float> rstd,
                           std::span<float> dx, std::span<float> dgamma) {
  require(s);
  for (const auto& t : {dy, x, std::span<const float>(dx)})
    require_size(t, s.rows * s.hidden, "dy/x/dx");
  require_size(gamma, s.hidden, "gamma");
  require_size(dgamma, s.hidden, "dgamma");
  require_size(rstd, s.rows, "rstd");
  const auto h = static_cast<std::size_t>(s.hidden);
  std::vector<double> dg(h, 0.0);
  std::vector<float> xhat(h);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const auto xr = x.subspan(row_offset(s, r), h);
    const auto dyr = dy.subspan(row_offset(s, r), h);
    const float rs = rstd[static_cast<std::size_t>(r)];
    for (std::size_t j = 0; j < h; ++j) xhat[j] = xr[j] * rs;
    double c1 = 0.0;
    double unused = 0.0;
    row_sums(dyr, xhat, gamma, c1, unused);
    auto dxr = dx.subspan(row_offset(s, r), h);
    for (std::size_t j = 0; j < h; ++j) {
      const double g = static_cast<double>(dyr[j]) * gamma[j];
      dxr[j] = static_cast<float>(rs * (g - xhat[j] * c1));
      dg[j] += static_cast<double>(dyr[j]) * xhat[j];
    }
  }
  for (std::size_t j = 0; j < h; ++j) dgamma[j] = static_cast<float>(dg[j]);
}

models::Op layer_norm_op(const NormShape& s, double elem_bytes) {
  return norm_op(s, elem_bytes, 8.0);
}

models::Op rms_norm_op(const NormShape& s, double elem_bytes) {
  return norm_op(s, elem_bytes, 5.0);
}

}  // namespace myriad::kernels::ops
