// The CUDA grid's attention cases: the SIMT kernel (attention_cuda.cu, fp32 or
// bf16), the tensor-core kernels (attention_mma.cu, attention_mma_backward.cu)
// and, where cuDNN is there, its fused attention as the production reference
// (attention_cudnn.cpp), each checked against the CPU reference
// (measure/reference.hpp) and told apart by family: "attention",
// "attention.mma", "attention.cudnn".
#include "calibration/measure/cuda_support.hpp"

#ifdef MYRIAD_HAVE_CUDA

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "calibration/measure/reference.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/attention_cuda.hpp"
#include "kernels/ops/attention_mma.hpp"
#if defined(MYRIAD_HAVE_CUDNN)
#include "kernels/ops/attention_cudnn.hpp"
#endif

namespace myriad::calibration::cuda_detail {

template <typename T>
Case attention_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                    std::int64_t head_dim) {
  const ops::AttentionShape s = grid_attention_shape(heads, seq, head_dim);
  models::Op op = ops::attention_op(s, sizeof(T));
  if (backward) op = models::attention_backward_of(op);
  Case c;
  c.row = kernel_row(fmt::format("attention.{} heads={} seq={} head_dim={} causal {}",
                                 backward ? "bwd" : "fwd", heads, seq, head_dim, dtype_name<T>()),
                     "attention", op, backward, grid_attention_arguments(s, dtype_name<T>()));
  c.prepare = [ctx, s, backward] {
    const std::size_t n = count(s.q_heads, s.seq, s.head_dim);
    auto q = random_values<T>(n, 13);
    auto k = random_values<T>(n, 14);
    auto v = random_values<T>(n, 15);
    auto d_o = random_values<T>(n, 16);
    auto o = poisoned_values<T>(n);
    auto lse = poisoned(count(s.q_heads, s.seq));
    auto dq = poisoned_values<T>(n);
    auto dk = poisoned_values<T>(n);
    auto dv = poisoned_values<T>(n);
    auto delta = poisoned(count(s.q_heads, s.seq));
    const auto forward = [=] {
      ops::attention_forward_cuda(s, q->get(), k->get(), v->get(), o->get(), lse->get(),
                                  ctx->stream);
    };
    forward();
    // The inputs' host copies, for the reference checks.
    const auto inputs = std::make_shared<std::vector<std::vector<float>>>(
        std::vector<std::vector<float>>{uniform_as_floats<T>(n, 13), uniform_as_floats<T>(n, 14),
                                        uniform_as_floats<T>(n, 15), uniform_as_floats<T>(n, 16)});
    if (!backward) {
      return device_instance(ctx, forward, [s, inputs, o, lse] {
        const reference::Tolerance storage(storage_tolerance<T>());
        const auto& in = *inputs;
        return reference::attention_forward(s, in[0], in[1], in[2], host_floats(o),
                                            host_floats(lse));
      });
    }
    const auto run = [=] {
      using Grads = std::conditional_t<std::is_same_v<T, float>, ops::AttentionCudaGrads,
                                       ops::AttentionCudaGradsBf16>;
      ops::attention_backward_cuda(s, q->get(), k->get(), v->get(), o->get(), lse->get(),
                                   d_o->get(), Grads{dq->get(), dk->get(), dv->get(), delta->get()},
                                   ctx->stream);
    };
    return device_instance(ctx, run, [s, inputs, dq, dk, dv] {
      const reference::Tolerance storage(storage_tolerance<T>());
      const auto& in = *inputs;
      return reference::attention_backward(s, in[0], in[1], in[2], in[3], host_floats(dq),
                                           host_floats(dk), host_floats(dv));
    });
  };
  return c;
}

