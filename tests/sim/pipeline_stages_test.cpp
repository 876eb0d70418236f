// Uneven pipeline stages: parallelism.first_stage_layers / last_stage_layers, as
// Megatron-LM's --decoder-first/last-pipeline-num-layers, with the embedding and
// the LM head priced on the stages that run them.
#include <gtest/gtest.h>

#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

scenario::Scenario llama8b_pp4(const std::string& stages) {
  return scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 64" +
          stages + "}\n",
      "pipeline_stages_test.yaml", kShipped);
}

std::string load_error(const std::string& text) {
  try {
    scenario::load_scenario_text(text, "pipeline_stages_test.yaml", kShipped);
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

// Expectation: Llama 3 405B's 126 layers on 16 stages, which no even split
// allows, as 7 + 14 x 8 + 7.
TEST(PipelineStages, UnevenLayerCountsCanBeExpressed) {
  const auto s = scenario::load_scenario_text(R"(
cluster: {preset: llama3-like, gpus: 16384}
model: {preset: llama3-405b}
parallelism: {tp: 8, sp: true, pp: 16, first_stage_layers: 7, last_stage_layers: 7, zero: 1,
              micro_batch: 1, global_batch: 2048}
)",
                                              "405b.yaml", kShipped);
  int total = 0;
  for (int stage = 0; stage < 16; ++stage) total += models::stage_layers(s, stage);
  EXPECT_EQ(total, 126);
  EXPECT_EQ(models::stage_layers(s, 0), 7);
  EXPECT_EQ(models::stage_layers(s, 1), 8);
  EXPECT_EQ(models::stage_layers(s, 15), 7);
  EXPECT_GT(estimate(s, h100()).step_time_s, 0);
  EXPECT_NE(load_error(R"(
cluster: {preset: llama3-like, gpus: 16384}
model: {preset: llama3-405b}
parallelism: {tp: 8, sp: true, pp: 16, global_batch: 2048}
)")
                .find("layers (126) must be a multiple of pp * virtual_stages"),
            std::string::npos);
}

// Expectation: impossible splits are refused with the arithmetic.
TEST(PipelineStages, ImpossibleSplitsAreExplained) {
  const std::string rest = load_error(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, pp: 4, first_stage_layers: 9, last_stage_layers: 4, "
      "global_batch: 64}\n");
  EXPECT_NE(rest.find("layers (32) less first_stage_layers (9) and last_stage_layers (4) leave 19 "
                      "for the other 2 stage(s): expected a positive multiple of 2"),
            std::string::npos)
      << rest;
  const std::string interleaved = load_error(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, pp: 4, virtual_stages: 2, first_stage_layers: 2, "
      "global_batch: 64}\n");
  EXPECT_NE(interleaved.find("uneven stages with interleaving"), std::string::npos) << interleaved;
}

// Expectation: Llama 3 8B's LM head (a 128k vocabulary) costs about two layers,
// so the even split's last stage is the slowest; moving two of its layers to the
// stages between (8, 9, 9, 6) shortens the step, and the parameters and memory
// follow the layers.
TEST(PipelineStages, LighteningTheLastStageShortensTheStep) {
  const auto even = llama8b_pp4("");
  const auto uneven = llama8b_pp4(", first_stage_layers: 8, last_stage_layers: 6");
  EXPECT_EQ(models::stage_layers(uneven, 1), 9);
  const StepReport a = estimate(even, h100());
  const StepReport b = estimate(uneven, h100());
  EXPECT_LT(b.step_time_s, a.step_time_s);
  const models::StepPlan plan = models::plan_step(uneven);
  EXPECT_GT(plan.params_middle_stage, 0);
  EXPECT_LT(plan.params_last_stage, models::plan_step(even).params_last_stage);
}

}  // namespace
}  // namespace myriad::sim
