// CUDA backend of the compute kernels against the CPU backend, on fresh random
// inputs at odd sizes, outputs poisoned (all bits set: NaN) before each launch.
// Runs only where a GPU is visible (ctest label `gpu`); skips cleanly elsewhere.
#include <gtest/gtest.h>

#include "kernels/device/device_query.hpp"

#if defined(MYRIAD_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <array>
#include <random>
#include <utility>

#include "gpu_test_support.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/activation_cuda.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/attention_cuda.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/gemm_cuda.hpp"
#include "kernels/ops/moe_router.hpp"
#include "kernels/ops/moe_router_cuda.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/norm_cuda.hpp"
#include "kernels/ops/optimizer.hpp"
#include "kernels/ops/optimizer_cuda.hpp"
#include "kernels/ops/quantize.hpp"
#include "kernels/ops/quantize_cuda.hpp"
#include "kernels/ops/reduce.hpp"
#include "kernels/ops/reduce_cuda.hpp"
#endif

namespace myriad::kernels::ops {
namespace {

#if defined(MYRIAD_HAVE_CUDA)

using testing::expect_close;
using testing::random_floats;

using testing::DeviceBuffer;
using testing::have_gpu;
using testing::random_bf16;
using testing::widen;
using testing::widen_bf16;

TEST(OpsGpu, GemmBf16EveryLayoutMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(101);
  const GemmCuda gemm;
  for (const GemmLayout layout : {GemmLayout::nn, GemmLayout::nt, GemmLayout::tn}) {
    for (const auto& [m, n, k] :
         {std::array<std::int64_t, 3>{1, 1, 1}, {17, 130, 33}, {64, 3, 130}}) {
      const GemmArguments g{m, n, k, layout};
      SCOPED_TRACE(::testing::Message() << "layout " << static_cast<int>(layout) << " k " << k);
      const auto a = random_bf16(rng, static_cast<std::size_t>(m * k));
      const auto b = random_bf16(rng, static_cast<std::size_t>(k * n));
      std::vector<Bf16> want(static_cast<std::size_t>(m * n));
      gemm_cpu(g, a, b, want);
      DeviceBuffer<Bf16> da(a), db(b), dc(want.size(), DeviceFill::poison);
      gemm.run(g, da.get(), db.get(), dc.get(), nullptr);
      // Each side rounds its own fp32 sum to bf16 once: within one bf16 ulp of each other.
      expect_close(widen_bf16(dc.download()), widen(widen_bf16(want)),
                   4e-6 * static_cast<double>(k), 0x1p-7, "C");
    }
  }
}

TEST(OpsGpu, ActivationsMatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(102);
  for (const std::size_t n : {1U, 17U, 16641U}) {
    const auto x = random_floats(rng, n, -6.0F, 6.0F);
    const auto up = random_floats(rng, n);
    const auto dy = random_floats(rng, n);
    std::vector<float> y(n), dx(n), sy(n), dg(n), du(n);
    gelu_forward_cpu(x, y);
    gelu_backward_cpu(dy, x, dx);
    swiglu_forward_cpu(x, up, sy);
    swiglu_backward_cpu(dy, x, up, dg, du);
    DeviceBuffer<float> dx_in(x), dup_in(up), ddy(dy), o1(n, DeviceFill::poison),
        o2(n, DeviceFill::poison), o3(n, DeviceFill::poison), o4(n, DeviceFill::poison),
        o5(n, DeviceFill::poison);
    const auto len = static_cast<std::int64_t>(n);
    gelu_forward_cuda(dx_in.get(), o1.get(), len, nullptr);
    gelu_backward_cuda(ddy.get(), dx_in.get(), o2.get(), len, nullptr);
    swiglu_forward_cuda(dx_in.get(), dup_in.get(), o3.get(), len, nullptr);
    swiglu_backward_cuda(ddy.get(), dx_in.get(), dup_in.get(), o4.get(), o5.get(), len, nullptr);
    expect_close(o1.download(), widen(y), 1e-6, 1e-5, "gelu");
    expect_close(o2.download(), widen(dx), 1e-6, 1e-5, "gelu dx");
    expect_close(o3.download(), widen(sy), 1e-6, 1e-5, "swiglu");
    expect_close(o4.download(), widen(dg), 1e-6, 1e-5, "swiglu dgate");
    expect_close(o5.download(), widen(du), 1e-6, 1e-5, "swiglu dup");
  }
}

TEST(OpsGpu, BiasGeluMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(107);
  for (const auto& [rows, cols] : {std::array<std::int64_t, 2>{1, 1}, {17, 130}, {300, 7}}) {
    const auto n = static_cast<std::size_t>(rows * cols);
    const auto x = random_floats(rng, n, -4.0F, 4.0F);
    const auto bias = random_floats(rng, static_cast<std::size_t>(cols));
    const auto dy = random_floats(rng, n);
    std::vector<float> y(n), dx(n), dbias(bias.size());
    bias_gelu_forward_cpu(rows, cols, x, bias, y);
    bias_gelu_backward_cpu(rows, cols, dy, x, bias, dx, dbias);
    DeviceBuffer<float> gx(x), gbias(bias), gdy(dy), gy(n, DeviceFill::poison),
        gdx(n, DeviceFill::poison), gdbias(bias.size(), DeviceFill::poison);
    bias_gelu_forward_cuda(gx.get(), gbias.get(), gy.get(), rows, cols, nullptr);
    bias_gelu_backward_cuda(gdy.get(), gx.get(), gbias.get(), gdx.get(), gdbias.get(), rows, cols,
                            nullptr);
    expect_close(gy.download(), widen(y), 1e-6, 1e-5, "bias gelu");
    expect_close(gdx.download(), widen(dx), 1e-6, 1e-5, "bias gelu dx");
    expect_close(gdbias.download(), widen(dbias), 1e-5, 1e-4, "bias gelu dbias");
  }
}

TEST(OpsGpu, AttentionForwardAndBackwardMatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(108);
  // batch, q_heads, kv_heads, seq, head_dim, causal, window
  for (const AttentionShape& s :
       {AttentionShape{1, 2, 2, 17, 8, true, 0}, AttentionShape{2, 4, 2, 130, 16, true, 50},
        AttentionShape{1, 3, 1, 133, 64, false, 0}, AttentionShape{1, 2, 1, 9, 4, false, 3},
        AttentionShape{1, 1, 1, 1, 3, true, 0}, AttentionShape{1, 2, 2, 300, 128, true, 0}}) {
    SCOPED_TRACE(::testing::Message() << "seq " << s.seq << " d " << s.head_dim << " causal "
                                      << s.causal << " window " << s.window);
    const auto nq = static_cast<std::size_t>(s.batch * s.q_heads * s.seq * s.head_dim);
    const auto nkv = static_cast<std::size_t>(s.batch * s.kv_heads * s.seq * s.head_dim);
    const auto nl = static_cast<std::size_t>(s.batch * s.q_heads * s.seq);
    const auto q = random_floats(rng, nq, -2.0F, 2.0F);
    const auto k = random_floats(rng, nkv, -2.0F, 2.0F);
    const auto v = random_floats(rng, nkv);
    const auto dout = random_floats(rng, nq);
    std::vector<float> o(nq), lse(nl), dq(nq), dk(nkv), dv(nkv);
    attention_forward_cpu(s, q, k, v, o, lse);
    attention_backward_cpu(s, q, k, v, o, lse, dout, AttentionGrads{dq, dk, dv});
    DeviceBuffer<float> gq(q), gk(k), gv(v), gdo(dout), go(nq, DeviceFill::poison),
        glse(nl, DeviceFill::poison), gdq(nq, DeviceFill::poison), gdk(nkv, DeviceFill::poison),
        gdv(nkv, DeviceFill::poison), gdelta(nl, DeviceFill::poison);
    attention_forward_cuda(s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), nullptr);
    attention_backward_cuda(s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), gdo.get(),
                            AttentionCudaGrads{gdq.get(), gdk.get(), gdv.get(), gdelta.get()},
                            nullptr);
    expect_close(go.download(), widen(o), 1e-5, 1e-4, "o");
    expect_close(glse.download(), widen(lse), 1e-5, 1e-5, "lse");
    expect_close(gdq.download(), widen(dq), 1e-4, 1e-3, "dq");
    expect_close(gdk.download(), widen(dk), 1e-4, 1e-3, "dk");
    expect_close(gdv.download(), widen(dv), 1e-4, 1e-3, "dv");
  }
}

