// The interleaved pipeline's longest path (sim/analytic/pipeline_makespan.hpp)
// over the schedule's graph (models::schedule_graph): the graph against the
// schedule, hand-worked steps, and the step program's evaluator, which plays the
// same passes as events.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "models/plan/pipeline_schedule.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/pipeline_makespan.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/slot_durations.hpp"

namespace myriad::sim {
namespace {

// Every pass once; each after its input; each stage's passes in its schedule's order.
TEST(ScheduleGraph, HoldsEveryPassOnceAfterItsInputInEachStagesOrder) {
  for (const auto& [p, v, m] : {std::tuple{1, 1, 3}, std::tuple{4, 1, 6}, std::tuple{4, 2, 8},
                                std::tuple{8, 6, 32}, std::tuple{2, 3, 4}}) {
    const models::ScheduleGraph g = models::schedule_graph(p, v, m);
    ASSERT_EQ(g.nodes.size(), static_cast<std::size_t>(2 * p * v * m));
    std::vector<std::vector<int>> slots(static_cast<std::size_t>(p));
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const auto& n = g.nodes[i];
      EXPECT_LT(n.input, static_cast<int>(i));
      slots[static_cast<std::size_t>(n.stage)].push_back(n.slot);
    }
    for (int s = 0; s < p; ++s) {
      std::vector<int> expected;
      for (const auto& t : models::pipeline_order(p, v, m, s)) {
        expected.push_back((s * 2 + (t.forward ? 0 : 1)) * v + t.chunk);
      }
      EXPECT_EQ(slots[static_cast<std::size_t>(s)], expected) << p << " " << v << " " << m;
    }
  }
}

// The nodes between roles_first_end and roles_last_begin have no role, and the
// two bounds sit on a first forward and a last backward.
TEST(ScheduleGraph, BracketsTheNodesWithoutARole) {
  for (const auto& [p, v, m] : {std::tuple{1, 1, 3}, std::tuple{4, 1, 6}, std::tuple{4, 2, 8},
                                std::tuple{8, 6, 32}, std::tuple{2, 3, 4}}) {
    const models::ScheduleGraph g = models::schedule_graph(p, v, m);
    ASSERT_GT(g.roles_first_end, 0U);
    ASSERT_LT(g.roles_last_begin, g.nodes.size());
    EXPECT_EQ(g.role[g.roles_first_end - 1], models::ScheduleGraph::kFirstForward);
    EXPECT_EQ(g.role[g.roles_last_begin], models::ScheduleGraph::kLastBackward);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      if (i >= g.roles_first_end) {
        EXPECT_NE(g.role[i], models::ScheduleGraph::kFirstForward) << i;
      }
      if (i < g.roles_last_begin) {
        EXPECT_NE(g.role[i], models::ScheduleGraph::kLastBackward) << i;
      }
    }
  }
}

// Chunk passes of f and b, the first stage's first chunk with the embedding
// (ef, eb) and the last stage's last chunk with the head (hf, hb).
std::vector<double> durations(int p, int v, double f, double b, double ef, double eb, double hf,
                              double hb) {
  std::vector<double> d(static_cast<std::size_t>(2 * p * v));
  for (int s = 0; s < p; ++s) {
    for (int c = 0; c < v; ++c) {
      const bool first = s == 0 && c == 0;
      const bool last = s == p - 1 && c == v - 1;
      d[static_cast<std::size_t>(2 * s * v + c)] = f + (first ? ef : 0) + (last ? hf : 0);
      d[static_cast<std::size_t>((2 * s + 1) * v + c)] = b + (first ? eb : 0) + (last ? hb : 0);
    }
  }
  return d;
}

// Alike chunks: (m v + p - 1) chunk passes, the textbook interleaved bubble.
TEST(PipelineMakespan, AlikeChunksTakeTheTextbookBubble) {
  for (const auto& [p, v, m] : {std::tuple{4, 2, 8}, std::tuple{8, 6, 32}, std::tuple{4, 4, 4}}) {
    const double step =
        pipeline_makespan(models::schedule_graph(p, v, m), durations(p, v, 1, 2, 0, 0, 0, 0), {});
    EXPECT_DOUBLE_EQ(step, (m * v + p - 1) * 3.0) << p << " " << v << " " << m;
  }
}

