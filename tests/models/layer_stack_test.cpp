// Heterogeneous layer stacks: an MoE model whose first layers are dense
// (DeepSeek-V3) or whose MoE layers alternate with dense ones (Llama 4
// Maverick): which layers are which, their parameters and FLOPs, how the
// pipeline's stages and chunks hold them, and their memory.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/model_stats.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

// Mixtral 8x7B (32 layers, 8 experts of 14,336, ffn_hidden 14,336) with `moe`
// keys added and `parallelism`.
scenario::Scenario mixtral(const std::string& moe, const std::string& parallelism) {
  return scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096" +
          (moe.empty() ? std::string() : ", moe: {" + moe + "}") +
          "}\n"
          "parallelism: {tp: 2, ep: 2, global_batch: 64, " +
          parallelism + "}\n",
      "layer_stack_test.yaml", kShipped);
}

TEST(LayerStack, WhichLayersAreMoeFollowsThePublishedRules) {
  scenario::ModelSpec m;
  m.layers = 61;
  m.moe.experts = 256;
  m.moe.first_dense_layers = 3;  // DeepSeek-V3: first_k_dense_replace 3
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(3));
  EXPECT_TRUE(m.is_moe_layer(60));
  EXPECT_EQ(m.moe_layers(), 58);
  EXPECT_TRUE(m.mixed());
  // Llama 4 Maverick: (i + 1) % interleave_moe_layer_step == 0, step 2.
  m.layers = 48;
  m.moe.first_dense_layers = 0;
  m.moe.every = 2;
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_TRUE(m.is_moe_layer(47));
  EXPECT_EQ(m.moe_layers(), 24);
  // Every range's count is the layers' own, one by one.
  for (const int first : {0, 1, 3}) {
    for (const int every : {1, 2, 3}) {
      m.moe.first_dense_layers = first;
      m.moe.every = every;
      for (int from = 0; from <= 20; ++from) {
        for (int to = from; to <= 20; ++to) {
          int n = 0;
          for (int i = from; i < to; ++i) n += m.is_moe_layer(i);
          EXPECT_EQ(m.moe_layers_in(from, to), n) << first << " " << every << " " << from;
        }
      }
    }
  }
  m.moe.experts = 0;  // a dense model has no MoE layer
  EXPECT_EQ(m.moe_layers(), 0);
  EXPECT_FALSE(m.mixed());
}

// Parameters and model FLOPs: the dense layers count their own MLP.
TEST(LayerStack, ParametersAndFlopsCountEachKindOfLayer) {
  const auto all = mixtral("", "pp: 1");
  const auto some = mixtral("first_dense_layers: 4, every: 2", "pp: 1");
  const ParamCounts a = param_counts(all.model);
  const ParamCounts b = param_counts(some.model);
  // 4 dense, then every other one of the 28 left: 14 MoE layers, 18 dense.
  ASSERT_EQ(some.model.moe_layers(), 14);
  const double h = 4096;
  const double dense_mlp = 3 * h * 14336;
  EXPECT_DOUBLE_EQ(b.dense_mlp, dense_mlp);
  EXPECT_NEAR(b.total, a.total - 18 * (a.mlp - dense_mlp), 1e-6 * a.total);
  EXPECT_NEAR(b.active, a.active - 18 * (a.mlp_active - dense_mlp), 1e-6 * a.active);
  // Forward and backward, 6 FLOPs a weight a token: the model FLOPs move by the
  // dense layers' active weights alone (attention is the same).
  const double tokens = 64.0 * 4096;
  EXPECT_NEAR(model_flops_per_step(all) - model_flops_per_step(some),
              6 * 18 * (a.mlp_active - dense_mlp) * tokens, 1e-9 * model_flops_per_step(all));
}