TEST(OpsGpu, MoeRoutingMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(109);
  // hidden 128 moves rows 16 bytes a load, 130 element by element.
  for (const auto& [hidden, s] :
       {std::pair{std::int64_t{130}, RouterShape{17, 5, 2, 4}},
        std::pair{std::int64_t{130}, RouterShape{1, 1, 1, 1}},
        std::pair{std::int64_t{130}, RouterShape{300, 8, 2, 100, false}},
        std::pair{std::int64_t{128}, RouterShape{17, 5, 2, 4}},
        std::pair{std::int64_t{128}, RouterShape{300, 8, 2, 100, false}}}) {
    const auto logits =
        random_floats(rng, static_cast<std::size_t>(s.tokens * s.experts), -3.0F, 3.0F);
    const auto x = random_floats(rng, static_cast<std::size_t>(s.tokens * hidden));
    const auto nbuf = static_cast<std::size_t>(s.experts * s.capacity * hidden);
    const Routing want = route_top_k_cpu(s, logits);
    std::vector<float> buffer(nbuf), y(x.size());
    permute_tokens_cpu(s, want, hidden, x, buffer);
    unpermute_tokens_cpu(s, want, hidden, buffer, y);
    const std::size_t choices = want.expert.size();
    DeviceBuffer<float> glogits(logits), gx(x), gweight(choices, DeviceFill::poison),
        gbuffer(nbuf, DeviceFill::poison), gy(x.size(), DeviceFill::poison);
    DeviceBuffer<std::int32_t> gexpert(choices, DeviceFill::poison),
        gslot(choices, DeviceFill::poison), gload(want.load.size(), DeviceFill::poison);
    const RoutingCuda r{gexpert.get(), gweight.get(), gslot.get(), gload.get()};
    route_top_k_cuda(s, glogits.get(), r, nullptr);
    permute_tokens_cuda(s, r, hidden, gx.get(), gbuffer.get(), nullptr);
    unpermute_tokens_cuda(s, r, hidden, gbuffer.get(), gy.get(), nullptr);
    EXPECT_EQ(gexpert.download(), want.expert);
    EXPECT_EQ(gslot.download(), want.slot);
    EXPECT_EQ(gload.download(), want.load);
    expect_close(gweight.download(), widen(want.weight), 1e-6, 1e-5, "weight");
    expect_close(gbuffer.download(), widen(buffer), 0.0, 0.0, "buffer");
    expect_close(gy.download(), widen(y), 1e-6, 1e-5, "y");
  }
}

