// Megatron-Core's combined 1F1B (parallelism.schedule: combined-1f1b): the
// schedule's order against Megatron's rules, its graph against the step
// program's evaluator, the F&B pass's four phases worked by hand, the checks,
// and what it changes in `estimate` and in the step engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "models/plan/memory.hpp"
#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/diagnostics.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/pipeline_makespan.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/mixtral_ep8.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/slot_durations.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::PipelineTask;
using models::scenario::Schedule;

// Expectation: each stage runs Megatron-LM's interleaved order (1F1B with one
// chunk) with one more warm-up forward, then every forward paired with the
// backward after it, then the backwards left: the passes one by one are those of
// the interleaved order with its warm-up one longer.
TEST(Combined1F1B, IsTheInterleavedOrderWithOneMoreWarmupForwardEachThenPaired) {
  for (const auto& [pp, v, m] : {std::tuple{1, 1, 4}, std::tuple{4, 2, 8}, std::tuple{2, 12, 8},
                                 std::tuple{8, 4, 16}, std::tuple{4, 3, 4}}) {
    for (int stage = 0; stage < pp; ++stage) {
      const auto order = models::pipeline_order(Schedule::combined_1f1b, pp, v, m, stage);
      const auto plain = models::pipeline_order(pp, v, m, stage);
      const int warmup = models::warmup_forwards(Schedule::combined_1f1b, pp, v, m, stage);
      EXPECT_EQ(warmup, std::min(models::warmup_forwards(pp, v, m, stage) + 1, m * v));
      // Unpaired, the passes are the interleaved schedule's forwards and backwards
      // in their own orders, the forwards one pass earlier from the warm-up on.
      std::vector<PipelineTask> forwards;
      std::vector<PipelineTask> backwards;
      std::size_t pairs = 0;
      for (std::size_t i = 0; i < order.size(); ++i) {
        const PipelineTask& t = order[i];
        (t.forward ? forwards : backwards).push_back({t.forward, t.chunk, t.micro_batch});
        if (!t.paired) continue;
        ++pairs;
        ASSERT_TRUE(t.forward);
        ASSERT_LT(i + 1, order.size());
        EXPECT_FALSE(order[i + 1].forward);
        // Forwards before the first pair: the warm-up.
        if (pairs == 1) {
          EXPECT_EQ(static_cast<int>(i), warmup);
        }
      }
      EXPECT_EQ(static_cast<int>(pairs), m * v - warmup) << pp << " " << v << " " << m;
      std::vector<PipelineTask> plain_forwards;
      std::vector<PipelineTask> plain_backwards;
      for (const auto& t : plain) (t.forward ? plain_forwards : plain_backwards).push_back(t);
      EXPECT_EQ(forwards, plain_forwards);
      EXPECT_EQ(backwards, plain_backwards);
    }
  }
  // One stage: F0, then F(k+1) with B(k), then the last B (the guide's table).
  const auto one = models::pipeline_order(Schedule::combined_1f1b, 1, 1, 3, 0);
  ASSERT_EQ(one.size(), 6U);
  EXPECT_TRUE(one[0].forward && !one[0].paired && one[0].micro_batch == 0);
  EXPECT_TRUE(one[1].paired && one[1].micro_batch == 1 && one[2].micro_batch == 0);
  EXPECT_TRUE(one[3].paired && one[3].micro_batch == 2 && one[4].micro_batch == 1);
  EXPECT_TRUE(!one[5].forward && one[5].micro_batch == 2);
  EXPECT_THROW((void)models::pipeline_order(Schedule::combined_1f1b, 4, 1, 8, 0),
               std::invalid_argument);
}

// Expectation: a pair's forward and backward are independent (the extra warm-up
// forward's purpose): the graph builds for every stage count, chunk count and
// micro-batch count, each F&B pass one node, and the steady state repeats.
TEST(Combined1F1B, PairsAreIndependentAndTheSteadyStateRepeats) {
  for (const auto& [pp, v, m] :
       {std::tuple{1, 1, 2}, std::tuple{1, 1, 9}, std::tuple{2, 2, 2}, std::tuple{4, 2, 8},
        std::tuple{8, 4, 32}, std::tuple{2, 12, 64}, std::tuple{16, 2, 16}}) {
    const auto g = models::schedule_graph(Schedule::combined_1f1b, pp, v, m);
    std::size_t pairs = 0;
    for (int stage = 0; stage < pp; ++stage) {
      for (const auto& t : models::pipeline_order(Schedule::combined_1f1b, pp, v, m, stage)) {
        pairs += t.paired ? 1 : 0;
      }
    }
    EXPECT_EQ(g.nodes.size(), static_cast<std::size_t>(2 * pp * v * m) - pairs);
    EXPECT_EQ(g.second_input.size(), g.nodes.size());
  }
  // Long enough a steady state, the rounds of F&B passes repeat: v pp nodes a
  // stage interleaved, one with a single stage.
  EXPECT_EQ(models::schedule_graph(Schedule::combined_1f1b, 2, 12, 64).period, 2U * 12 * 2);
  EXPECT_EQ(models::schedule_graph(Schedule::combined_1f1b, 1, 1, 9).period, 1U);
}

