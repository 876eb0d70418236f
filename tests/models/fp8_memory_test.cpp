// What fp8 training keeps for backward, at which precision: the GEMMs' inputs
// for their weight gradients in fp8 (Transformer Engine's Linear saves the
// quantized input; DeepSeek-V3 s3.3.3), everything else as before. By hand, per
// token and layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/layer_program.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

scenario::Scenario load(const std::string& model, const std::string& parallelism,
                        const std::string& training) {
  return scenario::load_scenario_text("cluster: {preset: llama3-like, gpus: 64}\nmodel: {" + model +
                                          "}\nparallelism: {" + parallelism + "}\ntraining: {" +
                                          training + "}\n",
                                      "fp8_memory_test.yaml", kShipped);
}

// Llama 3 8B on one rank: the QKV and fc1 inputs (2h each) and fc2's input (2f)
// halve; the output projection keeps an fp8 copy (q) of FlashAttention's bf16
// output.
TEST(Fp8Memory, GemmInputsAreKeptInFp8) {
  const std::string layout = "tp: 1, pp: 1, global_batch: 64";
  const auto bf16 = load("preset: llama3-8b", layout, "precision: bf16");
  const auto fp8 = load("preset: llama3-8b", layout, "precision: fp8");
  const double h = bf16.model.hidden;
  const double q = bf16.model.query_width();
  const double f = bf16.model.ffn_hidden;
  const double tokens = bf16.model.seq_length;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(bf16) - layer_activation_bytes(fp8),
                   tokens * (2 * h - q + f));
  // Full recomputation keeps the layer's input only, in bf16 either way.
  auto full = fp8;
  full.parallelism.recompute = scenario::Recompute::full;
  auto full16 = bf16;
  full16.parallelism.recompute = scenario::Recompute::full;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(full), layer_activation_bytes(full16));
}

// Mixtral on 2 expert ranks: each routed copy's expert input (h) and fc2 input (f
// of the expert) halve too; under tp 2 with sp the replicated part is split.
TEST(Fp8Memory, ExpertInputsToo) {
  const std::string layout = "tp: 2, sp: true, ep: 2, global_batch: 64";
  const auto bf16 = load("preset: mixtral-8x7b, seq_length: 4096", layout, "precision: bf16");
  const auto fp8 = load("preset: mixtral-8x7b, seq_length: 4096", layout, "precision: fp8");
  const double h = bf16.model.hidden;
  const double q = bf16.model.query_width();
  const double fe = bf16.model.moe.expert_ffn_hidden;
  const double copies = bf16.model.moe.top_k;  // even routing: the busiest rank holds top_k
  const double tokens = 4096;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(bf16) - layer_activation_bytes(fp8),
                   tokens * (2 * h / 2 + (-q + copies * (fe + h)) / 2));
}

// Recomputing the experts' activation (parallelism.recompute_moe_act) keeps its
// input only: each routed copy drops the fc2 input (f of the expert, 2 bytes in
// bf16, 1 in fp8); where the fp8 recipe quantizes tile by tile, the input it
// keeps (2f, the gate and up projections) is fp8 with a 4-byte scale per 128
// values instead of bf16 (DeepSeek-V3 s3.3.3). The recomputation is the forward's
// activation op, in the backward's recompute phase.
TEST(Fp8Memory, RecomputingTheExpertActivationKeepsItsInputOnly) {
  const std::string layout = "tp: 2, sp: true, ep: 2, global_batch: 64";
  const std::string act = layout + ", recompute_moe_act: true";
  const std::string model = "preset: mixtral-8x7b, seq_length: 4096";
  const double fe = 14336;
  const double copies = 2;  // top-2, even routing
  const double tokens = 4096;
  const double tp = 2;
  for (const char* precision : {"precision: bf16", "precision: fp8"}) {
    const double fc2_input = std::string(precision) == "precision: bf16" ? 2 : 1;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(load(model, layout, precision)) -
                         layer_activation_bytes(load(model, act, precision)),
                     tokens * copies * fc2_input * fe / tp)
        << precision;
  }
  const std::string blockwise = "precision: fp8, fp8_recipe: blockwise";
  EXPECT_DOUBLE_EQ(layer_activation_bytes(load(model, layout, blockwise)) -
                       layer_activation_bytes(load(model, act, blockwise)),
                   tokens * copies * (fe + (2 - 1 - 4.0 / 128) * 2 * fe) / tp);
  // A dense layer of an MoE model keeps what it kept.
  const auto dense = load(model, act, "precision: bf16");
  EXPECT_DOUBLE_EQ(
      layer_activation_bytes(dense, LayerKind::dense),
      layer_activation_bytes(load(model, layout, "precision: bf16"), LayerKind::dense));
  const LayerProgram lp = transformer_layer(dense.model, shard_shape(dense));
  ASSERT_EQ(lp.recompute.ops.size(), 1U);
  EXPECT_EQ(lp.recompute.ops.front().name, "expert.activation");
  const auto same = std::find_if(lp.forward.ops.begin(), lp.forward.ops.end(),
                                 [](const Op& op) { return op.name == "expert.activation"; });
  ASSERT_NE(same, lp.forward.ops.end());
  EXPECT_DOUBLE_EQ(same->bytes, lp.recompute.ops.front().bytes);
}

// DeepSeek-V3's recipe (blockwise) keeps the attention's output once, in E5M6
// (1.5 B), for the attention's backward and the output projection's, where the
// per-tensor recipes keep FlashAttention's bf16 output and an fp8 copy (3 B).
TEST(Fp8Memory, TheBlockwiseRecipeKeepsTheAttentionOutputInE5m6) {
  const std::string layout = "tp: 1, pp: 1, global_batch: 64";
  const auto delayed = load("preset: llama3-8b", layout, "precision: fp8");
  const auto blockwise = load("preset: llama3-8b", layout, "precision: fp8, fp8_recipe: blockwise");
  const double out = delayed.model.heads * delayed.model.value_width();
  EXPECT_DOUBLE_EQ(layer_activation_bytes(delayed) - layer_activation_bytes(blockwise),
                   delayed.model.seq_length * 1.5 * out);
}

// AdamW's moments in bf16 (training.optimizer_moments) keep 8 B a parameter with
// the fp32 master weights, where fp32 moments keep 12; one-moment optimizers 6
// and 8.
TEST(Fp8Memory, OptimizerMomentsInBf16) {
  scenario::TrainingSpec t;
  EXPECT_EQ(optimizer_bytes_per_param(t), 12);
  t.optimizer_moments = scenario::WirePrecision::bf16;
  EXPECT_EQ(optimizer_bytes_per_param(t), 8);
  t.optimizer = scenario::Optimizer::lion;
  EXPECT_EQ(optimizer_bytes_per_param(t), 6);
  const std::string layout = "tp: 8, pp: 1, zero: 1, global_batch: 64";
  const auto fp32 = load("preset: llama3-8b", layout, "precision: bf16");
  const auto bf16 = load("preset: llama3-8b", layout, "precision: bf16, optimizer_moments: bf16");
  const StepPlan plan = plan_step(fp32);
  EXPECT_DOUBLE_EQ(stage_memory(bf16, plan_step(bf16), 0).optimizer,
                   stage_memory(fp32, plan, 0).optimizer * 8 / 12);
  EXPECT_DOUBLE_EQ(stage_memory(bf16, plan_step(bf16), 0).weights,
                   stage_memory(fp32, plan, 0).weights);
}

}  // namespace
}  // namespace myriad::models
