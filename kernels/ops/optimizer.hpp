// Fused optimizer steps on fp32 master weights, on the CPU: AdamW and Lion,
// each with an optional cautious weight decay (CWD: decay a coordinate only
// where the update and the parameter have the same sign).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

struct AdamWArguments {
  float lr = 1e-3F;
  float beta1 = 0.9F;
  float beta2 = 0.999F;
  float eps = 1e-8F;
  float weight_decay = 0.0F;
  std::int64_t step = 1;  // 1-based, for bias correction
  bool cautious_decay = false;
};

struct LionArguments {
  float lr = 1e-4F;
  float beta1 = 0.9F;
  float beta2 = 0.99F;
  float weight_decay = 0.0F;
  bool cautious_decay = false;
};

std::string adamw_can_implement(const AdamWArguments& a);
std::string lion_can_implement(const LionArguments& a);

// param, grad, m, v: [n]; param, m and v updated in place.
void adamw_step_cpu(const AdamWArguments& a, std::span<float> param, std::span<const float> grad,
                    std::span<float> m, std::span<float> v);
// param, grad, m: [n]; param and m updated in place.
void lion_step_cpu(const LionArguments& a, std::span<float> param, std::span<const float> grad,
                   std::span<float> m);

// Bytes: every state read and written once, the gradient read once (fp32).
models::Op adamw_op(std::int64_t n);
models::Op lion_op(std::int64_t n);

}  // namespace myriad::kernels::ops
