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

// The same passes and transfers as a step program (no data-parallel traffic, no
// optimizer), played by the evaluator: the same step, blocking or let go.
TEST(PipelineMakespan, IsWhatTheEvaluatorPlays) {
  for (const auto& [p, v, m, let_go] : {std::tuple{4, 2, 8, false}, std::tuple{4, 2, 8, true},
                                        std::tuple{2, 4, 8, true}, std::tuple{8, 4, 16, false}}) {
    const auto text = fmt::format(
        "cluster: {{preset: llama3-like, gpus: {}}}\n"
        "model: {{preset: llama3-8b, seq_length: 4096}}\n"
        "parallelism: {{tp: 8, pp: {}, virtual_stages: {}, micro_batch: 1, global_batch: {}}}\n"
        "overlap: {{pp: {}}}\n",
        8 * p, p, v, m, let_go);
    const auto s = models::scenario::load_scenario_text(text, "pipeline.yaml", testing::kShipped);
    StageCosts costs;
    costs.layer = {0.010, 0.021};
    costs.embedding = {0.004, 0.009};
    costs.head = {0.023, 0.047};
    costs.pp_transfer.time_s = 0.0017;
    const StepProgram program = build_step_program(s, costs, 0);
    std::vector<double> d(static_cast<std::size_t>(2 * p * v));
    for (int stage = 0; stage < p; ++stage) {
      for (int c = 0; c < v; ++c) {
        for (const bool forward : {true, false}) {
          d[static_cast<std::size_t>((stage * 2 + (forward ? 0 : 1)) * v + c)] =
              program.pass_time(stage, {forward, c, 0});
        }
      }
    }
    const double swept =
        pipeline_makespan(models::schedule_graph(p, v, m), d, {costs.pp_transfer.time_s, let_go});
    EXPECT_NEAR(swept, evaluate_program(program).step_time_s, 1e-12) << text;
  }
}

}  // namespace
}  // namespace myriad::sim
