// What the training job does beyond its shape: how long, with what optimizer,
// in what precision.
#pragma once

#include <string>

#include "models/scenario/model_spec.hpp"

namespace myriad::models::scenario {

enum class Optimizer { adam, adamw, lamb, lion, sgd };
enum class Precision { bf16, fp16, fp8 };
// How fp8 tensors are scaled (Transformer Engine's recipes): from the amax history
// of earlier steps, from each tensor's own amax (a second read), or per block of
// 1 x 128 (activations) and 128 x 128 (weights) values as DeepSeek-V3 trained.
enum class Fp8Recipe { delayed, current, blockwise };
// What a collective carries on the wire (communication compression).
enum class WirePrecision { fp32, bf16, fp8 };

// Growing the model from a smaller one trained first (multi-linear operator growth,
// Mango, and its kin): the grown model reaches the same loss with `saved_fraction`
// less of its own training compute, after `tokens` of the small model's training.
struct GrowthSpec {
  std::string from;           // the small model: a model preset's name; empty without growth
  double tokens = 0;          // the small model's training
  double saved_fraction = 0;  // of the large model's training compute, to the same loss
  std::string source;         // where saved_fraction comes from (a paper, a run of one's own)
  ModelSpec model;            // `from`, resolved and derived by the loader
  [[nodiscard]] bool given() const { return !from.empty(); }
};

struct TrainingSpec {
  double tokens = 0;  // tokens to train on
  Optimizer optimizer = Optimizer::adamw;
  Precision precision = Precision::bf16;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
  bool fused_kernels = true;  // FlashAttention and fused norm/activation kernels
  // Expert all-to-alls: bf16, or fp8 (quantized before, dequantized after).
  WirePrecision all_to_all_precision = WirePrecision::bf16;
  // The combine's, where it differs (DeepSeek-V3 s3.3.3: dispatch in fp8, combine
  // in bf16); derived: all_to_all_precision.
  WirePrecision combine_precision = WirePrecision::bf16;
  // Data-parallel gradient reduction: fp32 for bf16 models (Megatron-LM), else
  // 16 bits; bf16 halves the traffic of a bf16 model (MegaScale-MoE).
  WirePrecision gradient_precision = WirePrecision::fp32;
  // What the optimizer's moments are kept in: fp32, or bf16 (DeepSeek-V3 s3.3.2;
  // Megatron-LM's precision-aware optimizer, exp_avg_dtype and exp_avg_sq_dtype).
  WirePrecision optimizer_moments = WirePrecision::fp32;
  GrowthSpec growth;
};

}  // namespace myriad::models::scenario