TEST(OpsGpu, NormsMatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(106);
  for (const auto& [rows, hidden] :
       {std::array<std::int64_t, 2>{1, 1},
        {3, 17},
        {17, 130},
        {5, 1031},
        // More rows than column-sum chunks (128): chunks of several rows, and empty ones.
        {300, 33},
        {1000, 257}}) {
    const NormShape s{rows, hidden};
    SCOPED_TRACE(::testing::Message() << rows << " x " << hidden);
    const auto n = static_cast<std::size_t>(rows * hidden);
    const auto h = static_cast<std::size_t>(hidden);
    const auto r = static_cast<std::size_t>(rows);
    const auto x = random_floats(rng, n, -2.0F, 3.0F);
    const auto gamma = random_floats(rng, h, 0.5F, 1.5F);
    const auto beta = random_floats(rng, h);
    const auto dy = random_floats(rng, n);
    std::vector<float> y(n), mean(r), rstd(r), dx(n), dgamma(h), dbeta(h);
    layer_norm_forward_cpu(s, x, gamma, beta, y, mean, rstd);
    layer_norm_backward_cpu(s, dy, x, gamma, mean, rstd, dx, dgamma, dbeta);
    DeviceBuffer<float> dx_in(x), dgam(gamma), dbet(beta), ddy(dy), gy(n, DeviceFill::poison),
        gmean(r, DeviceFill::poison), grstd(r, DeviceFill::poison), gdx(n, DeviceFill::poison),
        gdgamma(h, DeviceFill::poison), gdbeta(h, DeviceFill::poison);
    layer_norm_forward_cuda(s, dx_in.get(), dgam.get(), dbet.get(), gy.get(), gmean.get(),
                            grstd.get(), nullptr);
    layer_norm_backward_cuda(s, ddy.get(), dx_in.get(), dgam.get(), gmean.get(), grstd.get(),
                             gdx.get(), gdgamma.get(), gdbeta.get(), nullptr);
    expect_close(gy.download(), widen(y), 1e-5, 1e-5, "layer norm y");
    expect_close(gmean.download(), widen(mean), 1e-5, 1e-5, "mean");
    expect_close(grstd.download(), widen(rstd), 1e-5, 1e-5, "rstd");
    expect_close(gdx.download(), widen(dx), 1e-4, 1e-4, "layer norm dx");
    expect_close(gdgamma.download(), widen(dgamma), 1e-4, 1e-4, "layer norm dgamma");
    expect_close(gdbeta.download(), widen(dbeta), 1e-4, 1e-4, "layer norm dbeta");
    rms_norm_forward_cpu(s, x, gamma, y, rstd);
    rms_norm_backward_cpu(s, dy, x, gamma, rstd, dx, dgamma);
    DeviceBuffer<float> ry(n, DeviceFill::poison), rrstd(r, DeviceFill::poison),
        rdx(n, DeviceFill::poison), rdgamma(h, DeviceFill::poison);
    rms_norm_forward_cuda(s, dx_in.get(), dgam.get(), ry.get(), rrstd.get(), nullptr);
    rms_norm_backward_cuda(s, ddy.get(), dx_in.get(), dgam.get(), rrstd.get(), rdx.get(),
                           rdgamma.get(), nullptr);
    expect_close(ry.download(), widen(y), 1e-5, 1e-5, "rms norm y");
    expect_close(rrstd.download(), widen(rstd), 1e-5, 1e-5, "rms rstd");
    expect_close(rdx.download(), widen(dx), 1e-4, 1e-4, "rms norm dx");
    expect_close(rdgamma.download(), widen(dgamma), 1e-4, 1e-4, "rms norm dgamma");
  }
}

