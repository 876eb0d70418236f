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

models::scenario::Scenario llama8b_pp4(const std::string& stages) {
  return models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 64" +
          stages + "}\n",
      "pipeline_stages_test.yaml", kShipped);
}

std::string load_error(const std::string& text) {
  try {
    models::scenario::load_scenario_text(text, "pipeline_stages_test.yaml", kShipped);
  } catch (const models::scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

// Expectation: Llama 3 405B's 126 layers on 16 stages, which no even split
// allows, as 7 + 14 x 8 + 7.
TEST(PipelineStages, UnevenLayerCountsCanBeExpressed) {
  const auto s = models::scenario::load_scenario_text(R"(
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
  // With interleaving, each stage's layers must split over its virtual stages.
  const std::string odd_first = load_error(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, pp: 4, virtual_stages: 2, first_stage_layers: 5, "
      "last_stage_layers: 7, global_batch: 64}\n");
  EXPECT_NE(odd_first.find("parallelism.first_stage_layers: 5 layers do not split over 2 virtual "
                           "stages"),
            std::string::npos)
      << odd_first;
  const std::string odd_rest = load_error(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, pp: 4, virtual_stages: 2, first_stage_layers: 6, "
      "last_stage_layers: 4, global_batch: 64}\n");
  EXPECT_NE(odd_rest.find("leave 22 for the other 2 stage(s): expected a positive multiple of 4 "
                          "(2 stages x 2 virtual stages)"),
            std::string::npos)
      << odd_rest;
}

// Expectation: uneven stages with interleaving, Llama 3 8B's 32 layers as
// 6 + 10 + 10 + 6 on 4 stages of 2 virtual stages (3 + 3, 5 + 5, ...): the same
// stages as without interleaving, so the same compute, and the fill and drain
// (the other stages' passes) shared over 2 chunks: about half the bubble. Both
// schedules are their longest paths (the closed form plays them pass by pass),
// each hiding part of the slow middle stages' fill under the lighter first
// stage's passes: 50.5 % of the 1F1B bubble, 2026-12-05.
TEST(PipelineStages, UnevenStagesInterleave) {
  const std::string stages = ", first_stage_layers: 6, last_stage_layers: 6";
  const auto plain = llama8b_pp4(stages);
  const auto interleaved = llama8b_pp4(", virtual_stages: 2" + stages);
  EXPECT_EQ(models::stage_layers(interleaved, 0), 6);
  EXPECT_EQ(models::stage_layers(interleaved, 1), 10);
  EXPECT_EQ(models::stage_layers(interleaved, 3), 6);
  const StepReport a = estimate(plain, h100());
  const StepReport b = estimate(interleaved, h100());
  const auto part = [](const StepReport& r, const std::string& name) {
    for (const auto& p : r.breakdown) {
      if (p.name == name) return p.seconds;
    }
    return -1.0;
  };
  EXPECT_NEAR(part(b, "compute"), part(a, "compute"), 1e-9 * part(a, "compute"));
  EXPECT_GT(part(a, "bubble"), 0);
  EXPECT_NEAR(part(b, "bubble") / part(a, "bubble"), 0.5, 0.03);
  EXPECT_LT(b.step_time_s, a.step_time_s);
}

// Expectation: every stage's layers as a list (parallelism.stage_layers, what
// `myriad place` writes) give exactly what the first/last form gives for the
// same split, and a heavier stage between them slows the step and is the one
// whose memory counts when it holds the most.
TEST(PipelineStages, AListOfStagesIsTheSameSplit) {
  const auto pair = llama8b_pp4(", first_stage_layers: 6, last_stage_layers: 6");
  const auto list = llama8b_pp4(", stage_layers: [6, 10, 10, 6]");
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(models::stage_layers(list, stage), models::stage_layers(pair, stage));
  }
  const StepReport a = estimate(pair, h100());
  const StepReport b = estimate(list, h100());
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.memory.total(), b.memory.total());
  // 12 layers on the third stage: the slowest stage sets the pace.
  const auto heavy = llama8b_pp4(", stage_layers: [6, 8, 12, 6]");
  const StepReport c = estimate(heavy, h100());
  EXPECT_GT(c.step_time_s, b.step_time_s);
  EXPECT_EQ(models::plan_step(heavy).layers_per_stage, 12);
  // Memory is the fullest stage's: 26 layers on the third stage (2 micro-batches
  // in flight) hold less than on the second (3 in flight), more than even stages.
  const auto third = estimate(llama8b_pp4(", stage_layers: [2, 2, 26, 2]"), h100()).memory;
  const auto second = estimate(llama8b_pp4(", stage_layers: [2, 26, 2, 2]"), h100()).memory;
  const auto even = estimate(llama8b_pp4(""), h100()).memory;
  EXPECT_LT(third.total(), second.total());
  EXPECT_GT(third.total(), even.total());
  EXPECT_NEAR(third.activations / second.activations, 2.0 / 3.0, 1e-9);
}

TEST(PipelineStages, AListOfStagesIsChecked) {
  const std::string job =
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, pp: 4, global_batch: 64, ";
  EXPECT_NE(load_error(job + "stage_layers: [8, 8, 16]}\n")
                .find("expected one layer count a pipeline stage: 4 (pp), found 3"),
            std::string::npos);
  EXPECT_NE(load_error(job + "stage_layers: [8, 8, 8, 9]}\n")
                .find("the stages' layers sum to 33, but the model has 32"),
            std::string::npos);
  EXPECT_NE(
      load_error(job + "stage_layers: [8, 8, 8, 8], first_stage_layers: 8}\n").find("not both"),
      std::string::npos);
  EXPECT_NE(load_error(job + "stage_layers: [8, 0, 16, 8]}\n").find("stage_layers[1]"),
            std::string::npos);
  EXPECT_NE(load_error(job + "virtual_stages: 2, stage_layers: [7, 9, 8, 8]}\n")
                .find("7 layers do not split over 2 virtual stages"),
            std::string::npos);
}

}  // namespace
}  // namespace myriad::sim