namespace {

using Bf16AttentionForward = void (*)(const ops::AttentionShape&, const ops::Bf16*,
                                      const ops::Bf16*, const ops::Bf16*, ops::Bf16*, float*,
                                      cudaStream_t);
using Bf16AttentionBackward = void (*)(const ops::AttentionShape&, const ops::Bf16*,
                                       const ops::Bf16*, const ops::Bf16*, const ops::Bf16*,
                                       const float*, const ops::Bf16*,
                                       const ops::AttentionCudaGradsBf16&, cudaStream_t);

// A bf16 attention kernel beside the SIMT kernel's rows, causal, its own family
// ("attention.mma", "attention.cudnn") so that the fit tells them apart: the
// forward timed, or the backward from the same kernel's forward (o, lse).
Case bf16_attention_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                         std::int64_t head_dim, const std::string& family,
                         const std::string& kernel, Bf16AttentionForward forward_kernel,
                         Bf16AttentionBackward backward_kernel) {
  const ops::AttentionShape s = grid_attention_shape(heads, seq, head_dim);
  models::Op op = ops::attention_op(s, 2);
  if (backward) op = models::attention_backward_of(op);
  nlohmann::json arguments = grid_attention_arguments(s, "bf16");
  arguments["kernel"] = kernel;
  Case c;
  c.row = kernel_row(fmt::format("{}.{} heads={} seq={} head_dim={} causal bf16", family,
                                 backward ? "bwd" : "fwd", heads, seq, head_dim),
                     family, op, backward, std::move(arguments));
  c.prepare = [ctx, s, backward, forward_kernel, backward_kernel] {
    const std::size_t n = count(s.q_heads, s.seq, s.head_dim);
    auto q = random_values<ops::Bf16>(n, 13);
    auto k = random_values<ops::Bf16>(n, 14);
    auto v = random_values<ops::Bf16>(n, 15);
    auto d_o = random_values<ops::Bf16>(n, 16);
    auto o = poisoned_values<ops::Bf16>(n);
    auto lse = poisoned(count(s.q_heads, s.seq));
    const auto forward = [=] {
      forward_kernel(s, q->get(), k->get(), v->get(), o->get(), lse->get(), ctx->stream);
    };
    forward();
    const auto inputs =
        std::make_shared<std::vector<std::vector<float>>>(std::vector<std::vector<float>>{
            uniform_as_floats<ops::Bf16>(n, 13), uniform_as_floats<ops::Bf16>(n, 14),
            uniform_as_floats<ops::Bf16>(n, 15), uniform_as_floats<ops::Bf16>(n, 16)});
    if (!backward) {
      return device_instance(ctx, forward, [s, inputs, o, lse] {
        const reference::Tolerance storage(storage_tolerance<ops::Bf16>());
        const auto& in = *inputs;
        return reference::attention_forward(s, in[0], in[1], in[2], host_floats(o),
                                            host_floats(lse));
      });
    }
    auto dq = poisoned_values<ops::Bf16>(n);
    auto dk = poisoned_values<ops::Bf16>(n);
    auto dv = poisoned_values<ops::Bf16>(n);
    auto delta = poisoned(count(s.q_heads, s.seq));
    const auto run = [=] {
      backward_kernel(s, q->get(), k->get(), v->get(), o->get(), lse->get(), d_o->get(),
                      ops::AttentionCudaGradsBf16{dq->get(), dk->get(), dv->get(), delta->get()},
                      ctx->stream);
    };
    return device_instance(ctx, run, [s, inputs, dq, dk, dv] {
      const reference::Tolerance storage(storage_tolerance<ops::Bf16>());
      const auto& in = *inputs;
      return reference::attention_backward(s, in[0], in[1], in[2], in[3], host_floats(dq),
                                           host_floats(dk), host_floats(dv));
    });
  };
  return c;
}

}  // namespace

Case attention_mma_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                        std::int64_t head_dim) {
  return bf16_attention_case(
      ctx, backward, heads, seq, head_dim, "attention.mma",
      backward ? "mma.sync (attention_mma_backward.cu)" : "mma.sync (attention_mma.cu)",
      ops::attention_forward_mma_cuda, ops::attention_backward_mma_cuda);
}

template Case attention_case<float>(const Ctx&, bool, std::int64_t, std::int64_t, std::int64_t);
template Case attention_case<ops::Bf16>(const Ctx&, bool, std::int64_t, std::int64_t, std::int64_t);

#if defined(MYRIAD_HAVE_CUDNN)
std::string attention_cudnn_missing() { return ops::attention_cudnn_available(); }

Case attention_cudnn_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                          std::int64_t head_dim) {
  return bf16_attention_case(ctx, backward, heads, seq, head_dim, "attention.cudnn",
                             "cuDNN fused attention (attention_cudnn.cpp)",
                             ops::attention_forward_cudnn, ops::attention_backward_cudnn);
}
#else
std::string attention_cudnn_missing() { return "this build has no cuDNN headers"; }
Case attention_cudnn_case(const Ctx& /*ctx*/, bool /*backward*/, std::int64_t /*heads*/,
                          std::int64_t /*seq*/, std::int64_t /*head_dim*/) {
  throw std::logic_error("attention_cudnn_case: this build has no cuDNN headers");
}
#endif

}  // namespace myriad::calibration::cuda_detail

#endif
