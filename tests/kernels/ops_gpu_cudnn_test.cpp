// cuDNN's fused attention forward and backward (attention_cudnn.hpp) against
// the CPU backend's bf16 path, as OpsGpu.AttentionMmaForwardMatchesCpu and
// AttentionMmaBackwardMatchesCpu check the tensor-core kernels: both keep scores
// and softmax in fp32 and round o to bf16 once; cuDNN, like FlashAttention, also
// rounds P to bf16 before P · V, so o may differ by a few thousandths besides one
// bf16 ulp, and the gradients (P and dS in bf16 before their matmuls) by about a
// percent. Label `gpu`; skips without a device or without libcudnn. The shape
// checks run wherever CUDA was built.
#include <gtest/gtest.h>

#if defined(MYRIAD_HAVE_CUDNN)
#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/attention_cudnn.hpp"
#endif

namespace myriad::kernels::ops {
namespace {

#if defined(MYRIAD_HAVE_CUDNN)

using testing::attention_inputs;
using testing::AttentionInputs;
using testing::describe;
using testing::DeviceBuffer;
using testing::expect_close;
using testing::expect_gradient_close;
using testing::have_gpu;
using testing::random_bf16;
using testing::widen;
using testing::widen_bf16;

constexpr double kOneUlp = 0x1p-7;

TEST(OpsCudnn, CanImplementSaysWhyNot) {
  // Expectation: the shapes cuDNN is asked for pass; each other shape is refused
  // with a reason that names what is wrong.
  EXPECT_EQ(attention_cudnn_can_implement({1, 2, 2, 17, 64, true, 0}), "");
  EXPECT_EQ(attention_cudnn_can_implement({2, 8, 2, 300, 128, false, 0}), "");
  EXPECT_EQ(attention_cudnn_can_implement({1, 2, 1, 200, 128, true, 40}), "");
  const std::pair<AttentionShape, const char*> refused[] = {
      {{1, 2, 2, 17, 96, true, 0}, "head_dim"},
      {{1, 2, 2, 17, 256, true, 0}, "head_dim"},
      {{1, 3, 2, 17, 64, true, 0}, "kv_heads must divide q_heads"},
      {{0, 2, 2, 17, 64, true, 0}, "at least 1"},
      {{1, 2, 2, 0, 64, true, 0}, "at least 1"},
      {{1, 2, 2, 17, 64, true, -1}, "window"},
      {{1, 2, 2, 17, 64, true, 0, -1.0F}, "scale"},
  };
  for (const auto& [s, reason] : refused) {
    const std::string why = attention_cudnn_can_implement(s);
    EXPECT_NE(why.find(reason), std::string::npos) << "expected '" << reason << "' in: " << why;
  }
}

TEST(OpsCudnn, ForwardRefusesWhatItCannotRun) {
  // Expectation: a refused shape throws std::invalid_argument before cuDNN is
  // touched, so this holds with or without a GPU or libcudnn.
  const AttentionShape s{1, 2, 2, 17, 96, true, 0};
  EXPECT_THROW(attention_forward_cudnn(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
               std::invalid_argument);
}

TEST(OpsCudnn, BackwardRefusesWhatItCannotRun) {
  // Expectation: a shape the forward refuses, seq 1 (which cuDNN's backward does
  // not run) and missing pointers throw std::invalid_argument before cuDNN is
  // touched, with or without a GPU or libcudnn.
  const AttentionCudaGradsBf16 none{nullptr, nullptr, nullptr, nullptr};
  for (const AttentionShape& s :
       {AttentionShape{1, 2, 2, 17, 96, true, 0}, AttentionShape{1, 3, 2, 128, 64, true, 0},
        AttentionShape{1, 2, 2, 1, 64, true, 0}, AttentionShape{1, 2, 2, 128, 64, true, 0}}) {
    EXPECT_THROW(attention_backward_cudnn(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                          none, nullptr),
                 std::invalid_argument)
        << "seq " << s.seq << " d " << s.head_dim;
  }
}

TEST(OpsCudnn, AvailableSaysWhyNot) {
  // Expectation: without a GPU the answer is a reason, never a crash; with one,
  // the reason (if any) names cuDNN or the device.
  const std::string why = attention_cudnn_available();
  if (!have_gpu()) {
    EXPECT_NE(why, "");
  }
  if (!why.empty()) std::cout << "attention_cudnn_available: " << why << "\n";
}

// Runs cuDNN and the CPU backend on random inputs of `s`, compares o and lse.
void expect_cudnn_matches_cpu(std::mt19937_64& rng, const AttentionShape& s) {
  SCOPED_TRACE(describe(s));
  ASSERT_EQ(attention_cudnn_can_implement(s), "");
  const AttentionInputs in = attention_inputs(rng, s);
  std::vector<Bf16> o(in.nq);
  std::vector<float> lse(in.nl);
  attention_forward_cpu(s, in.q, in.k, in.v, o, lse);
  DeviceBuffer<Bf16> gq(in.q), gk(in.k), gv(in.v), go(in.nq, DeviceFill::poison);
  DeviceBuffer<float> glse(in.nl, DeviceFill::poison);
  attention_forward_cudnn(s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), nullptr);
  expect_close(widen_bf16(go.download()), widen(widen_bf16(o)), 5e-3, kOneUlp, "o");
  // cuDNN's stats are max + log(sum exp) of the scaled scores in natural log,
  // the CPU's lse; its exponentials may be approximate, hence 2e-4, not 1e-4.
  expect_close(glse.download(), widen(lse), 2e-4, 2e-4, "lse");
}

// Skips unless a GPU and libcudnn are there.
#define MYRIAD_SKIP_WITHOUT_CUDNN()                              \
  do {                                                           \
    if (!have_gpu()) GTEST_SKIP() << query_devices().note;       \
    const std::string myriad_why_ = attention_cudnn_available(); \
    if (!myriad_why_.empty()) GTEST_SKIP() << myriad_why_;       \
  } while (false)

TEST(OpsGpu, AttentionCudnnForwardMatchesCpu) {
  MYRIAD_SKIP_WITHOUT_CUDNN();
  std::mt19937_64 rng(125);
  for (const AttentionShape& s :
       {AttentionShape{1, 2, 2, 17, 64, true, 0}, AttentionShape{2, 2, 2, 130, 64, false, 0},
        AttentionShape{1, 3, 3, 133, 128, false, 0}, AttentionShape{1, 2, 2, 300, 128, true, 0},
        AttentionShape{1, 2, 2, 64, 64, true, 0, 0.3F}}) {
    expect_cudnn_matches_cpu(rng, s);
  }
}

TEST(OpsGpu, AttentionCudnnGqaMatchesCpu) {
  MYRIAD_SKIP_WITHOUT_CUDNN();
  std::mt19937_64 rng(126);
  for (const AttentionShape& s :
       {AttentionShape{2, 4, 2, 130, 64, true, 0}, AttentionShape{1, 6, 1, 133, 128, false, 0}}) {
    expect_cudnn_matches_cpu(rng, s);
  }
}

TEST(OpsGpu, AttentionCudnnSlidingWindowMatchesCpu) {
  MYRIAD_SKIP_WITHOUT_CUDNN();
  std::mt19937_64 rng(127);
  for (const AttentionShape& s :
       {AttentionShape{2, 4, 2, 130, 64, true, 50}, AttentionShape{1, 2, 1, 200, 128, false, 40}}) {
    expect_cudnn_matches_cpu(rng, s);
  }
}

// Runs cuDNN's backward and the CPU backend's on random inputs of `s`, from the
// CPU forward's o and lse; compares dq, dk, dv at 1 % of each tensor's largest
// element plus 1 % relative. A shape the loaded cuDNN release refuses (seq not a
// multiple of 128 before 9.15.1) is reported and passed over.
void expect_cudnn_backward_matches_cpu(std::mt19937_64& rng, const AttentionShape& s) {
  SCOPED_TRACE(describe(s));
  ASSERT_EQ(attention_cudnn_can_implement(s), "");
  const AttentionInputs in = attention_inputs(rng, s);
  const auto dout = random_bf16(rng, in.nq);
  std::vector<Bf16> o(in.nq), dq(in.nq), dk(in.nkv), dv(in.nkv);
  std::vector<float> lse(in.nl);
  attention_forward_cpu(s, in.q, in.k, in.v, o, lse);
  attention_backward_cpu(s, in.q, in.k, in.v, o, lse, dout, AttentionGradsBf16{dq, dk, dv});
  DeviceBuffer<Bf16> gq(in.q), gk(in.k), gv(in.v), go(o), gdo(dout);
  DeviceBuffer<float> glse(lse), gdelta(in.nl, DeviceFill::poison);
  DeviceBuffer<Bf16> gdq(in.nq, DeviceFill::poison), gdk(in.nkv, DeviceFill::poison),
      gdv(in.nkv, DeviceFill::poison);
  try {
    attention_backward_cudnn(s, gq.get(), gk.get(), gv.get(), go.get(), glse.get(), gdo.get(),
                             AttentionCudaGradsBf16{gdq.get(), gdk.get(), gdv.get(), gdelta.get()},
                             nullptr);
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    ASSERT_NE(why.find("before cuDNN 9.15.1"), std::string::npos) << why;
    std::cout << "passed over: " << why << "\n";
    return;
  }
  expect_gradient_close(gdq, dq, "dq");
  expect_gradient_close(gdk, dk, "dk");
  expect_gradient_close(gdv, dv, "dv");
}

TEST(OpsGpu, AttentionCudnnBackwardMatchesCpu) {
  MYRIAD_SKIP_WITHOUT_CUDNN();
  std::mt19937_64 rng(129);
  for (const AttentionShape& s : {
           AttentionShape{1, 2, 2, 128, 64, true, 0},   // causal, d 64
           AttentionShape{2, 2, 2, 256, 64, false, 0},  // not causal, d 64
           AttentionShape{1, 3, 3, 128, 128, false, 0},
           AttentionShape{1, 2, 2, 256, 128, true, 0},
           AttentionShape{2, 4, 2, 128, 64, true, 0},       // GQA
           AttentionShape{1, 6, 1, 256, 128, false, 0},     // MQA
           AttentionShape{2, 4, 2, 256, 64, true, 50},      // causal window, GQA
           AttentionShape{1, 2, 1, 256, 128, false, 40},    // two-sided window
           AttentionShape{1, 2, 2, 64, 64, true, 0, 0.3F},  // explicit scale
           AttentionShape{1, 2, 2, 130, 64, true, 0},       // seq not a multiple of 128
           AttentionShape{1, 2, 1, 200, 128, false, 40},
       }) {
    expect_cudnn_backward_matches_cpu(rng, s);
  }
}

TEST(OpsGpu, AttentionCudnnReusesItsPlan) {
  // Expectation: a second call with the same shape (the cached plan) and a
  // different scale (a by-value scalar, not part of the plan) still matches.
  MYRIAD_SKIP_WITHOUT_CUDNN();
  std::mt19937_64 rng(128);
  expect_cudnn_matches_cpu(rng, AttentionShape{1, 2, 2, 96, 64, true, 0});
  expect_cudnn_matches_cpu(rng, AttentionShape{1, 2, 2, 96, 64, true, 0, 0.05F});
  expect_cudnn_backward_matches_cpu(rng, AttentionShape{1, 2, 2, 128, 64, true, 0});
  expect_cudnn_backward_matches_cpu(rng, AttentionShape{1, 2, 2, 128, 64, true, 0, 0.05F});
}

#else

TEST(OpsCudnn, NoCudnnInThisBuild) {
  GTEST_SKIP() << "built without CUDA or without cuDNN headers";
}

#endif

}  // namespace
}  // namespace myriad::kernels::ops
