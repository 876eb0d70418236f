// The calibration cases' reference checks (calibration/measure/reference.hpp).
// Every CPU case of the small grid passes its check. Each reference passes the
// kernel's own output and reports one output element changed afterwards, naming
// the output and the index. It also reports a kernel run with another formula
// (no weight decay, no causal mask, another softmax scale).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "calibration/measure/cases.hpp"
#include "calibration/measure/reference.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/bf16.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/moe_router.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/optimizer.hpp"
#include "kernels/ops/quantize.hpp"

namespace myriad::calibration {
namespace {

namespace ops = kernels::ops;
using Floats = std::vector<float>;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Floats inputs(std::size_t n, std::uint64_t seed) { return uniform_floats(n, seed); }

// A wrong value: 1% off, and at least 0.01.
float off(float v) { return v + 0.01F * (1.0F + std::abs(v)); }

// The check's message names `where` first ("y[3, 5] = ...").
void expect_reported(const std::string& message, const std::string& where) {
  EXPECT_EQ(message.rfind(where + " = ", 0), 0U) << message;
}

TEST(CalibrationReference, SamplesFirstMiddleLastAndSpreads) {
  EXPECT_EQ(reference::sample(1), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(reference::sample(2), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(reference::sample(9), (std::vector<std::int64_t>{0, 4, 8}));
  EXPECT_EQ(reference::sample(9, 5), (std::vector<std::int64_t>{0, 2, 4, 6, 8}));
  const auto spread = reference::sample(1 << 20, 1024);
  EXPECT_GE(spread.size(), 1024U);
  EXPECT_LE(spread.size(), 1030U);
  EXPECT_TRUE(std::is_sorted(spread.begin(), spread.end()));
  EXPECT_EQ(spread.back(), (1 << 20) - 1);
  EXPECT_TRUE(reference::within(1.0001, 1.0, 1.0));
  EXPECT_FALSE(reference::within(1.0002, 1.0, 1.0));
  EXPECT_FALSE(reference::within(std::nan(""), 1.0, 1.0));
}

// Like the runner: prepare, one run (the timed part), then the check.
TEST(CalibrationReference, EverySmallGridCpuCasePassesItsCheck) {
  for (const Case& c : cpu_cases(Grid::small)) {
    const Instance inst = c.prepare();
    inst.run();
    EXPECT_EQ(inst.check(), "pass") << c.row.name;
  }
}

// Expectation: the CUDA cases' bf16 rows check at kBf16Tolerance. The CPU's bf16
// kernels (fp32 compute, every stored value rounded once, as the CUDA ones) pass
// there; a value 5 % off does not; and the scope ends with the check's default.
TEST(CalibrationReference, Bf16StoragePassesAtItsToleranceAndAWrongValueDoesNot) {
  const ops::NormShape s{24, 256};
  const auto n = static_cast<std::size_t>(s.rows * s.hidden);
  std::vector<ops::Bf16> x(n);
  const Floats drawn = inputs(n, 31);
  std::transform(drawn.begin(), drawn.end(), x.begin(),
                 [](float v) { return ops::Bf16::from_float(v); });
  Floats xf(n);
  std::transform(x.begin(), x.end(), xf.begin(), [](ops::Bf16 v) { return v.to_float(); });
  const Floats gamma = inputs(static_cast<std::size_t>(s.hidden), 32);
  const Floats beta = inputs(static_cast<std::size_t>(s.hidden), 33);
  std::vector<ops::Bf16> y(n);
  Floats mean(static_cast<std::size_t>(s.rows));
  Floats rstd(static_cast<std::size_t>(s.rows));
  ops::layer_norm_forward_cpu(s, x, gamma, beta, y, mean, rstd);
  Floats yf(n);
  std::transform(y.begin(), y.end(), yf.begin(), [](ops::Bf16 v) { return v.to_float(); });
  {
    const reference::Tolerance storage(reference::kBf16Tolerance);
    EXPECT_EQ(reference::layer_norm_forward(s, xf, gamma, beta, yf, mean, rstd), "pass");
    Floats wrong = yf;
    wrong[n / 2] *= 1.05F;
    wrong[n / 2] += 0.05F;
    EXPECT_NE(reference::layer_norm_forward(s, xf, gamma, beta, wrong, mean, rstd), "pass");
  }
  EXPECT_NE(reference::layer_norm_forward(s, xf, gamma, beta, yf, mean, rstd), "pass")
      << "bf16 rounding should fail the fp32 tolerance once the scope has ended";

  // Attention, forward and backward, bf16 storage.
  ops::AttentionShape a;
  a.batch = 1;
  a.q_heads = 4;
  a.kv_heads = 2;
  a.seq = 48;
  a.head_dim = 32;
  const auto q_n = static_cast<std::size_t>(a.q_heads * a.seq * a.head_dim);
  const auto kv_n = static_cast<std::size_t>(a.kv_heads * a.seq * a.head_dim);
  const auto bf16 = [](const Floats& f) {
    std::vector<ops::Bf16> out(f.size());
    std::transform(f.begin(), f.end(), out.begin(),
                   [](float v) { return ops::Bf16::from_float(v); });
    return out;
  };
  const auto widen = [](const std::vector<ops::Bf16>& b) {
    Floats out(b.size());
    std::transform(b.begin(), b.end(), out.begin(), [](ops::Bf16 v) { return v.to_float(); });
    return out;
  };
  const auto q = bf16(inputs(q_n, 41));
  const auto k = bf16(inputs(kv_n, 42));
  const auto v = bf16(inputs(kv_n, 43));
  const auto d_o = bf16(inputs(q_n, 44));
  std::vector<ops::Bf16> o(q_n);
  Floats lse(static_cast<std::size_t>(a.q_heads * a.seq));
  ops::attention_forward_cpu(a, q, k, v, o, lse);
  std::vector<ops::Bf16> dq(q_n);
  std::vector<ops::Bf16> dk(kv_n);
  std::vector<ops::Bf16> dv(kv_n);
  ops::attention_backward_cpu(a, q, k, v, o, lse, d_o, {dq, dk, dv});
  const reference::Tolerance storage(reference::kBf16Tolerance);
  EXPECT_EQ(reference::attention_forward(a, widen(q), widen(k), widen(v), widen(o), lse), "pass");
  EXPECT_EQ(reference::attention_backward(a, widen(q), widen(k), widen(v), widen(d_o), widen(dq),
                                          widen(dk), widen(dv)),
            "pass");
}

TEST(CalibrationReference, GemmReportsAWrongElement) {
  const ops::GemmArguments args{6, 5, 7, ops::GemmLayout::tn};
  const Floats a = inputs(42, 1);
  const Floats b = inputs(35, 2);
  Floats c(30, kNaN);
  ops::gemm_cpu(args, a, b, c);
  EXPECT_EQ(reference::gemm(args, a, b, c), "pass");
  c[3 * 5 + 2] = off(c[3 * 5 + 2]);
  expect_reported(reference::gemm(args, a, b, c), "C[3, 2]");
}

TEST(CalibrationReference, LayerNormReportsWrongOutputs) {
  const ops::NormShape s{9, 40};
  const Floats x = inputs(360, 3);
  const Floats gamma = inputs(40, 4);
  const Floats beta = inputs(40, 5);
  const Floats dy = inputs(360, 6);
  Floats y(360, kNaN), mean(9, kNaN), rstd(9, kNaN);
  ops::layer_norm_forward_cpu(s, x, gamma, beta, y, mean, rstd);
  EXPECT_EQ(reference::layer_norm_forward(s, x, gamma, beta, y, mean, rstd), "pass");
  Floats bad = y;
  bad[8 * 40 + 17] = off(bad[8 * 40 + 17]);
  expect_reported(reference::layer_norm_forward(s, x, gamma, beta, bad, mean, rstd), "y[8, 17]");
  bad = rstd;
  bad[4] = off(bad[4]);
  expect_reported(reference::layer_norm_forward(s, x, gamma, beta, y, mean, bad), "rstd[4]");
  bad = y;
  bad[1 * 40 + 3] = kNaN;  // row 1 is not sampled
  EXPECT_NE(reference::layer_norm_forward(s, x, gamma, beta, bad, mean, rstd).find("not finite"),
            std::string::npos);

  Floats dx(360, kNaN), dgamma(40, kNaN), dbeta(40, kNaN);
  ops::layer_norm_backward_cpu(s, dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
  EXPECT_EQ(reference::layer_norm_backward(s, dy, x, gamma, dx, dgamma, dbeta), "pass");
  bad = dx;
  bad[0 * 40 + 39] = off(bad[39]);
  expect_reported(reference::layer_norm_backward(s, dy, x, gamma, bad, dgamma, dbeta), "dx[0, 39]");
  bad = dgamma;
  bad[20] = off(bad[20]);
  expect_reported(reference::layer_norm_backward(s, dy, x, gamma, dx, bad, dbeta), "dgamma[20]");
  bad = dbeta;
  bad[39] = off(bad[39]);
  expect_reported(reference::layer_norm_backward(s, dy, x, gamma, dx, dgamma, bad), "dbeta[39]");
  // A backward that ignores the mean term of the gradient.
  Floats rms_dx(360, kNaN), rms_dgamma(40, kNaN);
  ops::rms_norm_backward_cpu(s, dy, x, gamma, rstd, rms_dx, rms_dgamma);
  EXPECT_NE(reference::layer_norm_backward(s, dy, x, gamma, rms_dx, dgamma, dbeta), "pass");
}

TEST(CalibrationReference, RmsNormReportsWrongOutputs) {
  const ops::NormShape s{7, 33};
  const Floats x = inputs(231, 7);
  const Floats gamma = inputs(33, 8);
  const Floats dy = inputs(231, 9);
  Floats y(231, kNaN), rstd(7, kNaN);
  ops::rms_norm_forward_cpu(s, x, gamma, y, rstd);
  EXPECT_EQ(reference::rms_norm_forward(s, x, gamma, y, rstd), "pass");
  Floats bad = y;
  bad[3 * 33 + 32] = off(bad[3 * 33 + 32]);
  expect_reported(reference::rms_norm_forward(s, x, gamma, bad, rstd), "y[3, 32]");
  // Another eps: the reference uses the shape's.
  ops::NormShape other = s;
  other.eps = 0.5F;
  EXPECT_NE(reference::rms_norm_forward(other, x, gamma, y, rstd), "pass");

  Floats dx(231, kNaN), dgamma(33, kNaN);
  ops::rms_norm_backward_cpu(s, dy, x, gamma, rstd, dx, dgamma);
  EXPECT_EQ(reference::rms_norm_backward(s, dy, x, gamma, dx, dgamma), "pass");
  bad = dx;
  bad[6 * 33 + 16] = off(bad[6 * 33 + 16]);
  expect_reported(reference::rms_norm_backward(s, dy, x, gamma, bad, dgamma), "dx[6, 16]");
  bad = dgamma;
  bad[0] = off(bad[0]);
  expect_reported(reference::rms_norm_backward(s, dy, x, gamma, dx, bad), "dgamma[0]");
}

TEST(CalibrationReference, GeluReportsWrongOutputs) {
  const std::size_t n = 3001;
  Floats x = inputs(n, 10);
  for (float& v : x) v *= 3.0F;  // into the tails
  const Floats dy = inputs(n, 11);
  Floats y(n, kNaN), dx(n, kNaN);
  ops::gelu_forward_cpu(x, y);
  ops::gelu_backward_cpu(dy, x, dx);
  EXPECT_EQ(reference::gelu_forward(x, y), "pass");
  EXPECT_EQ(reference::gelu_backward(dy, x, dx), "pass");
  Floats bad = y;
  bad[1500] = off(bad[1500]);
  expect_reported(reference::gelu_forward(x, bad), "y[1500]");
  bad = dx;
  bad[3000] = off(bad[3000]);
  expect_reported(reference::gelu_backward(dy, x, bad), "dx[3000]");
  // The exact (erf) GeLU: up to 4.7e-4 from the tanh approximation on [-3, 3].
  for (std::size_t i = 0; i < n; ++i) {
    bad[i] = static_cast<float>(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
  }
  EXPECT_NE(reference::gelu_forward(x, bad), "pass");
}

TEST(CalibrationReference, SwigluReportsWrongOutputs) {
  const std::size_t n = 2000;
  const Floats gate = inputs(n, 12);
  const Floats up = inputs(n, 13);
  const Floats dy = inputs(n, 14);
  Floats y(n, kNaN), dgate(n, kNaN), dup(n, kNaN);
  ops::swiglu_forward_cpu(gate, up, y);
  ops::swiglu_backward_cpu(dy, gate, up, dgate, dup);
  EXPECT_EQ(reference::swiglu_forward(gate, up, y), "pass");
  EXPECT_EQ(reference::swiglu_backward(dy, gate, up, dgate, dup), "pass");
  Floats bad = y;
  bad[0] = off(bad[0]);
  expect_reported(reference::swiglu_forward(gate, up, bad), "y[0]");
  bad = dgate;
  bad[1000] = off(bad[1000]);
  expect_reported(reference::swiglu_backward(dy, gate, up, bad, dup), "dgate[1000]");
  bad = dup;
  bad[1999] = off(bad[1999]);
  expect_reported(reference::swiglu_backward(dy, gate, up, dgate, bad), "dup[1999]");
  // Gate and up swapped.
  EXPECT_NE(reference::swiglu_forward(up, gate, y), "pass");
}

TEST(CalibrationReference, CausalSoftmaxReportsWrongOutputs) {
  const ops::SoftmaxShape s{3, 17, 0.7F};
  const std::size_t n = std::size_t{3} * 17 * 17;
  const Floats x = inputs(n, 15);
  const Floats dy = inputs(n, 16);
  Floats y(n, kNaN), dx(n, kNaN);
  ops::causal_softmax_forward_cpu(s, x, y);
  ops::causal_softmax_backward_cpu(s, dy, y, dx);
  EXPECT_EQ(reference::causal_softmax_forward(s, x, y), "pass");
  EXPECT_EQ(reference::causal_softmax_backward(s, dy, y, dx), "pass");
  const auto at = [](std::size_t m, std::size_t i, std::size_t j) { return (m * 17 + i) * 17 + j; };
  Floats bad = y;
  bad[at(2, 16, 5)] = off(bad[at(2, 16, 5)]);
  expect_reported(reference::causal_softmax_forward(s, x, bad), "y[2, 16, 5]");
  bad = y;
  bad[at(1, 8, 9)] = 1e-3F;  // above the diagonal: masked
  expect_reported(reference::causal_softmax_forward(s, x, bad), "y[1, 8, 9]");
  bad = dx;
  bad[at(0, 0, 0)] = off(bad[at(0, 0, 0)]);
  expect_reported(reference::causal_softmax_backward(s, dy, y, bad), "dx[0, 0, 0]");
  // The scores scaled otherwise.
  ops::SoftmaxShape other = s;
  other.scale = 0.5F;
  EXPECT_NE(reference::causal_softmax_forward(other, x, y), "pass");
}

// Two batches, grouped-query heads (4 query heads on 2 kv heads), key tiles that
// do not divide the sequence.
ops::AttentionShape attention_shape() {
  ops::AttentionShape s;
  s.batch = 2;
  s.q_heads = 4;
  s.kv_heads = 2;
  s.seq = 37;
  s.head_dim = 16;
  s.key_tile = 8;
  return s;
}

struct AttentionData {
  explicit AttentionData(const ops::AttentionShape& s)
      : q(inputs(count(s, s.q_heads), 17)),
        k(inputs(count(s, s.kv_heads), 18)),
        v(inputs(count(s, s.kv_heads), 19)),
        d_o(inputs(count(s, s.q_heads), 20)),
        o(count(s, s.q_heads), kNaN),
        lse(static_cast<std::size_t>(s.batch * s.q_heads * s.seq), kNaN),
        dq(count(s, s.q_heads), kNaN),
        dk(count(s, s.kv_heads), kNaN),
        dv(count(s, s.kv_heads), kNaN) {
    ops::attention_forward_cpu(s, q, k, v, o, lse);
    ops::attention_backward_cpu(s, q, k, v, o, lse, d_o, {dq, dk, dv});
  }
  static std::size_t count(const ops::AttentionShape& s, std::int64_t heads) {
    return static_cast<std::size_t>(s.batch * heads * s.seq * s.head_dim);
  }
  Floats q, k, v, d_o, o, lse, dq, dk, dv;
};

TEST(CalibrationReference, AttentionReportsWrongOutputs) {
  const ops::AttentionShape s = attention_shape();
  const AttentionData a(s);
  EXPECT_EQ(reference::attention_forward(s, a.q, a.k, a.v, a.o, a.lse), "pass");
  EXPECT_EQ(reference::attention_backward(s, a.q, a.k, a.v, a.d_o, a.dq, a.dk, a.dv), "pass");
  // [batch, heads, seq, head_dim]
  const auto row = [&s](std::int64_t b, std::int64_t h, std::int64_t heads, std::int64_t i) {
    return static_cast<std::size_t>(((b * heads + h) * s.seq + i) * s.head_dim);
  };
  Floats bad = a.o;
  bad[row(1, 2, 4, 18) + 7] = off(bad[row(1, 2, 4, 18) + 7]);
  expect_reported(reference::attention_forward(s, a.q, a.k, a.v, bad, a.lse), "o[1, 2, 18, 7]");
  bad = a.lse;
  bad[(0 * 4 + 3) * 37 + 36] = off(bad[(0 * 4 + 3) * 37 + 36]);
  expect_reported(reference::attention_forward(s, a.q, a.k, a.v, a.o, bad), "lse[0, 3, 36]");
  bad = a.dq;
  bad[row(0, 0, 4, 0) + 15] = off(bad[row(0, 0, 4, 0) + 15]);
  expect_reported(reference::attention_backward(s, a.q, a.k, a.v, a.d_o, bad, a.dk, a.dv),
                  "dq[0, 0, 0, 15]");
  bad = a.dk;
  bad[row(1, 1, 2, 0) + 3] = off(bad[row(1, 1, 2, 0) + 3]);
  expect_reported(reference::attention_backward(s, a.q, a.k, a.v, a.d_o, a.dq, bad, a.dv),
                  "dk[1, 1, 0, 3]");
  bad = a.dv;
  bad[row(0, 0, 2, 36)] = off(bad[row(0, 0, 2, 36)]);
  expect_reported(reference::attention_backward(s, a.q, a.k, a.v, a.d_o, a.dq, a.dk, bad),
                  "dv[0, 0, 36, 0]");
}

TEST(CalibrationReference, AttentionFollowsTheMaskAndScale) {
  ops::AttentionShape s = attention_shape();
  s.causal = false;
  s.window = 5;
  s.scale = 0.3F;
  const AttentionData windowed(s);
  EXPECT_EQ(
      reference::attention_forward(s, windowed.q, windowed.k, windowed.v, windowed.o, windowed.lse),
      "pass");
  EXPECT_EQ(reference::attention_backward(s, windowed.q, windowed.k, windowed.v, windowed.d_o,
                                          windowed.dq, windowed.dk, windowed.dv),
            "pass");
  // Outputs of the causal attention are not those of the windowed one, nor the reverse.
  const AttentionData causal(attention_shape());
  EXPECT_NE(reference::attention_forward(s, causal.q, causal.k, causal.v, causal.o, causal.lse),
            "pass");
  EXPECT_NE(reference::attention_backward(attention_shape(), windowed.q, windowed.k, windowed.v,
                                          windowed.d_o, windowed.dq, windowed.dk, windowed.dv),
            "pass");
}

TEST(CalibrationReference, AdamWReportsWrongStates) {
  ops::AdamWArguments a;
  a.weight_decay = 0.1F;
  a.cautious_decay = true;
  a.step = 3;
  const std::size_t n = 1500;
  const Floats p0 = inputs(n, 21), g = inputs(n, 22), m0 = inputs(n, 23);
  const Floats v0(n, 0.5F);
  Floats p = p0, m = m0, v = v0;
  ops::adamw_step_cpu(a, p, g, m, v);
  EXPECT_EQ(reference::adamw_step(a, {p0, m0, v0}, g, {p, m, v}), "pass");
  Floats bad = p;
  bad[750] = off(bad[750]);
  expect_reported(reference::adamw_step(a, {p0, m0, v0}, g, {bad, m, v}), "param[750]");
  bad = m;
  bad[0] = off(bad[0]);
  expect_reported(reference::adamw_step(a, {p0, m0, v0}, g, {p, bad, v}), "m[0]");
  bad = v;
  bad[1499] = off(bad[1499]);
  expect_reported(reference::adamw_step(a, {p0, m0, v0}, g, {p, m, bad}), "v[1499]");
  // A step without weight decay (a change of 1e-4 |p| to the parameter), and one
  // without bias correction.
  for (const bool no_decay : {true, false}) {
    ops::AdamWArguments other = a;
    if (no_decay) {
      other.weight_decay = 0.0F;
    } else {
      other.step = 1;  // bias-corrected as the first step, not the third
    }
    Floats p2 = p0, m2 = m0, v2 = v0;
    ops::adamw_step_cpu(other, p2, g, m2, v2);
    EXPECT_NE(reference::adamw_step(a, {p0, m0, v0}, g, {p2, m2, v2}), "pass") << no_decay;
  }
}

TEST(CalibrationReference, LionReportsWrongStates) {
  ops::LionArguments a;
  a.weight_decay = 0.1F;
  a.cautious_decay = true;
  const std::size_t n = 1200;
  const Floats p0 = inputs(n, 24), g = inputs(n, 25), m0 = inputs(n, 26);
  Floats p = p0, m = m0;
  ops::lion_step_cpu(a, p, g, m);
  EXPECT_EQ(reference::lion_step(a, {p0, m0}, g, {p, m}), "pass");
  Floats bad = p;
  bad[1199] = off(bad[1199]);
  expect_reported(reference::lion_step(a, {p0, m0}, g, {bad, m}), "param[1199]");
  bad = m;
  bad[600] = off(bad[600]);
  expect_reported(reference::lion_step(a, {p0, m0}, g, {p, bad}), "m[600]");
  // Decay everywhere, not cautiously.
  ops::LionArguments other = a;
  other.cautious_decay = false;
  Floats p2 = p0, m2 = m0;
  ops::lion_step_cpu(other, p2, g, m2);
  EXPECT_NE(reference::lion_step(a, {p0, m0}, g, {p2, m2}), "pass");
}

TEST(CalibrationReference, QuantizeReportsWrongCodesAndScales) {
  for (const auto scaling : {ops::QuantScaling::per_token, ops::QuantScaling::per_channel}) {
    const ops::QuantShape s{5, 300, scaling};
    const Floats x = inputs(1500, 27);
    std::vector<ops::Fp8E4M3> q(1500);
    Floats scales(static_cast<std::size_t>(ops::quant_scale_count(s)), kNaN);
    ops::quantize_fp8_cpu(s, x, q, scales);
    EXPECT_EQ(reference::quantize_fp8(s, x, q, scales), "pass");
    auto bad_q = q;
    bad_q[4 * 300 + 150].bits ^= 1;  // one step away
    expect_reported(reference::quantize_fp8(s, x, bad_q, scales), "q[4, 150]");
    Floats bad = scales;
    bad.back() = off(bad.back());
    EXPECT_EQ(reference::quantize_fp8(s, x, q, bad).rfind("scales[", 0), 0U);
  }
}

TEST(CalibrationReference, RoutingAndPermutationReportWrongOutputs) {
  const ops::RouterShape s{64, 8, 2, ops::expert_capacity(64, 8, 2, 1.0)};
  const Floats logits = inputs(std::size_t{64} * 8, 28);
  const ops::Routing r = ops::route_top_k_cpu(s, logits);
  EXPECT_EQ(reference::route_top_k(s, logits, r), "pass");
  ops::Routing bad = r;
  bad.weight[2 * 32 + 1] = off(bad.weight[2 * 32 + 1]);  // token 32 (the middle), choice 1
  expect_reported(reference::route_top_k(s, logits, bad), "weight[32, 1]");
  bad = r;
  std::swap(bad.expert[0], bad.expert[1]);  // token 0's choices in the wrong order
  EXPECT_EQ(reference::route_top_k(s, logits, bad).rfind("expert[0, 1] = ", 0), 0U);
  bad = r;
  bad.slot[std::size_t{2} * 63] += 1;  // the last token's first choice (token * top_k + choice)
  expect_reported(reference::route_top_k(s, logits, bad), "slot[63, 0]");
  // Without renormalization the weights are the plain probabilities.
  ops::RouterShape plain = s;
  plain.renormalize = false;
  EXPECT_NE(reference::route_top_k(plain, logits, r), "pass");

  const std::int64_t hidden = 12;
  const Floats x = inputs(std::size_t{64} * 12, 29);
  Floats buffer(static_cast<std::size_t>(8 * s.capacity * hidden), kNaN);
  ops::permute_tokens_cpu(s, r, hidden, x, buffer);
  EXPECT_EQ(reference::permute_tokens(s, r, hidden, x, buffer), "pass");
  Floats wrong = buffer;
  const auto slot0 = static_cast<std::size_t>((3 * s.capacity + 0) * hidden + 11);
  wrong[slot0] = off(wrong[slot0]);
  expect_reported(reference::permute_tokens(s, r, hidden, x, wrong), "buffer[3, 0, 11]");
}

}  // namespace
}  // namespace myriad::calibration
