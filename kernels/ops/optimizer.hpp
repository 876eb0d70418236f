// Fused optimizer steps on fp32 master weights, on the CPU: AdamW and Lion,
// each with an optional cautious weight decay (CWD: decay a coordinate only
// where the update and the parameter have the same sign).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/ops/optimizer_arguments.hpp"
#include "models/ops/op.hpp"

namespace myriad::kernels::ops {

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
