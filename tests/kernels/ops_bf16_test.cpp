// bf16 storage paths of the CPU ops (norms, activations, attention): outputs
// against float64 references computed from the same bf16-rounded inputs, the
// backwards against finite differences of those references. Tolerance: the one
// rounding of each stored output (half a bf16 ulp, 2^-9 relative), doubled, plus
// the fp32 path's own error. Outputs are poisoned (bf16 NaN) first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "kernels/ops/activation.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/bf16.hpp"
#include "kernels/ops/norm.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::numeric_grad;
using testing::random_floats;
using Vec = std::vector<double>;

constexpr double kBf16Rtol = 0x1p-8;  // two half-ulps of bf16's 8-bit significand

std::vector<Bf16> random_bf16(std::mt19937_64& rng, std::size_t n, float lo = -1.0F,
                              float hi = 1.0F) {
  const auto f = random_floats(rng, n, lo, hi);
  std::vector<Bf16> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = Bf16::from_float(f[i]);
  return out;
}

std::vector<Bf16> poisoned_bf16(std::size_t n) { return std::vector<Bf16>(n, Bf16{0x7FC0}); }

std::vector<float> widened(const std::vector<Bf16>& x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i].to_float();
  return out;
}

Vec to_f64(const std::vector<Bf16>& x) {
  const std::vector<float> f = widened(x);
  return {f.begin(), f.end()};
}

// Float64 reference: LayerNorm when beta is given, RMSNorm otherwise.
Vec norm_reference(const NormShape& s, const Vec& x, const Vec& gamma, const Vec* beta) {
  Vec y(x.size());
  const auto h = static_cast<std::size_t>(s.hidden);
  for (std::size_t r = 0; r < static_cast<std::size_t>(s.rows); ++r) {
    double mean = 0.0;
    for (std::size_t j = 0; beta != nullptr && j < h; ++j)
      mean += x[r * h + j] / static_cast<double>(h);
    double var = 0.0;
    for (std::size_t j = 0; j < h; ++j) var += (x[r * h + j] - mean) * (x[r * h + j] - mean);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(h) + s.eps);
    for (std::size_t j = 0; j < h; ++j) {
      y[r * h + j] = (x[r * h + j] - mean) * rstd * gamma[j] + (beta ? (*beta)[j] : 0.0);
    }
  }
  return y;
}

