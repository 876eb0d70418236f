#include "kernels/ops/optimizer.hpp"

#include <cmath>
#include <initializer_list>
#include <stdexcept>

namespace myriad::kernels::ops {

namespace {

void require_sizes(std::size_t n, std::initializer_list<std::size_t> others) {
  for (const std::size_t m : others) {
    if (m != n) throw std::invalid_argument("optimizer: param, grad and states differ in size");
  }
}

// Decoupled weight decay term for one coordinate; cautious: only where the update
// u and the parameter p agree in sign.
float decay(float wd, bool cautious, float u, float p) {
  if (cautious && !(u * p > 0.0F)) return 0.0F;
  return wd * p;
}

bool betas_ok(float b1, float b2) { return b1 >= 0.0F && b1 < 1.0F && b2 >= 0.0F && b2 < 1.0F; }

models::Op optimizer_op(std::int64_t n, double tensors_read, double tensors_written) {
  const auto e = static_cast<double>(n);
  models::Op op;
  op.name = "optimizer";
  op.cls = models::OpClass::optimizer;
  op.bytes = 4.0 * e * (tensors_read + tensors_written);
  op.flops = 12.0 * e;
  return op;
}

}  // namespace

std::string adamw_can_implement(const AdamWArguments& a) {
  if (!betas_ok(a.beta1, a.beta2)) return "beta1 and beta2 must lie in [0, 1)";
  if (!(a.eps > 0.0F)) return "eps must be positive";
  if (a.step < 1) return "step is 1-based";
  if (a.weight_decay < 0.0F) return "weight_decay must be non-negative";
  return {};
}

std::string lion_can_implement(const LionArguments& a) {
  if (!betas_ok(a.beta1, a.beta2)) return "beta1 and beta2 must lie in [0, 1)";
  if (a.weight_decay < 0.0F) return "weight_decay must be non-negative";
  return {};
}

void adamw_step_cpu(const AdamWArguments& a, std::span<float> param, std::span<const float> grad,
                    std::span<float> m, std::span<float> v) {
  const std::string why = adamw_can_implement(a);
  if (!why.empty()) throw std::invalid_argument("adamw: " + why);
  require_sizes(param.size(), {grad.size(), m.size(), v.size()});
  const auto t = static_cast<double>(a.step);
  const auto c1 = static_cast<float>(1.0 - std::pow(static_cast<double>(a.beta1), t));
  const auto c2 = static_cast<float>(1.0 - std::pow(static_cast<double>(a.beta2), t));
  for (std::size_t i = 0; i < param.size(); ++i) {
    const float g = grad[i];
    m[i] = a.beta1 * m[i] + (1.0F - a.beta1) * g;
    v[i] = a.beta2 * v[i] + (1.0F - a.beta2) * g * g;
    const float u = (m[i] / c1) / (std::sqrt(v[i] / c2) + a.eps);
    param[i] -= a.lr * (u + decay(a.weight_decay, a.cautious_decay, u, param[i]));
  }
}

void lion_step_cpu(const LionArguments& a, std::span<float> param, std::span<const float> grad,
                   std::span<float> m) {
  const std::string why = lion_can_implement(a);
  if (!why.empty()) throw std::invalid_argument("lion: " + why);
  require_sizes(param.size(), {grad.size(), m.size()});
  for (std::size_t i = 0; i < param.size(); ++i) {
    const float g = grad[i];
    const float c = a.beta1 * m[i] + (1.0F - a.beta1) * g;
    const float u = static_cast<float>((c > 0.0F) - (c < 0.0F));
    param[i] -= a.lr * (u + decay(a.weight_decay, a.cautious_decay, u, param[i]));
    m[i] = a.beta2 * m[i] + (1.0F - a.beta2) * g;
  }
}

models::Op adamw_op(std::int64_t n) { return optimizer_op(n, 4.0, 3.0); }

models::Op lion_op(std::int64_t n) { return optimizer_op(n, 3.0, 2.0); }

}  // namespace myriad::kernels::ops
