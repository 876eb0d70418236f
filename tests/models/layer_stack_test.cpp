// The layers of the models people train now. Heterogeneous stacks: an MoE
// model whose first layers are dense (DeepSeek-V3) or whose MoE layers
// alternate with dense ones (Llama 4 Maverick): which layers are which, their
// parameters and FLOPs, how the pipeline's stages and chunks hold them, and their
// memory. Multi-head latent attention: its projections, FLOPs and checks. The
// presets' parameters against the published totals.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

// `load(given)` throws an error naming `key`.
template <class Load>
void expect_refused(Load load, const std::string& given, const std::string& key) {
  try {
    (void)load(given);
    ADD_FAILURE() << given << " loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(LayerStack, KeysThatCannotHoldAreErrorsNamingTheKey) {
  const auto fails = [](const std::string& moe, const std::string& key) {
    expect_refused([](const std::string& m) { return mixtral(m, "pp: 1"); }, moe, key);
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

const Op* find_op(const Phase& p, std::string_view name) {
  for (const Op& op : p.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

scenario::Scenario deepseek(const std::string& extra) {
  return scenario::load_scenario_text(
      "cluster: {preset: deepseek-like, gpus: 64}\n"
      "model: {preset: deepseek-v3" +
          extra +
          "}\n"
          "parallelism: {tp: 8, sp: true, ep: 8, etp: 1, pp: 2, stage_layers: [30, 31], "
          "global_batch: 8}\n",
      "mla.yaml", kShipped);
}

// DeepSeek-V3's attention on 8 tp ranks: the down-projections whole on each,
// the up-projections and the output split by heads (16 a rank), the core at the
// query-key width (192) and the value width (128).
TEST(Mla, ProjectionsAndCoreAtTheLatentShapes) {
  const auto s = deepseek("");
  ASSERT_TRUE(s.model.is_mla());
  EXPECT_EQ(s.model.head_dim, 192);
  EXPECT_EQ(s.model.kv_heads, 128);
  const StepPlan plan = plan_step(s);
  const Phase& f = plan.layer.forward;
  const double tokens = 4096;
  const auto shape = [&](std::string_view name, double n, double k) {
    const Op* op = find_op(f, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_DOUBLE_EQ(op->gemm.m, tokens) << name;
    EXPECT_DOUBLE_EQ(op->gemm.n, n) << name;
    EXPECT_DOUBLE_EQ(op->gemm.k, k) << name;
  };
  shape("q.down", 1536, 7168);
  shape("q.up", 16 * 192, 1536);
  shape("kv.down", 512 + 64, 7168);
  shape("kv.up", 16 * (128 + 128), 512);
  shape("proj", 7168, 16 * 128);
  EXPECT_EQ(find_op(f, "qkv"), nullptr);
  const Op* core = find_op(f, "attention");
  ASSERT_NE(core, nullptr);
  EXPECT_DOUBLE_EQ(core->flops, 2 * attended_pairs(4096, 0) * (192 + 128) * 16);
  // A rank holds the down-projections whole and 1/8 of the rest.
  const ParamCounts c = param_counts(s.model);
  EXPECT_DOUBLE_EQ(c.attention_unsplit, 7168.0 * (1536 + 512 + 64) + 1536 + 512);
  // Model FLOPs: the core at 4 x keys x heads (qk + v) / 2 a token and layer.
  EXPECT_DOUBLE_EQ(s.model.attention_core_width(), 128.0 * (192 + 128) / 2);
  // Without a query latent the queries come from the hidden state.
  const StepPlan direct = plan_step(deepseek(", mla: {q_lora_rank: 0}"));
  EXPECT_EQ(find_op(direct.layer.forward, "q.down"), nullptr);
  ASSERT_NE(find_op(direct.layer.forward, "q"), nullptr);
  EXPECT_DOUBLE_EQ(find_op(direct.layer.forward, "q")->gemm.k, 7168);
}

// DeepSeek-V3's recomputation: the norms and up-projections run again in
// backward, and their outputs are not kept: per token and layer, the queries,
// keys and values (2 B x 128 heads x (2 x 192 + 128)) and the norms' outputs
// (4h), all on one rank here (tp 1).
TEST(Mla, RecomputingNormsAndUpProjectionsTradesMemoryForTime) {
  const auto load = [](bool recompute) {
    return scenario::load_scenario_text(
        std::string("cluster: {preset: deepseek-like, gpus: 16}\n"
                    "model: {preset: deepseek-v3}\n"
                    "parallelism: {pp: 2, stage_layers: [30, 31], ep: 8, global_batch: 8, "
                    "recompute_norms_and_up: ") +
            (recompute ? "true" : "false") + "}\n",
        "mla.yaml", kShipped);
  };
  const auto kept = load(false);
  const auto again = load(true);
  const double saved = layer_activation_bytes(kept) - layer_activation_bytes(again);
  EXPECT_DOUBLE_EQ(saved, 4096 * (2 * 128 * (2 * 192 + 128) + 4 * 7168.0));
  const StepPlan plan = plan_step(again);
  for (const char* name : {"norm.attention", "norm.mlp", "q.norm", "kv.norm", "q.up", "kv.up"}) {
    EXPECT_NE(find_op(plan.layer.recompute, name), nullptr) << name;
  }
  EXPECT_EQ(find_op(plan.layer.recompute, "q.down"), nullptr);
  EXPECT_TRUE(plan_step(kept).layer.recompute.ops.empty());
  // HFU counts the up-projections' second run.
  EXPECT_GT(hardware_flops_per_step(again), hardware_flops_per_step(kept));
  EXPECT_DOUBLE_EQ(model_flops_per_step(again), model_flops_per_step(kept));
  // Not with recompute, which covers more or other parts.
  try {
    (void)scenario::load_scenario_text(
        "cluster: {preset: deepseek-like, gpus: 16}\nmodel: {preset: deepseek-v3}\n"
        "parallelism: {pp: 2, stage_layers: [30, 31], ep: 8, global_batch: 8, recompute: "
        "selective, recompute_norms_and_up: true}\n",
        "mla.yaml", kShipped);
    ADD_FAILURE() << "recompute_norms_and_up with recompute loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.recompute_norms_and_up"), std::string::npos)
        << e.what();
  }
}

// Without MLA it is Megatron-LM's recompute module layernorm: the norms run
// again, and their outputs (the QKV and fc1 inputs, 4h a token) are not kept.
TEST(RecomputedNorms, KeepOnlyTheNormsInputs) {
  const auto load = [](bool recompute) {
    return scenario::load_scenario_text(
        std::string("cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
                    "parallelism: {tp: 8, global_batch: 8, recompute_norms_and_up: ") +
            (recompute ? "true" : "false") + "}\n",
        "gqa.yaml", kShipped);
  };
  const auto kept = load(false);
  const auto again = load(true);
  // tp 8 without sp: the norms' outputs are whole on every rank, 2 B x 2 norms x h.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(kept) - layer_activation_bytes(again), 8192 * 4 * 4096.0);
  const StepPlan plan = plan_step(again);
  EXPECT_NE(find_op(plan.layer.recompute, "norm.attention"), nullptr);
  EXPECT_NE(find_op(plan.layer.recompute, "norm.mlp"), nullptr);
  EXPECT_EQ(plan.layer.recompute.ops.size(), 2U);
  EXPECT_DOUBLE_EQ(hardware_flops_per_step(again), hardware_flops_per_step(kept));
}

TEST(Mla, KeysThatCannotHoldAreErrorsNamingTheKey) {
  const auto fails = [](const std::string& extra, const std::string& key) {
    expect_refused([](const std::string& e) { return deepseek(e); }, extra, key);
  };
  fails(", kv_heads: 8", "model.kv_heads");
  fails(", head_dim: 128", "model.head_dim");
  fails(", mla: {v_head_dim: 0}", "model.mla.v_head_dim");
  fails(", mla: {kv_lora_rank: 0}", "model.mla.kv_lora_rank");
}

// The presets of the models people train now: their parameters add up to the
// published totals and active counts (DeepSeek-V3 report s1: 671B, 37B a token;
// Kimi K2 README: 1.04T, 32B; Qwen3 report Table 2: 235B, 22B; Llama 4 model
// card: 400B, 17B), within 1.5 % (Kimi K2's active count 3 %: it is published as
// "32B", and the count here, 32.9B, holds both 1.2B vocabulary tables).
TEST(LayerStack, PresetsAddUpToTheirPublishedParameters) {
  struct Published {
    const char* preset;
    double total;
    double active;
    double tolerance = 0.015;
  };
  for (const Published& p :
       {Published{"deepseek-v3", 671e9, 37e9}, Published{"kimi-k2", 1.04e12, 32e9, 0.03},
        Published{"qwen3-235b-a22b", 235e9, 22e9}, Published{"llama4-maverick", 400e9, 17e9}}) {
    const auto s = scenario::load_scenario_text(
        std::string("cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: ") + p.preset +
            "}\nparallelism: {tp: 8, global_batch: 8}\n",
        "preset.yaml", kShipped);
    const ParamCounts c = param_counts(s.model);
    EXPECT_NEAR(c.total / p.total, 1, 0.015) << p.preset << " " << c.total;
    EXPECT_NEAR(c.active / p.active, 1, p.tolerance) << p.preset << " " << c.active;
  }
}

}  // namespace
}  // namespace myriad::models