// An MoE scenario of `pp` stages of `v` chunks and `m` micro-batches on the
// combined schedule.
models::scenario::Scenario combined(int pp, int v, int m, const std::string& extra = "") {
  return models::scenario::load_scenario_text(
      fmt::format("cluster: {{preset: llama3-like, gpus: {}}}\n"
                  "model: {{preset: qwen3-30b-a3b, seq_length: 4096}}\n"
                  "parallelism: {{tp: 1, ep: 8, pp: {}, virtual_stages: {}, micro_batch: 1, "
                  "global_batch: {}, zero: 1, schedule: combined-1f1b}}\n{}",
                  8 * pp, pp, v, 8 * m, extra),
      "combined.yaml", testing::kShipped);
}

// A layer's passes with expert all-to-alls that split them: forward 10 ms of which
// 4 exposed all-to-all (1.5 the dispatch) and 2 the experts' compute; backward
// 21 ms of which 6 all-to-all (2.5 the combine's mirror) and 5 the experts'.
StageCosts costs_with_experts() {
  StageCosts costs;
  costs.layer = {0.010, 0.021, 0.008, 0.004, 0.006, 0.004, 0.006, 0, 0.002, 0.005, 0.0015, 0.0025};
  costs.embedding = {0.004, 0.009};
  costs.head = {0.023, 0.047};
  costs.pp_transfer.time_s = 0.0017;
  return costs;
}

// Expectation: the closed form's longest path over the combined schedule's graph
// is the step program's step as its evaluator plays it, with and without the
// data-parallel stream beside the passes.
TEST(Combined1F1B, TheGraphIsWhatTheEvaluatorPlays) {
  for (const auto& [pp, v, m, let_go, share] :
       {std::tuple{1, 1, 6, false, 0.0}, std::tuple{2, 2, 2, true, 0.0},
        std::tuple{2, 4, 8, true, 0.2}, std::tuple{4, 2, 8, false, 0.2},
        std::tuple{4, 3, 4, true, 0.0}, std::tuple{2, 12, 8, false, 0.35}}) {
    const auto s = combined(pp, v, m, fmt::format("overlap: {{pp: {}}}\n", let_go));
    const StepProgram program = build_step_program(s, costs_with_experts(), share);
    ASSERT_EQ(program.m, m);
    const auto g = models::schedule_graph(Schedule::combined_1f1b, pp, v, m);
    const std::vector<double> d = testing::slot_durations(program, g);
    const double evaluated = evaluate_program(program).step_time_s;
    EXPECT_NEAR(pipeline_makespan(g, d, {costs_with_experts().pp_transfer.time_s, let_go}),
                evaluated, 1e-12 * evaluated)
        << pp << " " << v << " " << m;
    // The data-parallel stream beside the passes: gathers of 12 ms and reductions
    // of 18 ms over the stage's parameters, in 3 buckets a chunk.
    const auto with_dp = combined(pp, v, m, fmt::format("overlap: {{pp: {}, dp: true}}\n", let_go));
    StageCosts costs = costs_with_experts();
    costs.dp_comms = {
        {"dp.grads", models::CollectiveKind::reduce_scatter, models::GroupKind::dp, 1},
        {"dp.params", models::CollectiveKind::all_gather, models::GroupKind::dp, 1}};
    costs.dp_costs = {{0.018, 5e-5}, {0.012, 5e-5}};
    costs.dp_buckets = 3;
    const StepProgram streamed = build_step_program(with_dp, costs, share);
    const DpPlay play =
        pipeline_with_dp(g, testing::slot_durations(streamed, g),
                         {costs.pp_transfer.time_s, let_go}, streamed.dp_stream(), share);
    const double evaluated_dp = evaluate_program(streamed).step_time_s;
    EXPECT_NEAR(play.end, evaluated_dp, 1e-12 * evaluated_dp) << pp << " " << v << " " << m;
  }
}

// Expectation: the backward's expert collectives sit where the forward's mirror
// them, around the experts' backward, so that the pass splits where combined
// 1F1B pairs it: every expert op between the first and the last, none outside.
TEST(Combined1F1B, TheBackwardsExpertCollectivesSitAroundItsExperts) {
  const auto s = combined(2, 2, 8);
  const models::StepPlan plan = models::plan_step(s);
  for (const models::Phase* phase : {&plan.layer.forward, &plan.layer.backward}) {
    int first = -1;
    int last = -1;
    for (const auto& c : phase->comms) {
      if (c.group != models::GroupKind::ep) continue;
      ASSERT_GE(c.after_ops, 0) << c.name;
      first = first < 0 ? c.after_ops : std::min(first, c.after_ops);
      last = std::max(last, c.after_ops);
    }
    ASSERT_LT(first, last);
    int experts = 0;
    for (int k = 0; k < static_cast<int>(phase->ops.size()); ++k) {
      const bool expert = phase->ops[static_cast<std::size_t>(k)].name.starts_with("expert.");
      experts += expert ? 1 : 0;
      if (expert) {
        EXPECT_GE(k, first);
        EXPECT_LT(k, last);
      }
    }
    EXPECT_GE(experts, 3);
  }
}

