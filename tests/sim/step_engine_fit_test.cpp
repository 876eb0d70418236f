// The campaign on the step engine's pace, as a model over data: which steps a
// fit plays (sim/campaign/step_engine_fit.hpp), and what their times make of
// each cluster state, straggler process and slow node. No step engine runs
// here: the played times are given.
#include "sim/campaign/step_engine_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim::campaign {
namespace {

// GPT-3 175B on 32 nodes of 8 A100 (tp 8, pp 8: four replicas) with a policy that
// shrinks, a straggler process, and three slow nodes: nodes 9 and 10 (both in
// stage 2) 1.5x slow, node 0 (stage 0) 2x.
models::scenario::Scenario job() {
  return models::scenario::load_scenario_text(R"(
cluster: {preset: selene-like, gpus: 256}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
policies: [{name: shrink, no_spare: shrink, repair_time: 4h}]
faults:
  stragglers: [{name: slow, per_1000_node_days: 300, duration: 2h, slowdown: 1.5}]
  events:
    - {at: 1h, until: 9h, node: 9, slowdown: 1.5}
    - {at: 2h, until: 3h, node: 10, slowdown: 1.5}
    - {at: 4h, until: 5h, node: 0, slowdown: 2}
)",
                                              "step_engine_fit_test.yaml",
                                              models::scenario::LoadOptions{{MYRIAD_SCENARIO_DIR}});
}

const DeviceProfile& a100() {
  static const DeviceProfile p = load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json");
  return p;
}

// Expectation: the healthy step first; the shrunk states asked for, largest first
// (dp 2 of the 2 and 1 the policy passes through), the rest counted; the
// straggler on the first, a middle and the last of 8 stages; one step per
// distinct (stage, slowdown) of the slow nodes, nodes 9 and 10 sharing theirs.
TEST(StepEngineFit, PlansOneStepPerStateStageAndDistinctSlowNode) {
  const auto s = job();
  ASSERT_EQ(models::group_on_node(s, 9).stage, 2);
  ASSERT_EQ(models::group_on_node(s, 10).stage, 2);
  const StepEnginePlan plan = plan_step_engine_fit(s, a100(), 1);
  ASSERT_EQ(plan.steps.size(), 7U);
  EXPECT_EQ(plan.steps[0].what, "the healthy step");
  EXPECT_FALSE(plan.steps[0].slow || plan.steps[0].shrunk);
  ASSERT_TRUE(plan.steps[1].shrunk.has_value());
  EXPECT_EQ(plan.steps[1].shrunk->parallelism.dp, 2);
  EXPECT_EQ(plan.steps[1].what, "the job shrunk to 2 replicas");
  EXPECT_EQ(plan.fit.shrunk_not_played, 1);
  ASSERT_EQ(plan.fit.shrunk.size(), 1U);
  EXPECT_EQ(plan.fit.shrunk[0].nodes, 16);
  EXPECT_EQ(plan.fit.shrunk[0].most_nodes, 31);
  EXPECT_EQ(plan.fit.stages, (std::vector<int>{0, 4, 7}));
  for (std::size_t k = 2; k < 5; ++k) {
    ASSERT_TRUE(plan.steps[k].slow.has_value());
    EXPECT_EQ(plan.steps[k].slow->slowdown, 1.5);
    EXPECT_EQ(plan.steps[k].slow->name, "slow");
  }
  EXPECT_EQ(plan.steps[3].what, "straggler 'slow', stage 4");
  EXPECT_EQ(plan.steps[5].slow->node, 9);
  EXPECT_EQ(plan.steps[6].slow->node, 0);
  EXPECT_EQ(plan.steps[6].slow->name, "injected");
  ASSERT_EQ(plan.slow_events.size(), 3U);
  EXPECT_EQ(plan.slow_events[0].step, 5U);
  EXPECT_EQ(plan.slow_events[1].step, 5U);
  EXPECT_EQ(plan.slow_events[2].step, 6U);
  EXPECT_DOUBLE_EQ(plan.fit.analytic_step_s, estimate(s, a100()).step_time_s);
}

// Expectation, by hand: a healthy step of 10 s and a shrunk one of 20 s scale
// their states by 10 / analytic and 20 / analytic; the straggler's stages at 12,
// 10 and 9 s are factors 1.2, 1 and 1 (never below 1), weighted 1, 6 and 1 over
// 8 stages: 1.025; the slow nodes at 11 and 30 s run at 1.1 and 3.
TEST(StepEngineFit, PlayedTimesScaleStatesAndSetEffectiveSlowdowns) {
  auto s = job();
  const StepEnginePlan plan = plan_step_engine_fit(s, a100(), 1);
  const StepEngineFit fit = fit_step_engine(s, plan, {10, 20, 12, 10, 9, 11, 30});
  EXPECT_EQ(fit.simulated_step_s, 10);
  ASSERT_EQ(fit.shrunk.size(), 1U);
  EXPECT_EQ(fit.shrunk[0].simulated_s, 20);
  const auto by_dp = fit.scale_by_dp(s.parallelism.dp);
  EXPECT_DOUBLE_EQ(by_dp.at(4), 10 / fit.analytic_step_s);
  EXPECT_DOUBLE_EQ(by_dp.at(2), 20 / fit.shrunk[0].analytic_s);
  ASSERT_EQ(fit.effective.size(), 1U);
  EXPECT_EQ(fit.given[0], 1.5);
  EXPECT_EQ(fit.by_stage[0], (std::vector<double>{1.2, 1, 1}));
  EXPECT_DOUBLE_EQ(fit.effective[0], (1.2 + 6 + 1) / 8);
  EXPECT_DOUBLE_EQ(s.faults.stragglers[0].slowdown, fit.effective[0]);
  ASSERT_EQ(fit.slow_nodes.size(), 3U);
  EXPECT_EQ(fit.slow_nodes[1].node, 10);
  EXPECT_EQ(fit.slow_nodes[1].given, 1.5);
  EXPECT_DOUBLE_EQ(fit.slow_nodes[1].effective, 1.1);
  EXPECT_DOUBLE_EQ(s.faults.events[0].slowdown, 1.1);
  EXPECT_DOUBLE_EQ(s.faults.events[2].slowdown, 3);
  EXPECT_THROW((void)fit_step_engine(s, plan, {10}), std::invalid_argument);
}

// Expectation: without a shrinking policy no shrunk state is played: the healthy
// step, the straggler's three stages and the two distinct slow nodes.
TEST(StepEngineFit, NoShrinkingPolicyPlaysNoShrunkState) {
  auto s = job();
  s.policies.front().no_spare = models::scenario::NoSpare::wait_for_repair;
  const StepEnginePlan plan = plan_step_engine_fit(s, a100(), 3);
  EXPECT_TRUE(plan.fit.shrunk.empty());
  EXPECT_EQ(plan.fit.shrunk_not_played, 0);
  EXPECT_EQ(plan.steps.size(), 1U + 3 + 2);
}

}  // namespace
}  // namespace myriad::sim::campaign
