// bf16 storage paths (fp32 compute) of norms, activations and attention, CUDA
// backend against the CPU backend's bf16 path (itself checked against float64 in
// ops_bf16_test.cpp). Both round fp32 values to bf16 once; the fp32 values may
// differ in their last bits and so round one bf16 ulp apart (2^-7 relative).
// Label `gpu`; skips without a device.
#include <gtest/gtest.h>

#if defined(MYRIAD_HAVE_CUDA)
#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "gpu_test_support.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/activation_cuda.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/attention_cuda.hpp"
#include "kernels/ops/attention_mma.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/norm_cuda.hpp"
#endif

namespace myriad::kernels::ops {
namespace {

#if defined(MYRIAD_HAVE_CUDA)

using testing::attention_inputs;
using testing::AttentionInputs;
using testing::describe;
using testing::DeviceBuffer;
using testing::expect_close;
using testing::expect_gradient_close;
using testing::have_gpu;
using testing::random_bf16;
using testing::random_floats;
using testing::widen;
using testing::widen_bf16;

constexpr double kOneUlp = 0x1p-7;

// The bf16 results of both backends, as floats against float64 of the CPU's.
void expect_bf16_close(const std::vector<Bf16>& got, const std::vector<Bf16>& want, double atol,
                       const char* what) {
  expect_close(widen_bf16(got), widen(widen_bf16(want)), atol, kOneUlp, what);
}

TEST(OpsGpu, NormsBf16MatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(121);
  for (const auto& [rows, hidden] : {std::array<std::int64_t, 2>{1, 1}, {17, 130}, {5, 1031}}) {
    const NormShape s{rows, hidden};
    SCOPED_TRACE(::testing::Message() << rows << " x " << hidden);
    const auto n = static_cast<std::size_t>(rows * hidden);
    const auto h = static_cast<std::size_t>(hidden);
    const auto r = static_cast<std::size_t>(rows);
    const auto x = random_bf16(rng, n, -2.0F, 3.0F);
    const auto dy = random_bf16(rng, n);
    const auto gamma = random_floats(rng, h, 0.5F, 1.5F);
    const auto beta = random_floats(rng, h);
    std::vector<Bf16> y(n), dx(n);
    std::vector<float> mean(r), rstd(r), dgamma(h), dbeta(h);
    layer_norm_forward_cpu(s, x, gamma, beta, y, mean, rstd);
    layer_norm_backward_cpu(s, dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
    DeviceBuffer<Bf16> gx(x), gdy(dy), gy(n, DeviceFill::poison), gdx(n, DeviceFill::poison);
    DeviceBuffer<float> ggamma(gamma), gbeta(beta), gmean(r, DeviceFill::poison),
        grstd(r, DeviceFill::poison), gdgamma(h, DeviceFill::poison), gdbeta(h, DeviceFill::poison);
    layer_norm_forward_cuda(s, gx.get(), ggamma.get(), gbeta.get(), gy.get(), gmean.get(),
                            grstd.get(), nullptr);
    layer_norm_backward_cuda(s, gdy.get(), gx.get(), ggamma.get(), gmean.get(), grstd.get(),
                             gdx.get(), gdgamma.get(), gdbeta.get(), nullptr);
    expect_bf16_close(gy.download(), y, 1e-5, "layer norm y");
    expect_bf16_close(gdx.download(), dx, 1e-4, "layer norm dx");
    expect_close(grstd.download(), widen(rstd), 1e-5, 1e-5, "layer norm rstd");
    expect_close(gdgamma.download(), widen(dgamma), 1e-4, 1e-4, "layer norm dgamma");
    expect_close(gdbeta.download(), widen(dbeta), 1e-4, 1e-4, "layer norm dbeta");
    rms_norm_forward_cpu(s, x, gamma, y, rstd);
    rms_norm_backward_cpu(s, dy, x, gamma, rstd, dx, dgamma);
    DeviceBuffer<Bf16> ry(n, DeviceFill::poison), rdx(n, DeviceFill::poison);
    DeviceBuffer<float> rrstd(r, DeviceFill::poison), rdgamma(h, DeviceFill::poison);
    rms_norm_forward_cuda(s, gx.get(), ggamma.get(), ry.get(), rrstd.get(), nullptr);
    rms_norm_backward_cuda(s, gdy.get(), gx.get(), ggamma.get(), rrstd.get(), rdx.get(),
                           rdgamma.get(), nullptr);
    expect_bf16_close(ry.download(), y, 1e-5, "rms norm y");
    expect_bf16_close(rdx.download(), dx, 1e-4, "rms norm dx");
    expect_close(rdgamma.download(), widen(dgamma), 1e-4, 1e-4, "rms norm dgamma");
  }
}

TEST(OpsGpu, ActivationsBf16MatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(122);
  for (const std::size_t n : {1U, 17U, 16641U}) {
    const auto x = random_bf16(rng, n, -6.0F, 6.0F);
    const auto up = random_bf16(rng, n);
    const auto dy = random_bf16(rng, n);
    std::vector<Bf16> y(n), dx(n), sy(n), dg(n), du(n);
    gelu_forward_cpu(x, y);
    gelu_backward_cpu(dy, x, dx);
    swiglu_forward_cpu(x, up, sy);
    swiglu_backward_cpu(dy, x, up, dg, du);
    DeviceBuffer<Bf16> gx(x), gup(up), gdy(dy), o1(n, DeviceFill::poison),
        o2(n, DeviceFill::poison), o3(n, DeviceFill::poison), o4(n, DeviceFill::poison),
        o5(n, DeviceFill::poison);
    const auto len = static_cast<std::int64_t>(n);
    gelu_forward_cuda(gx.get(), o1.get(), len, nullptr);
    gelu_backward_cuda(gdy.get(), gx.get(), o2.get(), len, nullptr);
    swiglu_forward_cuda(gx.get(), gup.get(), o3.get(), len, nullptr);
    swiglu_backward_cuda(gdy.get(), gx.get(), gup.get(), o4.get(), o5.get(), len, nullptr);
    expect_bf16_close(o1.download(), y, 1e-6, "gelu");
    expect_bf16_close(o2.download(), dx, 1e-6, "gelu dx");
    expect_bf16_close(o3.download(), sy, 1e-6, "swiglu");
    expect_bf16_close(o4.download(), dg, 1e-6, "swiglu dgate");
    expect_bf16_close(o5.download(), du, 1e-6, "swiglu dup");
  }
}

TEST(OpsGpu, BiasGeluBf16MatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(124);
  for (const auto& [rows, cols] : {std::array<std::int64_t, 2>{1, 1}, {17, 130}, {300, 7}}) {
    const auto n = static_cast<std::size_t>(rows * cols);
    const auto c = static_cast<std::size_t>(cols);
    const auto x = random_bf16(rng, n, -4.0F, 4.0F);
    const auto dy = random_bf16(rng, n);
    const auto bias = random_floats(rng, c);
    std::vector<Bf16> y(n), dx(n);
    std::vector<float> dbias(c);
    bias_gelu_forward_cpu(rows, cols, x, bias, y);
    bias_gelu_backward_cpu(rows, cols, dy, x, bias, dx, dbias);
    DeviceBuffer<Bf16> gx(x), gdy(dy), gy(n, DeviceFill::poison), gdx(n, DeviceFill::poison);
    DeviceBuffer<float> gbias(bias), gdbias(c, DeviceFill::poison);
    bias_gelu_forward_cuda(gx.get(), gbias.get(), gy.get(), rows, cols, nullptr);
    bias_gelu_backward_cuda(gdy.get(), gx.get(), gbias.get(), gdx.get(), gdbias.get(), rows, cols,
                            nullptr);
    expect_bf16_close(gy.download(), y, 1e-6, "bias gelu");
    expect_bf16_close(gdx.download(), dx, 1e-6, "bias gelu dx");
    expect_close(gdbias.download(), widen(dbias), 1e-5, 1e-4, "bias gelu dbias");
  }
}

TEST(OpsGpu, AttentionBf16MatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(123);
  for (const AttentionShape& s :
       {AttentionShape{1, 2, 2, 17, 8, true, 0}, AttentionShape{2, 4, 2, 130, 16, true, 50},
        AttentionShape{1, 3, 1, 133, 64, false, 0}, AttentionShape{1, 2, 2, 300, 128, true, 0}}) {
    SCOPED_TRACE(::testing::Message() << "seq " << s.seq << " d " << s.head_dim);
    const AttentionInputs in = attention_inputs(rng, s);
    const auto &q = in.q, &k = in.k, &v = in.v;
    const std::size_t nq = in.nq, nkv = in.nkv, nl = in.nl;
    const auto dout = random_bf16(rng, nq);
    std::vector<Bf16> o(nq), dq(nq), dk(nkv), dv(nkv);
    std::vector<float> lse(nl);
    attention_forward_cpu(s, q, k, v, o, lse);
    attention_backward_cpu(s, q, k, v, o, lse, dout, AttentionGradsBf16{dq, dk, dv});
    DeviceBuffer<Bf16> gq(q), gk(k), gv(v), gdo(dout), go(nq, DeviceFill::poison),
        gdq(nq, DeviceFill::poison), gdk(nkv, DeviceFill::poison), gdv(nkv, DeviceFill::poison);
    DeviceBuffer<float> glse(nl, DeviceFill::poison), gdelta(nl, DeviceFill::poison);
    attention_forward_cuda(s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), nullptr);
    // The backward reads the CPU's o, so that both sides start from the same bf16 values.
    DeviceBuffer<Bf16> go_cpu(o);
    attention_backward_cuda(s, gq.get(), gk.get(), gv.get(), go_cpu.get(), glse.get(), gdo.get(),
                            AttentionCudaGradsBf16{gdq.get(), gdk.get(), gdv.get(), gdelta.get()},
                            nullptr);
    expect_bf16_close(go.download(), o, 1e-5, "o");
    expect_close(glse.download(), widen(lse), 1e-5, 1e-5, "lse");
    expect_bf16_close(gdq.download(), dq, 1e-4, "dq");
    expect_bf16_close(gdk.download(), dk, 1e-4, "dk");
    expect_bf16_close(gdv.download(), dv, 1e-4, "dv");
  }
}

// Host code, no device needed: which shapes the tensor-core kernel takes.
TEST(AttentionMma, SaysWhichShapesItTakes) {
  EXPECT_EQ(attention_mma_can_implement(AttentionShape{1, 8, 2, 4096, 128, true, 0}), "");
  EXPECT_EQ(attention_mma_can_implement(AttentionShape{1, 8, 8, 100, 64, false, 16}), "");
  EXPECT_NE(attention_mma_can_implement(AttentionShape{1, 8, 8, 100, 32, true, 0})
                .find("head_dim 64 or 128"),
            std::string::npos);
  EXPECT_NE(attention_mma_can_implement(AttentionShape{1, 8, 3, 100, 64, true, 0}), "");
}

// The shapes the tensor-core kernels are checked on: head dims 64 and 128,
// causal or not, windows, GQA, sequences shorter than a tile and past whole tiles.
const AttentionShape kMmaShapes[] = {{1, 2, 2, 17, 64, true, 0},
                                     {2, 4, 2, 130, 64, true, 50},
                                     {1, 3, 1, 133, 128, false, 0},
                                     {1, 2, 2, 300, 128, true, 0},
                                     {1, 2, 1, 200, 128, false, 40}};

// The tensor-core forward (attention_mma.cu) against the CPU's bf16 path. It
// rounds P to bf16 before P V, as FlashAttention does, where the CPU keeps P in
// fp32: outputs (|v| <= 1) within 5e-3 plus one ulp, the log-sum-exp within 1e-4
// relative (its scores are the same products, summed in another order).
TEST(OpsGpu, AttentionMmaForwardMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(124);
  for (const AttentionShape& s : kMmaShapes) {
    SCOPED_TRACE(describe(s));
    ASSERT_EQ(attention_mma_can_implement(s), "");
    const AttentionInputs in = attention_inputs(rng, s);
    const auto &q = in.q, &k = in.k, &v = in.v;
    const std::size_t nq = in.nq, nl = in.nl;
    std::vector<Bf16> o(nq);
    std::vector<float> lse(nl);
    attention_forward_cpu(s, q, k, v, o, lse);
    DeviceBuffer<Bf16> gq(q), gk(k), gv(v), go(nq, DeviceFill::poison);
    DeviceBuffer<float> glse(nl, DeviceFill::poison);
    attention_forward_mma_cuda(s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), nullptr);
    expect_bf16_close(go.download(), o, 5e-3, "o");
    expect_close(glse.download(), widen(lse), 1e-4, 1e-4, "lse");
  }
}

// The tensor-core backward (attention_mma_backward.cu) against the CPU's bf16
// path, both from the CPU's forward (o, lse). It rounds P and dS to bf16 before
// their products (relative 2^-9 a term) where the CPU keeps them in fp32, so
// each gradient is held to 1 % of its largest element plus 1 % relative; a
// fragment or mask mistake is off by the size of the values. Two runs must agree
// bit for bit: no atomics.
TEST(OpsGpu, AttentionMmaBackwardMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(125);
  for (const AttentionShape& s : kMmaShapes) {
    SCOPED_TRACE(describe(s));
    ASSERT_EQ(attention_mma_can_implement(s), "");
    const AttentionInputs in = attention_inputs(rng, s);
    const std::size_t nq = in.nq, nkv = in.nkv, nl = in.nl;
    const auto dout = random_bf16(rng, nq);
    std::vector<Bf16> o(nq), dq(nq), dk(nkv), dv(nkv);
    std::vector<float> lse(nl);
    attention_forward_cpu(s, in.q, in.k, in.v, o, lse);
    attention_backward_cpu(s, in.q, in.k, in.v, o, lse, dout, AttentionGradsBf16{dq, dk, dv});
    DeviceBuffer<Bf16> gq(in.q), gk(in.k), gv(in.v), go(o), gdo(dout);
    DeviceBuffer<float> glse(lse), gdelta(nl, DeviceFill::poison);
    DeviceBuffer<Bf16> gdq(nq, DeviceFill::poison), gdk(nkv, DeviceFill::poison),
        gdv(nkv, DeviceFill::poison);
    const auto run = [&] {
      attention_backward_mma_cuda(
          s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), gdo.get(),
          AttentionCudaGradsBf16{gdq.get(), gdk.get(), gdv.get(), gdelta.get()}, nullptr);
      return std::array{gdq.download(), gdk.download(), gdv.download()};
    };
    const auto first = run();
    expect_gradient_close(gdq, dq, "dq");
    expect_gradient_close(gdk, dk, "dk");
    expect_gradient_close(gdv, dv, "dv");
    const auto second = run();
    for (std::size_t i = 0; i < first.size(); ++i) {
      EXPECT_TRUE(std::equal(first[i].begin(), first[i].end(), second[i].begin(),
                             [](Bf16 a, Bf16 b) { return a.bits == b.bits; }))
          << "gradient " << i << " (dq, dk, dv) differs between two runs";
    }
  }
}

#else

TEST(OpsGpu, NoCudaBf16PathsInThisBuild) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace myriad::kernels::ops
