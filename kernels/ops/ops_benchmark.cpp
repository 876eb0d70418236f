// The CPU kernels one by one, in Google Benchmark's terms: each benchmark's
// label names the calibration family it measures ("family=activation.gelu.fwd")
// and its counters give one iteration's work (flops, bytes; m, n and k for
// GEMMs), so that its --benchmark_out JSON is what `myriad calibrate import
// google-benchmark` reads. It also shows whether a kernel is pathological beside
// its peers: GeLU and SwiGLU move about the same bytes per element.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops/activation.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/norm.hpp"

namespace myriad::kernels::ops {
namespace {

std::vector<float> inputs(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = scale * (static_cast<float>(i % 977) / 977.0F - 0.5F);  // -scale/2 .. scale/2
  }
  return v;
}

void set_work(benchmark::State& state, const models::Op& op, bool backward, const char* family) {
  state.counters["flops"] = op.flops;
  state.counters["bytes"] = backward && op.backward_bytes > 0 ? op.backward_bytes : op.bytes;
  state.SetLabel(std::string("family=") + family);
}

void BM_Gemm(benchmark::State& state) {
  const std::int64_t size = state.range(0);
  const GemmArguments args{size, size, size, GemmLayout::nn, 1.0F, 0.0F};
  const auto n = static_cast<std::size_t>(size * size);
  const std::vector<float> a = inputs(n, 2), b = inputs(n, 2);
  std::vector<float> c(n);
  for (auto _ : state) {
    gemm_cpu(args, a, b, c);
    benchmark::DoNotOptimize(c.data());
  }
  const models::Op op = gemm_op(args, 4);
  state.counters["m"] = static_cast<double>(size);
  state.counters["n"] = static_cast<double>(size);
  state.counters["k"] = static_cast<double>(size);
  set_work(state, op, false, "gemm");
}
BENCHMARK(BM_Gemm)->Arg(128)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond);

void BM_Activation(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool swiglu = state.range(1) != 0;
  const bool backward = state.range(2) != 0;
  const std::vector<float> x = inputs(n, 8), up = inputs(n, 4), dy = inputs(n, 1);
  std::vector<float> y(n), dup(n);
  for (auto _ : state) {
    if (swiglu && backward) {
      swiglu_backward_cpu(dy, x, up, y, dup);
    } else if (swiglu) {
      swiglu_forward_cpu(x, up, y);
    } else if (backward) {
      gelu_backward_cpu(dy, x, y);
    } else {
      gelu_forward_cpu(x, y);
    }
    benchmark::DoNotOptimize(y.data());
  }
  const auto count = static_cast<std::int64_t>(n);
  set_work(state, swiglu ? swiglu_op(count, 4) : gelu_op(count, 4), backward,
           swiglu ? (backward ? "activation.swiglu.bwd" : "activation.swiglu.fwd")
                  : (backward ? "activation.gelu.bwd" : "activation.gelu.fwd"));
}
// n, SwiGLU (1) or GeLU (0), backward (1) or forward (0).
BENCHMARK(BM_Activation)
    ->ArgsProduct({{1 << 18, 1 << 21}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_RmsNorm(benchmark::State& state) {
  const NormShape s{state.range(0), state.range(1)};
  const auto n = static_cast<std::size_t>(s.rows * s.hidden);
  const std::vector<float> x = inputs(n, 4), gamma = inputs(static_cast<std::size_t>(s.hidden), 1);
  std::vector<float> y(n), rstd(static_cast<std::size_t>(s.rows));
  for (auto _ : state) {
    rms_norm_forward_cpu(s, x, gamma, y, rstd);
    benchmark::DoNotOptimize(y.data());
  }
  set_work(state, rms_norm_op(s, 4), false, "norm.rms.fwd");
}
BENCHMARK(BM_RmsNorm)->Args({512, 1024})->Args({2048, 4096})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace myriad::kernels::ops

BENCHMARK_MAIN();
