#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/optimizer_cuda.hpp"
#include "kernels/ops/vector_map.cuh"

namespace myriad::kernels::ops {

namespace {

__device__ float decay(float wd, bool cautious, float u, float p) {
  if (cautious && !(u * p > 0.0F)) return 0.0F;
  return wd * p;
}

// in: param, grad, m, v; out: param, m, v, 16 bytes a load (vector_map.cuh).
// Bias corrections c1 = 1 - beta1^t, c2 = 1 - beta2^t, computed on the host.
struct AdamWStep {
  AdamWArguments a;
  float c1, c2;
  __device__ void operator()(std::int64_t, const float* in, float* out) const {
    const float p = in[0], g = in[1];
    const float mi = a.beta1 * in[2] + (1.0F - a.beta1) * g;
    const float vi = a.beta2 * in[3] + (1.0F - a.beta2) * g * g;
    const float u = (mi / c1) / (sqrtf(vi / c2) + a.eps);
    out[0] = p - a.lr * (u + decay(a.weight_decay, a.cautious_decay, u, p));
    out[1] = mi;
    out[2] = vi;
  }
};

__global__ void lion_kernel(LionArguments a, float* param, const float* grad, float* m,
                            std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float g = grad[i];
    const float c = a.beta1 * m[i] + (1.0F - a.beta1) * g;
    const float u = static_cast<float>((c > 0.0F) - (c < 0.0F));
    param[i] -= a.lr * (u + decay(a.weight_decay, a.cautious_decay, u, param[i]));
    m[i] = a.beta2 * m[i] + (1.0F - a.beta2) * g;
  }
}

}  // namespace

void adamw_step_cuda(const AdamWArguments& a, float* param, const float* grad, float* m, float* v,
                     std::int64_t n, cudaStream_t stream) {
  const std::string why = adamw_can_implement(a);
  if (!why.empty()) throw std::invalid_argument("adamw_cuda: " + why);
  const auto t = static_cast<double>(a.step);
  const auto c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(a.beta1), t));
  const auto c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(a.beta2), t));
  launch_map<float, 4, 3>({{param, grad, m, v}, {param, m, v}}, n, AdamWStep{a, c1, c2}, stream);
}

void lion_step_cuda(const LionArguments& a, float* param, const float* grad, float* m,
                    std::int64_t n, cudaStream_t stream) {
  const std::string why = lion_can_implement(a);
  if (!why.empty()) throw std::invalid_argument("lion_cuda: " + why);
  lion_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(a, param, grad, m, n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