// 4 stages of 2 one-layer chunks (f 1, b 2), 8 micro-batches, worked out pass by
// pass: a head as heavy as a layer paces the last stage (m x 9 + 3 x 3 = 81, the
// stage bound); an embedding as heavy leaves the first stage no idle time
// (8 x 9 = 72); both, and neither stage bound holds: 93 (the first stage waits
// 21 in all, for the last stage's heavy chunk and its own first chunk's outputs).
TEST(PipelineMakespan, HeavyEndsAsWorkedOutPassByPass) {
  const auto g = models::schedule_graph(4, 2, 8);
  EXPECT_DOUBLE_EQ(pipeline_makespan(g, durations(4, 2, 1, 2, 0, 0, 1, 2), {}), 81);
  EXPECT_DOUBLE_EQ(pipeline_makespan(g, durations(4, 2, 1, 2, 1, 2, 0, 0), {}), 72);
  EXPECT_DOUBLE_EQ(pipeline_makespan(g, durations(4, 2, 1, 2, 1, 2, 1, 2), {}), 93);
}

// DualPipe on its graph with passes of F = 1, B = 2 (whole), W = 1 and an F&B
// pass of F + B (the report's setting, compute alone): every rank's m F and m B,
// and the bubble (pp/2 - 1)(F&B + B - 3W) of DualPipe's README table; 1F1B on
// the same pp stages takes (pp - 1)(F + B).
TEST(PipelineMakespan, DualPipeTakesItsTablesBubble) {
  const double f = 1;
  const double b = 2;
  const double w = 1;
  const double fb = f + b;
  for (const auto& [pp, m] : {std::pair{4, 8}, std::pair{8, 16}, std::pair{8, 20},
                              std::pair{16, 32}, std::pair{16, 64}}) {
    const auto g = models::schedule_graph(models::scenario::Schedule::dualpipe, pp, 1, m);
    std::vector<double> d(static_cast<std::size_t>(g.slots()), 0.0);
    for (int s = 0; s < pp; ++s) {
      for (int c = 0; c < 2; ++c) {
        d[static_cast<std::size_t>(g.slot(s, {true, c, 0}))] = f;
        d[static_cast<std::size_t>(g.slot(s, {false, c, 0}))] = b;
        d[static_cast<std::size_t>(g.slot(s, {false, c, 0, models::PassPart::input}))] = b - w;
        d[static_cast<std::size_t>(g.slot(s, {false, c, 0, models::PassPart::weight}))] = w;
        d[static_cast<std::size_t>(g.pair_slot(s, c, 1 - c))] = fb;
      }
    }
    const double work = m * (f + b);
    EXPECT_NEAR(pipeline_makespan(g, d, {}) - work, (pp / 2 - 1) * (fb + b - 3 * w), 1e-12)
        << pp << " " << m;
    EXPECT_NEAR(pipeline_makespan(models::schedule_graph(pp, 1, m),
                                  durations(pp, 1, f, b, 0, 0, 0, 0), {}) -
                    work,
                (pp - 1) * (f + b), 1e-12);
  }
}

