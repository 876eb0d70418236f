// Data-parallel traffic and memory under context parallelism and ZeRO-3, and the
// span of groups that straddle nodes (issue 41 items 1, 2 and 7), against values
// computed by hand from the layout.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kDpPresets{{MYRIAD_SCENARIO_DIR}};

// Llama 3 405B (128 layers) on 16,384 H100 of 8 a node.
scenario::Scenario llama405(const std::string& parallelism) {
  return scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 16384}\n"
      "model: {preset: llama3-405b, layers: 128}\n"
      "parallelism: {sp: true, micro_batch: 1, global_batch: 2048, " +
          parallelism + "}\n",
      "data_parallel_test.yaml", kDpPresets);
}

const Collective* find_named(const std::vector<Collective>& comms, std::string_view name) {
  for (const auto& c : comms) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Expectation: a rank reduces all the gradients it holds whatever cp is: at tp 8
// each cp rank of a replica is on its own node, so none of the reduction stays on
// NVLink. Per rank 405B / (tp 8 x pp 2) parameters, 4 bytes each (bf16 model:
// gradients reduced in fp32); the dp ring's bytes do not shrink with cp.
TEST(DataParallel, ContextParallelRanksAcrossNodesReduceAllTheirGradients) {
  double reduced_at_cp1 = 0;
  for (const int cp : {1, 2, 4}) {
    const auto s = llama405("tp: 8, pp: 2, virtual_stages: 8, zero: 1, cp: " + std::to_string(cp));
    const StepPlan plan = plan_step(s);
    EXPECT_EQ(plan.dp, 1024 / cp);
    EXPECT_EQ(plan.dense_dp, 1024);
    const Collective* grads = find_named(plan.dp_comms, "dp.grads");
    ASSERT_NE(grads, nullptr);
    EXPECT_DOUBLE_EQ(grads->bytes, plan.params_max * 4) << "cp " << cp;
    if (cp == 1) reduced_at_cp1 = grads->bytes;
    EXPECT_DOUBLE_EQ(grads->bytes, reduced_at_cp1) << "cp " << cp;
    // The distributed optimizer shards over dp x cp: 12 B a parameter over 1,024.
    const MemoryBreakdown first = stage_memory(s, plan, 0);
    EXPECT_NEAR(first.optimizer, 12 * plan.params_first_stage / 1024, 1e-9 * first.optimizer);
  }
}

// Expectation: with tp 4 the two cp ranks of a replica share a node: they
// reduce-scatter between them over NVLink and each sends half across.
TEST(DataParallel, ContextParallelRanksInANodeSendAShareEach) {
  const auto s = llama405("tp: 4, pp: 4, zero: 1, cp: 2");
  ASSERT_EQ(group_span(GroupKind::cp, s).per_node, 2);
  const StepPlan plan = plan_step(s);
  const Collective* grads = find_named(plan.dp_comms, "dp.grads");
  ASSERT_NE(grads, nullptr);
  EXPECT_DOUBLE_EQ(grads->bytes, plan.params_max * 4 / 2);
}

// Expectation: ZeRO-3 gathers a layer's parameters (bf16) in every micro-batch's
// forward and again in its backward, and reduce-scatters its gradients (fp32)
// after each backward: layer collectives, none left per step.
TEST(DataParallel, ZeroThreeGathersEveryLayerInEveryMicroBatch) {
  const auto s = llama405("tp: 8, pp: 8, zero: 3");
  const StepPlan plan = plan_step(s);
  EXPECT_TRUE(plan.dp_comms.empty());
  const Collective* forward = find_named(plan.layer.forward.comms, "dp.params");
  const Collective* backward = find_named(plan.layer.backward.comms, "dp.params.bwd");
  const Collective* grads = find_named(plan.layer.backward.comms, "dp.grads");
  ASSERT_NE(forward, nullptr);
  ASSERT_NE(backward, nullptr);
  ASSERT_NE(grads, nullptr);
  EXPECT_EQ(forward->group, GroupKind::dp);
  EXPECT_EQ(forward->kind, CollectiveKind::all_gather);
  EXPECT_EQ(grads->kind, CollectiveKind::reduce_scatter);
  EXPECT_DOUBLE_EQ(forward->bytes, plan.params_per_layer * 2);
  EXPECT_DOUBLE_EQ(backward->bytes, plan.params_per_layer * 2);
  EXPECT_DOUBLE_EQ(grads->bytes, plan.params_per_layer * 4);
  // The embedding's rows, gathered by the first stage: 128,256 x 16,384 / 8.
  const Collective* embedding = find_named(plan.embedding.forward.comms, "dp.params.embedding");
  ASSERT_NE(embedding, nullptr);
  EXPECT_DOUBLE_EQ(embedding->bytes, 128256.0 * 16384 / 8 * 2);
}

// Expectation: ZeRO-2 holds 1/(dp x cp) of the gradients, so it cannot sum them
// over the micro-batches in place: every micro-batch's backward reduce-scatters
// each layer's gradients (fp32, the bytes ZeRO-1 reduces once a step, layer by
// layer), and the updated parameters (bf16) are gathered once a step. Its memory
// holds the shards and one unit's gradients whole, ZeRO-1's the whole buffer.
TEST(DataParallel, ZeroTwoReducesEveryMicroBatch) {
  const auto s = llama405("tp: 8, pp: 8, zero: 2");
  ASSERT_GT(s.parallelism.micro_batches(), 1);
  const StepPlan plan = plan_step(s);
  ASSERT_EQ(plan.dp_comms.size(), 1U);
  EXPECT_EQ(plan.dp_comms[0].kind, CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(plan.dp_comms[0].bytes, plan.params_max * 2);
  EXPECT_EQ(find_named(plan.layer.forward.comms, "dp.params"), nullptr);
  EXPECT_EQ(find_named(plan.layer.backward.comms, "dp.params.bwd"), nullptr);
  const Collective* grads = find_named(plan.layer.backward.comms, "dp.grads");
  ASSERT_NE(grads, nullptr);
  EXPECT_EQ(grads->kind, CollectiveKind::reduce_scatter);
  EXPECT_EQ(grads->group, GroupKind::dp);
  EXPECT_DOUBLE_EQ(grads->bytes, plan.params_per_layer * 4);
  ASSERT_NE(find_named(plan.embedding.backward.comms, "dp.grads.embedding"), nullptr);
  ASSERT_NE(find_named(plan.head.backward.comms, "dp.grads.head"), nullptr);

  auto zero1 = s;
  zero1.parallelism.zero = 1;
  const StepPlan once = plan_step(zero1);
  ASSERT_EQ(once.dp_comms.size(), 2U);
  EXPECT_TRUE(once.layer.backward.comms.empty() ||
              find_named(once.layer.backward.comms, "dp.grads") == nullptr);
  const int middle = 3;
  const MemoryBreakdown sharded = stage_memory(s, plan, middle);
  const MemoryBreakdown whole = stage_memory(zero1, once, middle);
  const double stage_params = plan.params_middle_stage;
  EXPECT_NEAR(whole.gradients, stage_params * 4, 1e-9 * whole.gradients);
  EXPECT_NEAR(sharded.gradients, stage_params * 4 / plan.dense_dp + plan.params_per_layer * 4,
              1e-9 * sharded.gradients);
  EXPECT_DOUBLE_EQ(sharded.weights, whole.weights);
}

// Expectation: ZeRO-3's memory holds the shards and what is gathered: two units
// whole in bf16 (computing, and the next one arriving) and one unit's fp32
// gradients. At tp 8 a layer (about 3.2e9 / 8 parameters) outweighs the
// embedding's 128,256 x 16,384 / 8 rows; at tp 8 with a 1M-token vocabulary the
// embedding is the first stage's largest unit.
TEST(DataParallel, ZeroThreeHoldsTheLayersItGathers) {
  const auto s = llama405("tp: 8, pp: 8, zero: 3");
  const StepPlan plan = plan_step(s);
  const double embedding = 128256.0 * 16384 / 8;
  ASSERT_LT(embedding, plan.params_per_layer);
  const double layer = plan.params_per_layer;
  const MemoryBreakdown first = stage_memory(s, plan, 0);
  EXPECT_NEAR(first.weights, plan.params_first_stage * 2 / 256 + 2 * layer * 2,
              1e-9 * first.weights);
  EXPECT_NEAR(first.gradients, plan.params_first_stage * 4 / 256 + layer * 4,
              1e-9 * first.gradients);
  auto wide = s;
  wide.model.vocab = 1 << 20;
  const StepPlan wide_plan = plan_step(wide);
  const double rows = (1 << 20) * 16384.0 / 8;
  const MemoryBreakdown wide_first = stage_memory(wide, wide_plan, 0);
  EXPECT_NEAR(wide_first.weights, wide_plan.params_first_stage * 2 / 256 + 2 * rows * 2,
              1e-9 * wide_first.weights);
  // Without ZeRO-3 nothing is gathered: the weights are the stage's, whole.
  auto zero1 = s;
  zero1.parallelism.zero = 1;
  const MemoryBreakdown held = stage_memory(zero1, plan_step(zero1), 0);
  EXPECT_NEAR(held.weights, plan.params_first_stage * 2, 1e-9 * held.weights);
}

// Expectation: tp 6 on 8-GPU nodes: ranks 0-5 share a node, ranks 6-11 straddle
// two (2 and 4); the tensor-parallel collectives are priced as the straddling
// group's, which waits on the network.
TEST(RankOrder, StraddlingTensorParallelGroupsAreTheOnesPriced) {
  const auto s = scenario::load_scenario_text(
      "cluster: {preset: selene-like, gpus: 96}\n"
      "model: {preset: gpt3-175b-megatron}\n"
      "parallelism: {tp: 6, pp: 16, global_batch: 64}\n",
      "straddle.yaml", kDpPresets);
  const GroupSpan tp = group_span(GroupKind::tp, s);
  EXPECT_EQ(tp.size, 6);
  EXPECT_EQ(tp.nodes, 2);
  EXPECT_EQ(tp.per_node, 4);
  // tp 4 divides the node: every group inside one.
  auto aligned = s;
  aligned.parallelism.tp = 4;
  aligned.parallelism.dp = 96 / (4 * 16);
  EXPECT_EQ(group_span(GroupKind::tp, aligned).nodes, 1);
}

}  // namespace
}  // namespace myriad::models