TEST(Bf16Cpu, NormsMatchFloat64) {
  std::mt19937_64 rng(81);
  for (const bool layer : {true, false}) {
    const NormShape s{5, 37};
    const auto x = random_bf16(rng, std::size_t{5} * 37, -2.0F, 3.0F);
    const auto dy = random_bf16(rng, std::size_t{5} * 37);
    const auto gamma = random_floats(rng, 37, 0.5F, 1.5F);
    const auto beta = random_floats(rng, 37);
    auto y = poisoned_bf16(x.size());
    auto dx = poisoned_bf16(x.size());
    std::vector<float> mean(5), rstd(5), dgamma(37), dbeta(37);
    const Vec gd(gamma.begin(), gamma.end());
    const Vec bd(beta.begin(), beta.end());
    if (layer) {
      layer_norm_forward_cpu(s, x, gamma, beta, y, mean, rstd);
      layer_norm_backward_cpu(s, dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
    } else {
      rms_norm_forward_cpu(s, x, gamma, y, rstd);
      rms_norm_backward_cpu(s, dy, x, gamma, rstd, dx, dgamma);
    }
    const auto f = [&](const Vec& xv) { return norm_reference(s, xv, gd, layer ? &bd : nullptr); };
    SCOPED_TRACE(layer ? "layer norm" : "rms norm");
    expect_close(widened(y), f(to_f64(x)), 1e-5, kBf16Rtol, "y");
    expect_close(widened(dx), numeric_grad(f, to_f64(x), to_f64(dy)), 1e-4, kBf16Rtol, "dx");
  }
}

double gelu64(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

TEST(Bf16Cpu, ActivationsMatchFloat64) {
  std::mt19937_64 rng(82);
  const std::size_t n = 41;
  const auto x = random_bf16(rng, n, -5.0F, 5.0F);
  const auto up = random_bf16(rng, n, -2.0F, 2.0F);
  const auto dy = random_bf16(rng, n);
  auto y = poisoned_bf16(n), dx = poisoned_bf16(n), sy = poisoned_bf16(n);
  auto dgate = poisoned_bf16(n), dup = poisoned_bf16(n);
  gelu_forward_cpu(x, y);
  gelu_backward_cpu(dy, x, dx);
  swiglu_forward_cpu(x, up, sy);
  swiglu_backward_cpu(dy, x, up, dgate, dup);
  const Vec xd = to_f64(x), ud = to_f64(up), dyd = to_f64(dy);
  const auto gelu = [](const Vec& v) {
    Vec out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = gelu64(v[i]);
    return out;
  };
  const auto swiglu = [](const Vec& g, const Vec& u) {
    Vec out(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) out[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
    return out;
  };
  expect_close(widened(y), gelu(xd), 1e-6, kBf16Rtol, "gelu");
  expect_close(widened(dx), numeric_grad(gelu, xd, dyd), 1e-6, kBf16Rtol, "gelu dx");
  expect_close(widened(sy), swiglu(xd, ud), 1e-6, kBf16Rtol, "swiglu");
  const auto by_gate = [&](const Vec& g) { return swiglu(g, ud); };
  const auto by_up = [&](const Vec& u) { return swiglu(xd, u); };
  expect_close(widened(dgate), numeric_grad(by_gate, xd, dyd), 1e-6, kBf16Rtol, "dgate");
  expect_close(widened(dup), numeric_grad(by_up, ud, dyd), 1e-6, kBf16Rtol, "dup");
}

TEST(Bf16Cpu, BiasGeluMatchesFloat64) {
  std::mt19937_64 rng(84);
  const std::int64_t rows = 7;
  const std::int64_t cols = 5;
  const std::size_t n = 35;
  const auto x = random_bf16(rng, n, -4.0F, 4.0F);
  const auto dy = random_bf16(rng, n);
  const auto bias = random_floats(rng, 5);
  auto y = poisoned_bf16(n), dx = poisoned_bf16(n);
  std::vector<float> dbias(5, std::numeric_limits<float>::quiet_NaN());
  bias_gelu_forward_cpu(rows, cols, x, bias, y);
  bias_gelu_backward_cpu(rows, cols, dy, x, bias, dx, dbias);
  const Vec bd(bias.begin(), bias.end());
  const auto by_x = [&](const Vec& xv) {
    Vec out(xv.size());
    for (std::size_t i = 0; i < xv.size(); ++i) out[i] = gelu64(xv[i] + bd[i % 5]);
    return out;
  };
  const auto by_bias = [&](const Vec& b) {
    Vec out(n);
    const Vec xd = to_f64(x);
    for (std::size_t i = 0; i < n; ++i) out[i] = gelu64(xd[i] + b[i % 5]);
    return out;
  };
  expect_close(widened(y), by_x(to_f64(x)), 1e-6, kBf16Rtol, "y");
  expect_close(widened(dx), numeric_grad(by_x, to_f64(x), to_f64(dy)), 1e-6, kBf16Rtol, "dx");
  expect_close(dbias, numeric_grad(by_bias, bd, to_f64(dy)), 1e-5, 1e-4, "dbias");
}

// Float64 attention over [batch, heads, seq, head_dim] with the shape's mask; GQA.
Vec attention_reference(const AttentionShape& s, const Vec& q, const Vec& k, const Vec& v) {
  const auto d = static_cast<std::size_t>(s.head_dim);
  const auto n = static_cast<std::size_t>(s.seq);
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  Vec o(q.size(), 0.0);
  const std::int64_t group = s.q_heads / s.kv_heads;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t h = 0; h < s.q_heads; ++h) {
      const auto qh = static_cast<std::size_t>(b * s.q_heads + h) * n * d;
      const auto kh = static_cast<std::size_t>(b * s.kv_heads + h / group) * n * d;
      for (std::size_t i = 0; i < n; ++i) {
        Vec p(n, 0.0);
        double mx = -1e300, z = 0.0;
        for (std::size_t j = 0; j < n; ++j) {
          if (!attention_allowed(s, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)))
            continue;
          for (std::size_t e = 0; e < d; ++e) p[j] += scale * q[qh + i * d + e] * k[kh + j * d + e];
          mx = std::max(mx, p[j]);
        }
        for (std::size_t j = 0; j < n; ++j) {
          const bool ok =
              attention_allowed(s, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
          p[j] = ok ? std::exp(p[j] - mx) : 0.0;
          z += p[j];
        }
        for (std::size_t j = 0; j < n; ++j) {
          for (std::size_t e = 0; e < d; ++e) o[qh + i * d + e] += p[j] / z * v[kh + j * d + e];
        }
      }
    }
  }
  return o;
}

TEST(Bf16Cpu, AttentionMatchesFloat64) {
  std::mt19937_64 rng(83);
  for (const AttentionShape& s :
       {AttentionShape{1, 2, 1, 9, 4, true, 0}, AttentionShape{2, 2, 2, 7, 5, false, 3}}) {
    SCOPED_TRACE(::testing::Message() << "causal " << s.causal << " window " << s.window);
    const auto nq = static_cast<std::size_t>(s.batch * s.q_heads * s.seq * s.head_dim);
    const auto nkv = static_cast<std::size_t>(s.batch * s.kv_heads * s.seq * s.head_dim);
    const auto q = random_bf16(rng, nq, -2.0F, 2.0F);
    const auto k = random_bf16(rng, nkv, -2.0F, 2.0F);
    const auto v = random_bf16(rng, nkv);
    const auto dout = random_bf16(rng, nq);
    auto o = poisoned_bf16(nq), dq = poisoned_bf16(nq);
    auto dk = poisoned_bf16(nkv), dv = poisoned_bf16(nkv);
    std::vector<float> lse(static_cast<std::size_t>(s.batch * s.q_heads * s.seq));
    attention_forward_cpu(s, q, k, v, o, lse);
    attention_backward_cpu(s, q, k, v, o, lse, dout, AttentionGradsBf16{dq, dk, dv});
    const Vec qd = to_f64(q), kd = to_f64(k), vd = to_f64(v), dod = to_f64(dout);
    const auto by_q = [&](const Vec& x) { return attention_reference(s, x, kd, vd); };
    const auto by_k = [&](const Vec& x) { return attention_reference(s, qd, x, vd); };
    const auto by_v = [&](const Vec& x) { return attention_reference(s, qd, kd, x); };
    expect_close(widened(o), by_q(qd), 1e-5, kBf16Rtol, "o");
    // dO is O rounded to bf16 in the backward's delta = rowsum(dO * O): a few ulps more.
    expect_close(widened(dq), numeric_grad(by_q, qd, dod), 2e-3, 4 * kBf16Rtol, "dq");
    expect_close(widened(dk), numeric_grad(by_k, kd, dod), 2e-3, 4 * kBf16Rtol, "dk");
    expect_close(widened(dv), numeric_grad(by_v, vd, dod), 1e-5, kBf16Rtol, "dv");
  }
}

}  // namespace
}  // namespace myriad::kernels::ops
