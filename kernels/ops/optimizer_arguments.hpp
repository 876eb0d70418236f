// Hyperparameters of the fused optimizer steps (AdamW, Lion), shared by the CPU
// and CUDA backends (C++17, for nvcc).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace myriad::kernels::ops