TEST(OpsGpu, OptimizersMatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(103);
  const std::size_t n = 4099;
  for (const bool cautious : {false, true}) {
    auto p = random_floats(rng, n);
    auto m = random_floats(rng, n, -0.1F, 0.1F);
    auto v = random_floats(rng, n, 0.0F, 0.01F);
    const auto g = random_floats(rng, n);
    DeviceBuffer<float> dp(p), dm(m), dv(v), dg(g);
    const AdamWArguments a{1e-2F, 0.9F, 0.95F, 1e-8F, 0.1F, 3, cautious};
    adamw_step_cpu(a, p, g, m, v);
    adamw_step_cuda(a, dp.get(), dg.get(), dm.get(), dv.get(), static_cast<std::int64_t>(n),
                    nullptr);
    expect_close(dp.download(), widen(p), 1e-6, 1e-5, "adamw param");
    expect_close(dm.download(), widen(m), 1e-7, 1e-5, "adamw m");
    expect_close(dv.download(), widen(v), 1e-7, 1e-5, "adamw v");
    const LionArguments l{1e-3F, 0.9F, 0.99F, 0.3F, cautious};
    lion_step_cpu(l, p, g, m);
    lion_step_cuda(l, dp.get(), dg.get(), dm.get(), static_cast<std::int64_t>(n), nullptr);
    expect_close(dp.download(), widen(p), 1e-6, 1e-5, "lion param");
    expect_close(dm.download(), widen(m), 1e-7, 1e-5, "lion m");
  }
}