// ZB-H1 with passes of f (forward), b (input gradients) and w (weight
// gradients): the bubble is (p - 1)(f + b - w) where 1F1B's, with the whole
// backward b + w, is (p - 1)(f + b + w) (Qi et al. 2024, s3.1; DualPipe's table
// writes it (p - 1)(F + B - 2W) with B = b + w).
TEST(PipelineMakespan, ZbH1TakesThePapersBubble) {
  for (const auto& [p, m] :
       {std::pair{4, 8}, std::pair{4, 12}, std::pair{8, 16}, std::pair{6, 24}}) {
    for (const auto& [f, b, w] :
         {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.0, 1.2, 0.8}, std::tuple{1.0, 1.5, 0.7}}) {
      const auto zb = models::schedule_graph(models::scenario::Schedule::zb_h1, p, 1, m);
      ASSERT_EQ(zb.slots(), 4 * p);
      ASSERT_EQ(zb.nodes.size(), static_cast<std::size_t>(3 * p * m));
      std::vector<double> d(static_cast<std::size_t>(zb.slots()));
      for (int s = 0; s < p; ++s) {
        d[static_cast<std::size_t>(zb.slot(s, {true, 0, 0}))] = f;
        d[static_cast<std::size_t>(zb.slot(s, {false, 0, 0}))] = b + w;
        d[static_cast<std::size_t>(zb.slot(s, {false, 0, 0, models::PassPart::input}))] = b;
        d[static_cast<std::size_t>(zb.slot(s, {false, 0, 0, models::PassPart::weight}))] = w;
      }
      const double work = m * (f + b + w);
      EXPECT_NEAR(pipeline_makespan(zb, d, {}) - work, (p - 1) * (f + b - w), 1e-12)
          << p << " " << m << " " << f << " " << b << " " << w;
      const auto one_f_one_b = models::schedule_graph(p, 1, m);
      EXPECT_NEAR(pipeline_makespan(one_f_one_b, durations(p, 1, f, b + w, 0, 0, 0, 0), {}) - work,
                  (p - 1) * (f + b + w), 1e-12);
    }
  }
}

// The same passes and transfers as a step program (no data-parallel traffic, no
// optimizer), played by the evaluator: the same step, blocking or let go.
TEST(PipelineMakespan, IsWhatTheEvaluatorPlays) {
  for (const auto& [p, v, m, let_go, schedule] :
       {std::tuple{4, 2, 8, false, ""}, std::tuple{4, 2, 8, true, ""},
        std::tuple{2, 4, 8, true, ""}, std::tuple{8, 4, 16, false, ""},
        std::tuple{4, 1, 8, false, ", schedule: zb-h1"},
        std::tuple{8, 1, 16, true, ", schedule: zb-h1"},
        std::tuple{4, 1, 8, false, ", schedule: dualpipe"},
        std::tuple{8, 1, 20, true, ", schedule: dualpipe"}}) {
    const auto text = fmt::format(
        "cluster: {{preset: llama3-like, gpus: {}}}\n"
        "model: {{preset: llama3-8b, seq_length: 4096}}\n"
        "parallelism: {{tp: 8, pp: {}, virtual_stages: {}, micro_batch: 1, global_batch: {}{}}}\n"
        "overlap: {{pp: {}}}\n",
        8 * p, p, v, m, schedule, let_go);
    const auto s = models::scenario::load_scenario_text(text, "pipeline.yaml", testing::kShipped);
    StageCosts costs;
    costs.layer = {0.010, 0.021, 0.008, 0.004, 0.006, 0.003, 0.004};
    costs.embedding = {0.004, 0.009};
    costs.head = {0.023, 0.047};
    costs.pp_transfer.time_s = 0.0017;
    const StepProgram program = build_step_program(s, costs, 0);
    const auto g = models::schedule_graph(s.parallelism.schedule, p, program.v, m);
    const std::vector<double> d = testing::slot_durations(program, g);
    const double swept = pipeline_makespan(g, d, {costs.pp_transfer.time_s, let_go});
    EXPECT_NEAR(swept, evaluate_program(program).step_time_s, 1e-12) << text;
  }
}

// A stage's data-parallel stream of the kind dp_stream describes: gathers of
// 0.012 s, reductions of 0.018 s over the stage's parameters, each with 50 us of
// latency.
StageCosts costs_with_dp(double buckets) {
  StageCosts costs;
  costs.layer = {0.010, 0.021};
  costs.embedding = {0.004, 0.009};
  costs.head = {0.023, 0.047};
  costs.pp_transfer.time_s = 0.0017;
  costs.dp_comms = {{"dp.grads", models::CollectiveKind::reduce_scatter, models::GroupKind::dp, 1},
                    {"dp.params", models::CollectiveKind::all_gather, models::GroupKind::dp, 1}};
  costs.dp_costs = {{0.018, 5e-5}, {0.012, 5e-5}};
  costs.dp_buckets = buckets;
  return costs;
}

