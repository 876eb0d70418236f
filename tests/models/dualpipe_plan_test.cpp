// DualPipe's step plan and memory (models/plan/step_plan.cpp, memory.cpp): two
// chunks a rank, one per direction; both end ranks hold an embedding and a
// head; activations as the schedule's order holds them.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

scenario::Scenario llama(const std::string& schedule) {
  return scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, pp: 8, micro_batch: 1, global_batch: 16, schedule: " +
          schedule + "}\n",
      "dualpipe.yaml", scenario::LoadOptions({MYRIAD_SCENARIO_DIR}));
}

// Rank r holds stage r's 4 layers and stage 7 - r's: 8 layers, twice 1F1B's
// parameters; both end ranks an embedding and a head (the untied vocabulary
// twice, the final norm).
TEST(DualPipePlan, EachRankHoldsAStageOfEachDirection) {
  const StepPlan one = plan_step(llama("1f1b"));
  const StepPlan dual = plan_step(llama("dualpipe"));
  ASSERT_EQ(dual.virtual_stages, 2);
  for (int r = 0; r < 8; ++r) {
    const auto k = static_cast<std::size_t>(r);
    EXPECT_EQ(dual.layers_by_chunk[k][0], one.layers_by_chunk[k][0]);
    EXPECT_EQ(dual.layers_by_chunk[k][1], one.layers_by_chunk[7 - k][0]);
    EXPECT_EQ(dual.layers_by_stage[k], 8);
  }
  EXPECT_DOUBLE_EQ(dual.params_middle_stage, 2 * one.params_middle_stage);
  const double vocab = one.embedding_params;
  EXPECT_DOUBLE_EQ(dual.params_first_stage,
                   dual.stage_layer_params(0) + 2 * vocab + one.head_params - vocab);
  EXPECT_DOUBLE_EQ(dual.params_last_stage, dual.params_first_stage);
}

// A middle rank's activations: at most pp + 1 = 9 chunk passes of 4 layers
// (DualPipe's README table), where 1F1B's second stage holds pp - 1 = 7 of 4.
TEST(DualPipePlan, AMiddleRankHoldsPpPlusOneChunkPasses) {
  const auto s = llama("dualpipe");
  const StepPlan plan = plan_step(s);
  const double layer = layer_activation_bytes(s);
  EXPECT_DOUBLE_EQ(stage_memory(s, plan, 3).activations, 9 * 4 * layer);
  EXPECT_DOUBLE_EQ(stage_memory(s, plan, 4).activations, 9 * 4 * layer);
  EXPECT_DOUBLE_EQ(stage_memory(s, plan, 2).activations, 8 * 4 * layer);
  const auto one = llama("1f1b");
  EXPECT_DOUBLE_EQ(stage_memory(one, plan_step(one), 1).activations, 7 * 4 * layer);
}

}  // namespace
}  // namespace myriad::models
