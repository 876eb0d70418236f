// Partial recomputation (parallelism.recompute_layers, Megatron-LM's
// --recompute-method block): the first N layers of each model chunk recomputed
// whole, the rest keeping their activations. Memory, time and HFU lie between
// none and full in proportion to the layers recomputed; both engines play it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/model_stats.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "sim/stage_split/pipeline_split.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using models::scenario::Recompute;
using testing::kShipped;

// Llama 3 8B's 32 layers on 4 stages of 8 (v 1) or of two chunks of 4 (v 2).
models::scenario::Scenario llama8b(Recompute recompute, int layers_recomputed, int v = 1) {
  auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 32}\n"
      "model: {preset: llama3-8b}\n"
      "parallelism: {tp: 2, sp: true, pp: 4, global_batch: 64, zero: 1}\n"
      "overlap: {dp: true, pp: true}\n",
      "recompute_layers_test.yaml", kShipped);
  s.parallelism.recompute = recompute;
  s.parallelism.recompute_layers = layers_recomputed;
  s.parallelism.virtual_stages = v;
  if (v > 1) s.parallelism.schedule = models::scenario::Schedule::interleaved;
  return s;
}

double part(const StepReport& r, std::string_view name) {
  for (const auto& b : r.breakdown) {
    if (b.name == name) return b.seconds;
  }
  return 0;
}

// Expectation: a stage of 8 layers recomputing 3 keeps 5 layers' activations and
// 3 layers' inputs; its compute is none's plus 3/8 of what full adds.
TEST(RecomputeLayers, BetweenNoneAndFullInProportion) {
  const auto none = llama8b(Recompute::none, 0);
  const auto full = llama8b(Recompute::full, 0);
  const auto three = llama8b(Recompute::full, 3);
  const double kept = models::layer_activation_bytes(none);
  const double input = models::layer_activation_bytes(full);
  EXPECT_DOUBLE_EQ(models::layer_activation_bytes(three), kept);
  EXPECT_DOUBLE_EQ(models::recomputed_layer_activation_bytes(three), input);
  const auto plan = models::plan_step(three);
  for (int stage = 0; stage < 4; ++stage) {
    const double in_flight = models::micro_batches_in_flight(none, models::plan_step(none), stage);
    EXPECT_NEAR(models::activations_in_flight(three, plan, stage),
                in_flight * (5 * kept + 3 * input), 1e-6 * in_flight * kept)
        << stage;
  }
  const StepReport a = estimate(none, testing::h100());
  const StepReport b = estimate(three, testing::h100());
  const StepReport c = estimate(full, testing::h100());
  EXPECT_NEAR(part(b, "compute") - part(a, "compute"),
              3.0 / 8 * (part(c, "compute") - part(a, "compute")), 1e-9 * part(a, "compute"));
  EXPECT_GT(b.step_time_s, a.step_time_s);
  EXPECT_LT(b.step_time_s, c.step_time_s);
  EXPECT_LT(b.memory.activations, a.memory.activations);
  EXPECT_GT(b.memory.activations, c.memory.activations);
  // HFU counts the forward of the 12 layers of 32 run again.
  EXPECT_NEAR(
      models::hardware_flops_per_step(three) - models::hardware_flops_per_step(none),
      12.0 / 32 * (models::hardware_flops_per_step(full) - models::hardware_flops_per_step(none)),
      1e-9 * models::hardware_flops_per_step(none));
  // As many layers as a chunk holds, or more, is full recomputation.
  for (const int n : {8, 20}) {
    const StepReport all = estimate(llama8b(Recompute::full, n), testing::h100());
    EXPECT_NEAR(all.step_time_s, c.step_time_s, 1e-9 * c.step_time_s) << n;
    EXPECT_DOUBLE_EQ(all.memory.activations, c.memory.activations) << n;
  }
}

// Expectation: per chunk, not per stage: two chunks of 4 recomputing 1 each
// recompute 2 of a stage's 8 layers; the step program's evaluator plays what the
// closed form prices.
TEST(RecomputeLayers, EachChunkRecomputesItsFirstLayers) {
  const auto s = llama8b(Recompute::full, 1, 2);
  const auto plan = models::plan_step(s);
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(plan.recomputed_by_stage[static_cast<std::size_t>(stage)], 2);
  }
  EXPECT_EQ(models::recomputed_layers(s).layers, 8);
  const double est = estimate(s, testing::h100(), Detail::summary).step_time_s;
  const double eval = evaluate_program(build_step_program(s, testing::h100())).step_time_s;
  EXPECT_NEAR(eval / est, 1, 1e-6);
}

// Expectation: Llama 3 405B at 16,384 H100 with Meta's layout but without
// recomputation and with the distributed optimizer only does not fit: the report
// offers the fewest layers a chunk must recompute to fit, and one fewer does not.
TEST(RecomputeLayers, FitRemedyNamesTheFewestLayers) {
  auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml",
      models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR}, {"parallelism.recompute=none"}));
  ASSERT_FALSE(estimate(s, testing::h100()).fits);
  const auto remedies = fit_remedies(s, testing::h100());
  const auto it = std::find_if(remedies.begin(), remedies.end(), [](const FitRemedy& r) {
    return r.key == "parallelism.recompute_layers";
  });
  ASSERT_NE(it, remedies.end());
  EXPECT_EQ(it->with, "parallelism.recompute=full");
  EXPECT_TRUE(it->fits());
  const int n = std::stoi(it->value);
  auto fewer = s;
  fewer.parallelism.recompute = Recompute::full;
  fewer.parallelism.recompute_layers = n;
  EXPECT_TRUE(estimate(fewer, testing::h100()).fits);
  if (n > 1) {
    fewer.parallelism.recompute_layers = n - 1;
    EXPECT_FALSE(estimate(fewer, testing::h100()).fits);
  }
}

// Expectation: refused where it means nothing, and by place, whose split moves
// which layers are recomputed.
TEST(RecomputeLayers, RefusedWithoutFullRecomputeAndByPlace) {
  try {
    (void)models::scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
        "parallelism: {global_batch: 8, recompute: selective, recompute_layers: 2}\n",
        "recompute_layers_test.yaml", kShipped);
    FAIL() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.recompute_layers"), std::string::npos);
  }
  EXPECT_THROW((void)pipeline_units(llama8b(Recompute::full, 2), testing::h100()),
               std::invalid_argument);
}

}  // namespace
}  // namespace myriad::sim