TEST(OpsGpu, Fp8QuantizeIsBitIdenticalToCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(104);
  for (const QuantScaling scaling : {QuantScaling::per_token, QuantScaling::per_channel}) {
    for (const auto& [rows, cols] :
         {std::array<std::int64_t, 2>{1, 1},
          {3, 130},
          {130, 3},
          {17, 257},
          {64, 512},
          {5, 1000},
          {300, 256}}) {  // the last three take the 16-byte path, the others element by element
      const QuantShape s{rows, cols, scaling};
      const auto n = static_cast<std::size_t>(rows * cols);
      const auto x = random_floats(rng, n, -30.0F, 30.0F);
      std::vector<Fp8E4M3> q(n);
      std::vector<float> scales(static_cast<std::size_t>(quant_scale_count(s)));
      std::vector<float> back(n);
      quantize_fp8_cpu(s, x, q, scales);
      dequantize_fp8_cpu(s, q, scales, back);
      DeviceBuffer<float> dx(x), dscales(scales.size(), DeviceFill::poison),
          dback(n, DeviceFill::poison);
      DeviceBuffer<Fp8E4M3> dq(n, DeviceFill::poison);
      quantize_fp8_cuda(s, dx.get(), dq.get(), dscales.get(), nullptr);
      dequantize_fp8_cuda(s, dq.get(), dscales.get(), dback.get(), nullptr);
      const auto gq = dq.download();
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(gq[i].bits, q[i].bits) << i;
      expect_close(dscales.download(), widen(scales), 0.0, 0.0, "scales");
      expect_close(dback.download(), widen(back), 0.0, 0.0, "dequantized");
    }
  }
}

TEST(OpsGpu, Bf16QuantizeIsBitIdenticalToCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(110);
  const std::size_t n = 1031;
  const auto x = random_floats(rng, n, -50.0F, 50.0F);
  std::vector<Bf16> q(n);
  quantize_bf16_cpu(x, q);
  DeviceBuffer<float> gx(x), gback(n, DeviceFill::poison);
  DeviceBuffer<Bf16> gq(n, DeviceFill::poison);
  quantize_bf16_cuda(gx.get(), gq.get(), static_cast<std::int64_t>(n), nullptr);
  dequantize_bf16_cuda(gq.get(), gback.get(), static_cast<std::int64_t>(n), nullptr);
  const auto got = gq.download();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i].bits, q[i].bits) << i;
  expect_close(gback.download(), widen(widen_bf16(q)), 0.0, 0.0, "dequantized");
}

TEST(OpsGpu, ReduceMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(105);
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    const std::size_t n = 1031;
    auto dst = random_floats(rng, n);
    const auto src = random_floats(rng, n);
    std::vector<Bf16> bdst = random_bf16(rng, n);
    const std::vector<Bf16> bsrc = random_bf16(rng, n);
    DeviceBuffer<float> ddst(dst), dsrc(src);
    DeviceBuffer<Bf16> dbdst(bdst), dbsrc(bsrc);
    reduce_cpu(op, std::span<float>(dst), std::span<const float>(src));
    reduce_cpu(op, std::span<Bf16>(bdst), std::span<const Bf16>(bsrc));
    reduce_cuda(op, ddst.get(), dsrc.get(), static_cast<std::int64_t>(n), nullptr);
    reduce_cuda(op, dbdst.get(), dbsrc.get(), static_cast<std::int64_t>(n), nullptr);
    expect_close(ddst.download(), widen(dst), 0.0, 0.0, "fp32");
    expect_close(widen_bf16(dbdst.download()), widen(widen_bf16(bdst)), 0.0, 0.0, "bf16");
  }
}

#else

TEST(OpsGpu, NoCudaBackendInThisBuild) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace myriad::kernels::ops
