// Multi-token prediction (DeepSeek-V3 s2.2, arXiv:2412.19437): D modules after
// the model, each with two norms, a projection from 2 hidden to hidden, one
// transformer block and the shared embedding and LM head again, on the last
// pipeline stage. Their parameters against the published count, where their
// blocks sit in the pipeline, their FLOPs, the head's program and the last
// stage's memory, each worked out by hand.
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

scenario::Scenario load(const std::string& model, const std::string& parallelism, int gpus = 64) {
  return scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: " + std::to_string(gpus) + "}\nmodel: {" + model +
          "}\nparallelism: {" + parallelism + "}\n",
      "mtp_test.yaml", kShipped);
}

int count_ops(const Phase& p, std::string_view name) {
  int n = 0;
  for (const Op& op : p.ops) n += op.name == name ? 1 : 0;
  return n;
}

const Collective* find_comm(const Phase& p, std::string_view name) {
  for (const Collective& c : p.comms) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// DeepSeek-V3's Hugging Face card: "685B, which includes 671B of the Main Model
// weights and 14B of the Multi-Token Prediction (MTP) Module weights"; that
// checkpoint stores the module with its own copies of the embedding and the LM
// head (model.layers.61.embed_tokens, shared_head.head), which training shares.
TEST(Mtp, TheModuleAddsItsPublishedParameters) {
  const auto s = load("preset: deepseek-v3", "tp: 8, ep: 8, global_batch: 8");
  ASSERT_EQ(s.model.mtp_depth, 1);
  const ParamCounts c = param_counts(s.model);
  const double copies = 2.0 * s.model.vocab * s.model.hidden;
  EXPECT_NEAR((c.mtp + copies) / 14e9, 1, 0.05) << c.mtp;
  // The model's own count does not move.
  auto without = s.model;
  without.mtp_depth = 0;
  EXPECT_DOUBLE_EQ(param_counts(without).total, c.total);
  EXPECT_EQ(param_counts(without).mtp, 0);
  // A dense model's module, by hand: a layer, the projection and three norms.
  const auto dense = load("preset: llama3-8b, mtp_depth: 2", "tp: 8, global_batch: 8", 8);
  const ParamCounts d = param_counts(dense.model);
  const double h = dense.model.hidden;
  EXPECT_DOUBLE_EQ(d.mtp, 2 * (d.attention + d.norms + d.mlp + 2 * h * h + 3 * h));
}

// The blocks follow the model's last layer in its last chunk, of the kind the
// stack's rule gives layer `layers + j`.
TEST(Mtp, BlocksRunInTheLastChunkOfTheLastStage) {
  // Mixtral (32 layers), every other layer MoE: layer 32 would be dense.
  const auto s = load("preset: mixtral-8x7b, seq_length: 4096, mtp_depth: 1, moe: {every: 2}",
                      "tp: 2, ep: 2, pp: 4, virtual_stages: 2, global_batch: 64");
  const StepPlan plan = plan_step(s);
  EXPECT_EQ(plan.layers_by_chunk[3][1], 5);
  EXPECT_EQ(plan.layers_by_chunk[3][0], 4);
  EXPECT_EQ(plan.layers_by_stage[3], 9);
  EXPECT_EQ(plan.layers_by_stage[0], 8);
  // Chunk (3, 1) holds layers 28-31 (28, 30 dense) and the block (dense).
  EXPECT_EQ(plan.dense_by_chunk[3][1], 3);
  EXPECT_EQ(plan.last_stage_layers, 9);
  // Every layer MoE: the block is an MoE block.
  const auto moe = load("preset: mixtral-8x7b, seq_length: 4096, mtp_depth: 2",
                        "tp: 2, ep: 2, pp: 4, global_batch: 64");
  const StepPlan all = plan_step(moe);
  EXPECT_EQ(all.layers_by_stage[3], 10);
  EXPECT_FALSE(all.mixed());
  // A dense model's blocks are its layers.
  const auto dense = load("preset: llama3-8b, mtp_depth: 1", "tp: 2, pp: 4, global_batch: 64");
  EXPECT_EQ(plan_step(dense).layers_by_stage[3], 9);
}

// The last stage holds the blocks, each module's projection (split over tp)
// and three norms, and, with pipelining and an untied embedding, a copy of the
// embedding for the shifted tokens.
TEST(Mtp, TheLastStageHoldsTheModulesParameters) {
  const auto with = load("preset: llama3-8b, mtp_depth: 1", "tp: 2, pp: 4, global_batch: 64");
  const auto without = load("preset: llama3-8b", "tp: 2, pp: 4, global_batch: 64");
  const StepPlan a = plan_step(with);
  const StepPlan b = plan_step(without);
  const double h = with.model.hidden;
  const double vocab_rows = with.model.vocab * h / 2;
  EXPECT_DOUBLE_EQ(a.params_last_stage - b.params_last_stage,
                   a.params_per_layer + 2 * h * h / 2 + 3 * h + vocab_rows);
  EXPECT_DOUBLE_EQ(a.params_first_stage, b.params_first_stage);
  EXPECT_DOUBLE_EQ(a.head_params - b.head_params, 2 * h * h / 2 + 3 * h + vocab_rows);
  // Tied embeddings: the head's table is the embedding; no copy.
  const auto tied = load("preset: llama3-8b, tied_embeddings: true, mtp_depth: 1",
                         "tp: 2, pp: 4, global_batch: 64");
  const auto tied0 =
      load("preset: llama3-8b, tied_embeddings: true", "tp: 2, pp: 4, global_batch: 64");
  EXPECT_DOUBLE_EQ(plan_step(tied).head_params - plan_step(tied0).head_params,
                   2 * h * h / 2 + 3 * h);
}

// Model FLOPs per step grow by three times (forward and backward) each module's
// forward per token: its block's matrix multiplies and attention core, the
// projection (2 x 2h x h) and the LM head (2 h V).
TEST(Mtp, ModelFlopsCountEveryModule) {
  const auto with = load("preset: llama3-8b, mtp_depth: 2", "tp: 8, global_batch: 16", 8);
  const auto without = load("preset: llama3-8b", "tp: 8, global_batch: 16", 8);
  const ParamCounts p = param_counts(with.model);
  const double h = with.model.hidden;
  const double seq = with.model.seq_length;
  const double tokens = 16 * seq;
  const double per_token = 2 * (p.attention + p.mlp) + 4 * seq * with.model.query_width() +
                           2 * (2 * h * h) + 2 * h * with.model.vocab;
  EXPECT_NEAR(model_flops_per_step(with) - model_flops_per_step(without),
              2 * 3 * per_token * tokens, 1e-9 * model_flops_per_step(with));
  // Full recomputation runs the blocks again, not the projections or the head.
  auto full = with;
  full.parallelism.recompute = scenario::Recompute::full;
  auto full0 = without;
  full0.parallelism.recompute = scenario::Recompute::full;
  const double block = 2 * (p.attention + p.mlp) + 4 * seq * with.model.query_width();
  EXPECT_NEAR(hardware_flops_per_step(full) - hardware_flops_per_step(full0),
              (2 * 3 * per_token + 2 * block) * tokens, 1e-9 * hardware_flops_per_step(full));
}

// The head program runs each module's embedding, norms, projection (its input
// gathered under sequence parallelism, its output gathered over the tp ranks)
// and its own LM head and loss.
TEST(Mtp, TheHeadRunsEachModule) {
  const auto s =
      load("preset: llama3-8b, mtp_depth: 2", "tp: 8, sp: true, pp: 2, global_batch: 16");
  const ShardShape sh = shard_shape(s);
  const LayerProgram head = lm_head_and_loss(s.model, sh);
  EXPECT_EQ(count_ops(head.forward, "lm_head"), 1);
  EXPECT_EQ(count_ops(head.forward, "mtp.lm_head"), 2);
  EXPECT_EQ(count_ops(head.forward, "mtp.proj"), 2);
  EXPECT_EQ(count_ops(head.forward, "mtp.embedding"), 2);
  EXPECT_EQ(count_ops(head.forward, "mtp.norm.embedding") +
                count_ops(head.forward, "mtp.norm.hidden") +
                count_ops(head.forward, "mtp.norm.final"),
            6);
  const double t = sh.tokens();
  const double h = s.model.hidden;
  for (const Op& op : head.forward.ops) {
    if (op.name != "mtp.proj") continue;
    EXPECT_DOUBLE_EQ(op.gemm.m, t);
    EXPECT_DOUBLE_EQ(op.gemm.n, h / 8);
    EXPECT_DOUBLE_EQ(op.gemm.k, 2 * h);
  }
  const Collective* in = find_comm(head.forward, "tp.mtp.proj.in");
  const Collective* out = find_comm(head.forward, "tp.mtp.proj.out");
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(in->kind, CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(in->bytes, 2 * t * h * 2);
  EXPECT_DOUBLE_EQ(out->bytes, t * h * 2);
  // Backward mirrors them: two GEMMs a GEMM.
  EXPECT_EQ(count_ops(head.backward, "mtp.proj"), 4);
  // Without MTP the head is the final norm, the LM head and the loss.
  auto plain = s.model;
  plain.mtp_depth = 0;
  EXPECT_EQ(lm_head_and_loss(plain, sh).forward.ops.size(), 3U);
}

// The last stage (1F1B: one micro-batch in flight there) keeps, per module, a
// block's activations, the module's logits in fp32 and its inputs (8 bytes a
// token and hidden unit, split by sequence under sp).
TEST(Mtp, TheLastStageKeepsTheModulesActivations) {
  const std::string parallelism = "tp: 4, sp: true, pp: 4, zero: 1, global_batch: 64";
  const auto with = load("preset: llama3-8b, mtp_depth: 1", parallelism);
  const auto without = load("preset: llama3-8b", parallelism);
  const StepPlan a = plan_step(with);
  const StepPlan b = plan_step(without);
  const double t = a.shard.tokens();
  const double h = with.model.hidden;
  const double logits = t * with.model.vocab / 4 * 4;
  EXPECT_NEAR(stage_memory(with, a, 3).activations - stage_memory(without, b, 3).activations,
              layer_activation_bytes(with) + logits + t * h * 8 / 4, 1);
  EXPECT_DOUBLE_EQ(stage_memory(with, a, 1).activations, stage_memory(without, b, 1).activations);
  // The pipeline's head piece holds the module but its block.
  const PipelinePieces pa = pipeline_pieces(with, a);
  const PipelinePieces pb = pipeline_pieces(without, b);
  EXPECT_NEAR(pa.head.activations - pb.head.activations, logits + t * h * 8 / 4, 1);
}

TEST(Mtp, ADepthOutOfRangeIsAnErrorNamingTheKey) {
  for (const char* depth : {"-1", "65", "one"}) {
    try {
      (void)load(std::string("preset: llama3-8b, mtp_depth: ") + depth, "tp: 8, global_batch: 8",
                 8);
      ADD_FAILURE() << depth << " loaded";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("model.mtp_depth"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace myriad::models
