// What the training job does beyond its shape: how long, with what optimizer,
// in what precision.
#pragma once

namespace myriad::scenario {

enum class Optimizer { adam, adamw, lamb, lion, sgd };
enum class Precision { bf16, fp16, fp8 };

struct TrainingSpec {
  double tokens = 0;  // tokens to train on
  Optimizer optimizer = Optimizer::adamw;
  Precision precision = Precision::bf16;
  bool fused_kernels = true;  // FlashAttention and fused norm/activation kernels
};

}  // namespace myriad::scenario
