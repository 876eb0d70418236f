// Causal softmax, CUDA backend against the CPU backend (itself checked against
// float64 in ops_causal_softmax_test.cpp), at odd sequence lengths, including
// rows longer than a block, outputs poisoned first. Label `gpu`.
#include <gtest/gtest.h>

#if defined(MYRIAD_HAVE_CUDA)
#include <random>

#include "gpu_test_support.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/ops/causal_softmax_cuda.hpp"
#endif

namespace myriad::kernels::ops {
namespace {

#if defined(MYRIAD_HAVE_CUDA)

using testing::DeviceBuffer;
using testing::expect_close;
using testing::have_gpu;
using testing::random_floats;
using testing::widen;

TEST(OpsGpu, CausalSoftmaxMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(112);
  for (const SoftmaxShape& s : {SoftmaxShape{1, 1, 1.0F}, SoftmaxShape{3, 17, 0.25F},
                                SoftmaxShape{2, 257, 0.125F}, SoftmaxShape{1, 600, 0.0883883F}}) {
    SCOPED_TRACE(::testing::Message() << s.matrices << " x " << s.seq << ", scale " << s.scale);
    const auto n = static_cast<std::size_t>(s.matrices * s.seq * s.seq);
    const auto x = random_floats(rng, n, -8.0F, 8.0F);
    const auto dy = random_floats(rng, n);
    std::vector<float> y(n), dx(n);
    causal_softmax_forward_cpu(s, x, y);
    causal_softmax_backward_cpu(s, dy, y, dx);
    DeviceBuffer<float> gx(x), gdy(dy), gy(n, DeviceFill::poison), gdx(n, DeviceFill::poison);
    causal_softmax_forward_cuda(s, gx.get(), gy.get(), nullptr);
    causal_softmax_backward_cuda(s, gdy.get(), gy.get(), gdx.get(), nullptr);
    expect_close(gy.download(), widen(y), 1e-7, 1e-5, "y");
    expect_close(gdx.download(), widen(dx), 1e-6, 1e-4, "dx");
  }
}

#else

TEST(OpsGpu, NoCudaCausalSoftmaxInThisBuild) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace myriad::kernels::ops