// Expectation: no data-parallel traffic, the plain sweep.
TEST(PipelineWithDp, WithoutTrafficIsThePipeline) {
  const auto g = models::schedule_graph(4, 2, 8);
  const auto d = durations(4, 2, 1, 2, 1, 2, 1, 2);
  const DpPlay play = pipeline_with_dp(g, d, {0.1, false}, DpStream{}, 0.3);
  EXPECT_DOUBLE_EQ(play.end, pipeline_makespan(g, d, {0.1, false}));
  EXPECT_DOUBLE_EQ(play.waited, 0);
  EXPECT_DOUBLE_EQ(play.slowed, 0);
}

// Expectation: worked by hand on 2 stages of 2 chunks, 2 micro-batches, f 1 and
// b 2 a pass, no transfers or reductions. The first stage runs F0 F0 F1 F1 B1 B1
// B0 B0 (chunk, micro-batch by micro-batch), the second F0 F0 F1 B1 F1 B1 B0 B0:
// 15 without data-parallel traffic. Chunk 0's parameters take 0.5 before
// anything, chunk 1's until 0.5 + 10: the first stage's first F1 waits from 2.5
// to 10.5 (the second stage's after it), and the rest moves by 8.5: 23.5. With
// 20 % of the rate taken while the link runs (0.5 to 10.5), the first two
// forwards take 1.25 each: F1 still waits for 10.5, and the step is the same.
TEST(PipelineWithDp, AChunksFirstForwardWaitsForItsParameters) {
  const auto g = models::schedule_graph(2, 2, 2);
  const auto d = durations(2, 2, 1, 2, 0, 0, 0, 0);
  ASSERT_DOUBLE_EQ(pipeline_makespan(g, d, {}), 15);
  DpStream dp;
  dp.first_gather = {0.25, 0.5};
  dp.chunk_gather = {0.5, 10};
  const DpPlay play = pipeline_with_dp(g, d, {}, dp, 0);
  EXPECT_DOUBLE_EQ(play.end, 23.5);
  EXPECT_EQ(play.stage, 0);
  EXPECT_DOUBLE_EQ(play.waited, 0.5 + 8);
  EXPECT_DOUBLE_EQ(play.slowed, 0);
  const DpPlay slowed = pipeline_with_dp(g, d, {}, dp, 0.2);
  EXPECT_DOUBLE_EQ(slowed.end, 23.5);
  EXPECT_DOUBLE_EQ(slowed.waited, 0.5 + 7.5);
  EXPECT_DOUBLE_EQ(slowed.slowed, 0.5);
}

// Expectation: the sweep runs the plain loop between the roles, once every stage
// is past the gathers (each chunk's first forward waits for its parameters, so
// by the last of them every stage is). The same graph with its roles bracketing
// every node, the loop that checks each pass throughout, gives the same play, bit
// for bit, with gathers that slow the warm-up's passes or without.
TEST(PipelineWithDp, ThePlainMiddleIsTheCheckedSweep) {
  for (const auto& [p, v, m] : {std::tuple{4, 2, 8}, std::tuple{8, 6, 32}, std::tuple{4, 1, 16}}) {
    const auto g = models::schedule_graph(p, v, m);
    models::ScheduleGraph checked = g;
    checked.roles_first_end = g.nodes.size();
    checked.roles_last_begin = g.nodes.size();
    checked.period = 0;  // every round played
    const auto d = durations(p, v, 1, 2, 0.5, 1, 0.7, 1.4);
    DpStream dp;
    dp.buckets = 3;
    dp.first_gather = {0.1, 2};
    dp.first_rest = {0.1, 40};  // longer than the warm-up's forwards
    dp.chunk_gather = {0.1, 3};
    dp.early_reduce = {0.1, 5};
    dp.last_reduce = {0.1, 1};
    for (const double share : {0.0, 0.25}) {
      const DpPlay fast = pipeline_with_dp(g, d, {0.05, true}, dp, share);
      const DpPlay slow = pipeline_with_dp(checked, d, {0.05, true}, dp, share);
      // To rounding: the fast sweep shifts the rounds that repeat (ScheduleRounds.*).
      EXPECT_NEAR(fast.end, slow.end, 1e-12 * slow.end)
          << p << " " << v << " " << m << " " << share;
      EXPECT_NEAR(fast.waited, slow.waited, 1e-12 * slow.end);
      EXPECT_NEAR(fast.slowed, slow.slowed, 1e-12 * slow.end);
      if (share > 0) {
        EXPECT_GT(fast.slowed, 0);
      }
    }
  }
}