// The plan's chunks hold the layers in Megatron-LM's interleaved order, and
// count the dense ones among them.
TEST(LayerStack, ChunksCountTheirDenseLayersInTheModelsOrder) {
  const auto s = mixtral("first_dense_layers: 3, every: 2", "pp: 4, virtual_stages: 2");
  const StepPlan plan = plan_step(s);
  int dense = 0;
  for (int stage = 0; stage < 4; ++stage) {
    int stage_dense = 0;
    for (int chunk = 0; chunk < 2; ++chunk) {
      const int first = chunk_first_layer(s, stage, chunk);
      EXPECT_EQ(first, (chunk * 4 + stage) * 4);  // 4 layers a chunk
      int n = 0;
      for (int i = first; i < first + 4; ++i) n += !s.model.is_moe_layer(i);
      EXPECT_EQ(plan.dense_by_chunk[stage][chunk], n) << stage << " " << chunk;
      stage_dense += n;
    }
    EXPECT_EQ(plan.dense_by_stage[stage], stage_dense);
    dense += stage_dense;
  }
  EXPECT_EQ(dense, 32 - s.model.moe_layers());
  // Stage 0's first chunk: layers 0-3, of which 0, 1, 2 and 4 - 1 = 3? Layer 3 is
  // past the first three and (3 - 3 + 1) % 2 != 0: dense too.
  EXPECT_EQ(plan.dense_by_chunk[0][0], 4);
  EXPECT_TRUE(plan.mixed());
  EXPECT_FALSE(plan.dense_layer.forward.ops.empty());
  // No dense layer: nothing counted, no dense program.
  const StepPlan plain = plan_step(mixtral("", "pp: 4, virtual_stages: 2"));
  EXPECT_FALSE(plain.mixed());
  EXPECT_TRUE(plain.dense_layer.forward.ops.empty());
}

// A stage of dense layers holds no experts: fewer parameters, and its
// activations are a dense layer's.
TEST(LayerStack, StagesHoldTheirOwnLayersParametersAndActivations) {
  // 8 layers a stage: stage 0 all dense, the others all MoE.
  const auto s = mixtral("first_dense_layers: 8", "pp: 4, zero: 1");
  const auto all = mixtral("", "pp: 4, zero: 1");
  const StepPlan plan = plan_step(s);
  const StepPlan moe = plan_step(all);
  EXPECT_EQ(plan.dense_by_stage[0], 8);
  EXPECT_EQ(plan.dense_by_stage[1], 0);
  EXPECT_LT(plan.params_per_dense_layer, plan.params_per_layer);
  EXPECT_DOUBLE_EQ(plan.params_first_stage - moe.params_first_stage,
                   8 * (plan.params_per_dense_layer - plan.params_per_layer));
  EXPECT_DOUBLE_EQ(plan.params_middle_stage, moe.params_middle_stage);
  const MemoryBreakdown first = stage_memory(s, plan, 0);
  const MemoryBreakdown first_moe = stage_memory(all, moe, 0);
  EXPECT_LT(first.weights, first_moe.weights);
  EXPECT_NEAR(first.activations / first_moe.activations,
              layer_activation_bytes(s, LayerKind::dense) / layer_activation_bytes(all), 0.05);
  // Stage 1 is the same in both.
  EXPECT_DOUBLE_EQ(stage_memory(s, plan, 1).total(), stage_memory(all, moe, 1).total());
}

TEST(LayerStack, KeysThatCannotHoldAreErrorsNamingTheKey) {
  const auto fails = [](const std::string& moe, const std::string& key) {
    try {
      (void)mixtral(moe, "pp: 1");
      ADD_FAILURE() << moe << " loaded";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  fails("first_dense_layers: 32", "model.moe.first_dense_layers");
  fails("every: 40", "model.moe.every");
  fails("every: 0", "every");
  try {
    (void)scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 8}\n"
        "model: {preset: llama3-8b, moe: {first_dense_layers: 2}}\n"
        "parallelism: {tp: 8, global_batch: 8}\n",
        "dense.yaml", kShipped);
    ADD_FAILURE() << "first_dense_layers on a dense model loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no experts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::models