// Expectation, worked by hand: with the passes of costs_with_experts, a share of
// 0.25 and one layer a chunk, the F&B pass runs four phases:
//   F.attention 10 - 4 - 2 = 4 beside B.combine 2.5: max(4 + 0.625, 2.5) = 4.625
//   B.experts 5 beside F.dispatch 1.5:                max(5 + 0.375, 1.5) = 5.375
//   F.experts 2 beside B.dispatch 6 - 2.5 = 3.5:      max(2 + 0.875, 3.5) = 3.5
//   B.attention 21 - 6 - 5 = 10 beside F.combine 2.5: max(10 + 0.625, 2.5) = 10.625
// 24.125 ms, against 31 one after another and DualPipe's rule's
// max(4 + 2 + 10 + 5 + 0.25 x 10, 10) = 23.5.
TEST(Combined1F1B, TheFandBPassTakesFourPhases) {
  const PassTimes t = costs_with_experts().layer;
  EXPECT_NEAR(combined_fb_time(t, t, 0.25), 0.024125, 1e-15);
  EXPECT_NEAR(fb_time(t, t, 0.25), 0.0235, 1e-15);
  EXPECT_NEAR(pair_time(Schedule::combined_1f1b, t, t, 0.25), 0.024125, 1e-15);
  EXPECT_NEAR(pair_time(Schedule::dualpipe, t, t, 0.25), 0.0235, 1e-15);
  // Without all-to-alls the two passes run one after the other.
  PassTimes dense{0.010, 0.021};
  EXPECT_DOUBLE_EQ(combined_fb_time(dense, dense, 0.25), 0.031);
  // All communication: the four collectives one after another.
  PassTimes comm{0.004, 0.006, 0, 0.004, 0.006, 0.004, 0.006, 0, 0, 0, 0.0015, 0.0025};
  EXPECT_DOUBLE_EQ(combined_fb_time(comm, comm, 0.25), 0.010);
}

// Expectation: the checks name what combined 1F1B needs, as Megatron-Core does.
TEST(Combined1F1B, TheChecksSayWhatItNeeds) {
  const auto errors_of = [](const std::string& text) -> std::string {
    try {
      (void)models::scenario::load_scenario_text(text, "bad.yaml", testing::kShipped);
    } catch (const models::scenario::ScenarioError& e) {
      std::string all;
      for (const auto& d : e.diagnostics().all()) all += d.key + ": " + d.message + "\n";
      return all;
    }
    return "";
  };
  EXPECT_NE(errors_of("cluster: {preset: llama3-like, gpus: 16}\n"
                      "model: {preset: llama3-8b}\n"
                      "parallelism: {tp: 8, pp: 2, virtual_stages: 2, global_batch: 64, "
                      "schedule: combined-1f1b}\n")
                .find("needs an MoE model with ep > 1"),
            std::string::npos);
  EXPECT_NE(
      errors_of("cluster: {preset: llama3-like, gpus: 16}\n"
                "model: {preset: qwen3-30b-a3b}\n"
                "parallelism: {tp: 1, ep: 8, pp: 2, global_batch: 64, schedule: combined-1f1b}\n")
          .find("parallelism.schedule: combined-1f1b with pp > 1 extends the interleaved"),
      std::string::npos);
  EXPECT_EQ(errors_of("cluster: {preset: llama3-like, gpus: 16}\n"
                      "model: {preset: qwen3-30b-a3b}\n"
                      "parallelism: {tp: 1, ep: 8, pp: 2, virtual_stages: 2, global_batch: 64, "
                      "schedule: combined-1f1b}\n"),
            "");
}

// Expectation: on an MoE layout whose all-to-alls leave the node, combined 1F1B
// hides part of what the interleaved schedule leaves exposed, says how much, and
// holds one more forward's activations; the step engine plays the same step.
TEST(Combined1F1B, HidesTheAllToAllsHoldsOneMoreForwardAndTheEnginesAgree) {
  const auto s = testing::mixtral_ep8("combined-1f1b");
  ASSERT_GT(models::group_span(models::GroupKind::ep, s).nodes, 1);
  auto plain = s;
  plain.parallelism.schedule = Schedule::interleaved;
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const StepReport paired = estimate(s, h100);
  const StepReport alone = estimate(plain, h100);
  EXPECT_LT(paired.step_time_s, alone.step_time_s);
  EXPECT_GT(paired.moe.a2a_hidden_s, 0);
  EXPECT_LE(paired.moe.a2a_hidden_s, paired.moe.a2a_exposed_unpaired_s);
  const auto in_flight = [](const models::scenario::Scenario& x) {
    return models::forwards_in_flight(x, 0);
  };
  EXPECT_EQ(in_flight(s), in_flight(plain) + 1);
  EXPECT_GT(paired.memory.activations, alone.memory.activations);
  const double engine = testing::run_in_child(s, testing::options(), h100).step_time_s;
  EXPECT_NEAR(engine / paired.step_time_s, 1, 0.02)
      << engine << " s against " << paired.step_time_s << " s";
}

}  // namespace
}  // namespace myriad::sim