// Expectation: the same passes, transfers and data-parallel streams as a step
// program (no optimizer), played by the evaluator: the same step to 1e-12, with
// buckets or without, blocking or let go, with a share of the compute rate taken
// or none; under ZB-H1, each chunk's reductions from its last weight-gradient pass.
TEST(PipelineWithDp, IsWhatTheEvaluatorPlays) {
  for (const auto& [p, v, m, let_go, share, buckets, schedule] :
       {std::tuple{4, 2, 8, false, 0.0, 1.0, ""}, std::tuple{4, 2, 8, true, 0.2, 3.0, ""},
        std::tuple{2, 4, 8, true, 0.35, 4.0, ""}, std::tuple{8, 4, 16, false, 0.2, 2.0, ""},
        std::tuple{4, 4, 4, false, 0.5, 6.0, ""},
        std::tuple{4, 1, 8, false, 0.2, 3.0, ", schedule: zb-h1"},
        std::tuple{8, 1, 16, true, 0.0, 1.0, ", schedule: zb-h1"},
        std::tuple{4, 1, 8, false, 0.2, 3.0, ", schedule: dualpipe"},
        std::tuple{8, 1, 16, true, 0.0, 1.0, ", schedule: dualpipe"}}) {
    const auto text = fmt::format(
        "cluster: {{preset: llama3-like, gpus: {}}}\n"
        "model: {{preset: llama3-8b, seq_length: 4096}}\n"
        "parallelism: {{tp: 8, pp: {}, virtual_stages: {}, micro_batch: 1, global_batch: {}, "
        "zero: 1{}}}\n"
        "overlap: {{pp: {}, dp: true}}\n",
        16 * p, p, v, 2 * m, schedule, let_go);
    const auto s = models::scenario::load_scenario_text(text, "pipeline.yaml", testing::kShipped);
    StageCosts costs = costs_with_dp(buckets);
    costs.layer.weight = 0.007;
    const StepProgram program = build_step_program(s, costs, share);
    ASSERT_EQ(program.m, m);
    const auto g = models::schedule_graph(s.parallelism.schedule, p, program.v, m);
    const std::vector<double> d = testing::slot_durations(program, g);
    const DpPlay play = pipeline_with_dp(g, d, {program.costs.pp_transfer.time_s, let_go},
                                         program.dp_stream(), share);
    const double evaluated = evaluate_program(program).step_time_s;
    EXPECT_NEAR(play.end, evaluated, 1e-12 * evaluated) << text << " share " << share;
    EXPECT_GT(play.end, pipeline_makespan(g, d, {program.costs.pp_transfer.time_s, let_go}));
  }
}

// Expectation: the stream's pieces: a chunk is 1/v of the stage's parameters;
// chunk 0's first bucket, its other buckets, the other chunks' whole, and the
// reductions' buckets but the last and the last; each pays its latency whole.
TEST(PipelineWithDp, TheStreamsPiecesPayTheirLatencyWhole) {
  const StageCosts c = costs_with_dp(4);
  const DpStream dp = dp_stream(c.dp_comms, c.dp_costs, 2, 4);
  EXPECT_DOUBLE_EQ(dp.first_gather.share, 0.125);
  EXPECT_DOUBLE_EQ(dp.first_rest.share, 0.375);
  EXPECT_DOUBLE_EQ(dp.chunk_gather.share, 0.5);
  EXPECT_DOUBLE_EQ(dp.early_reduce.share, 0.375);
  EXPECT_DOUBLE_EQ(dp.last_reduce.share, 0.125);
  EXPECT_DOUBLE_EQ(dp.first_gather.seconds, 5e-5 + 0.125 * (0.012 - 5e-5));
  EXPECT_DOUBLE_EQ(dp.early_reduce.seconds, 5e-5 + 0.375 * (0.018 - 5e-5));
  EXPECT_DOUBLE_EQ(dp_collectives_time(c.dp_comms, c.dp_costs, 0, true), 0);
}

}  // namespace
}  // namespace myriad::sim
