// Placing a scenario's pipeline (sim/stage_split): the unrolled graph Baechi's
// placers see, the split each makes of it, and the time-balanced split against
// brute force.
#include "sim/stage_split/pipeline_split.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

// Llama 3 8B on 4 stages: its 128k vocabulary makes the head cost about one
// and a half layers, the embedding a tenth of one.
models::scenario::Scenario llama8b(const std::string& extra = "") {
  return models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 64" +
          extra + "}\n",
      "pipeline_split_test.yaml", kShipped);
}

double pass(const PipelineGraph& g, int k) { return g.forward_s[k] + g.backward_s[k]; }

// The slowest stage of a split, as the balanced split counts stage time.
double slowest(const PipelineGraph& g, const std::vector<int>& split) {
  double worst = 0;
  for (int k = 0; k < static_cast<int>(split.size()); ++k) {
    double t = split[k] * pass(g, 1);
    if (k == 0) t += pass(g, 0);
    if (k + 1 == static_cast<int>(split.size())) t += pass(g, g.units() - 1);
    worst = std::max(worst, t);
  }
  return worst;
}

TEST(PipelineGraph, UnrollsEveryUnitForwardAndBackwardPerMicroBatch) {
  const auto s = llama8b();
  const PipelineGraph g = pipeline_graph(s, h100());
  const StageCosts c = stage_costs(s, h100());
  ASSERT_EQ(g.layers, 32);
  EXPECT_EQ(g.micro_batches_in_step, 32);  // 64 sequences over 2 replicas
  EXPECT_EQ(g.micro_batches, 32);          // 32 x 2 x 34 ops is under kPipelineGraphMaxOps
  EXPECT_EQ(g.graph.nodes.size(), 32U * 2 * 34);
  // Per micro-batch: forward and backward chains of 33 edges each, and 34 stashes.
  EXPECT_EQ(g.graph.edges.size(), 32U * (2 * 33 + 34));
  EXPECT_EQ(g.graph.groups(), 34);
  EXPECT_DOUBLE_EQ(g.graph.nodes[g.op(3, false, 0)].compute_s, c.embedding.forward);
  EXPECT_DOUBLE_EQ(g.graph.nodes[g.op(3, true, 5)].compute_s, c.layer.backward);
  EXPECT_DOUBLE_EQ(g.graph.nodes[g.op(3, true, 33)].compute_s, c.head.backward);
  EXPECT_EQ(g.graph.nodes[g.op(7, true, 12)].group, 12);
  EXPECT_EQ(g.graph.nodes[g.op(7, true, 12)].name, "layer 11 backward of micro-batch 7");
  // The head's forward hands its gradient to its backward, which goes back down.
  EXPECT_GT(pass(g, 33), 1.3 * pass(g, 1));
  EXPECT_LT(pass(g, 0), 0.15 * pass(g, 1));
  // A transfer priced as the analytic engine prices the pipeline send.
  EXPECT_NEAR(g.devices.transfer_s(g.transfer_bytes), c.pp_transfer.time_s,
              1e-9 * c.pp_transfer.time_s);
  EXPECT_EQ(g.devices.count, 4);
  // A group's memory is its unit's, charged once.
  double group_bytes = 0;
  for (const auto& node : g.graph.nodes) group_bytes += node.group == 5 ? node.memory_bytes : 0;
  EXPECT_DOUBLE_EQ(group_bytes, g.unit_bytes[5]);
  EXPECT_NO_THROW(g.graph.validate());
}

TEST(PipelineGraph, PiecesAddUpToTheStagesMemory) {
  const auto s = llama8b(", stage_layers: [6, 10, 10, 6]");
  const models::StepPlan plan = models::plan_step(s);
  const PipelineGraph g = pipeline_graph(s, h100());
  const auto& p = g.pieces;
  const double first = 6 * (p.layer.states + p.layer.activations * g.in_flight[0]) +
                       p.embedding.states + p.embedding.activations * g.in_flight[0];
  const double middle = 10 * (p.layer.states + p.layer.activations * g.in_flight[2]);
  const double last =
      6 * (p.layer.states + p.layer.activations) + p.head.states + p.head.activations;
  EXPECT_NEAR(models::stage_memory(s, plan, 0).total(), first, 1e-9 * first);
  EXPECT_NEAR(models::stage_memory(s, plan, 2).total(), middle, 1e-9 * middle);
  EXPECT_NEAR(models::stage_memory(s, plan, 3).total(), last, 1e-9 * last);
  EXPECT_DOUBLE_EQ(
      models::memory_per_gpu(s, plan).total(),
      std::max({models::stage_memory(s, plan, 0).total(), models::stage_memory(s, plan, 1).total(),
                models::stage_memory(s, plan, 2).total(),
                models::stage_memory(s, plan, 3).total()}));
}

// Expectation, by enumeration: the balanced split's slowest stage is the least
// over every split of 32 layers into 4 stages of at least one layer each.
TEST(PlaceStages, BalancedIsTheBestContiguousSplit) {
  const auto s = llama8b();
  const PipelineGraph g = pipeline_graph(s, h100());
  const StagePlacement b = place_stages(s, g, StageSplit::balanced);
  ASSERT_EQ(b.stage_layers.size(), 4U);
  EXPECT_EQ(std::accumulate(b.stage_layers.begin(), b.stage_layers.end(), 0), 32);
  double least = 1e300;
  for (int a = 1; a <= 29; ++a) {
    for (int c = 1; a + c <= 30; ++c) {
      for (int d = 1; a + c + d <= 31; ++d) {
        least = std::min(least, slowest(g, {a, c, d, 32 - a - c - d}));
      }
    }
  }
  EXPECT_DOUBLE_EQ(slowest(g, b.stage_layers), least);
  // The heavy head takes layers off the last stage.
  EXPECT_LT(b.stage_layers.back(), 8);
  const StagePlacement u = place_stages(s, g, StageSplit::uniform);
  EXPECT_EQ(u.stage_layers, (std::vector<int>{8, 8, 8, 8}));
  EXPECT_LT(slowest(g, b.stage_layers), slowest(g, u.stage_layers));
  // And both engines see the step shorten.
  const double balanced_step = estimate(with_stage_layers(s, b.stage_layers), h100()).step_time_s;
  const double uniform_step = estimate(s, h100()).step_time_s;
  EXPECT_LT(balanced_step, 0.97 * uniform_step);
}

// Every placer gives a whole pipeline (one count a stage, multiples of the
// virtual stages, summing to the layers), the same twice.
TEST(PlaceStages, EveryAlgorithmGivesAPipeline) {
  for (const std::string extra : {"", ", virtual_stages: 2"}) {
    const auto s = llama8b(extra);
    const PipelineGraph g = pipeline_graph(s, h100());
    const int v = s.parallelism.virtual_stages;
    for (const StageSplit a : kStageAlgorithms) {
      const StagePlacement p = place_stages(s, g, a);
      SCOPED_TRACE(std::string(stage_split_name(a)) + extra + ": " + p.note);
      EXPECT_EQ(p.graph.device.size(), g.graph.nodes.size());
      EXPECT_EQ(p.stages_used + p.stages_added, 4);
      ASSERT_EQ(p.stage_layers.size(), 4U);
      EXPECT_EQ(std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), 0), 32);
      for (const int n : p.stage_layers) {
        EXPECT_GE(n, v);
        EXPECT_EQ(n % v, 0);
      }
      EXPECT_NO_THROW((void)estimate(with_stage_layers(s, p.stage_layers), h100()));
      const StagePlacement again = place_stages(s, g, a);
      EXPECT_EQ(again.stage_layers, p.stage_layers);
      EXPECT_EQ(again.graph.makespan_s, p.graph.makespan_s);
    }
  }
}

// m-TOPO balances memory, not time: on the 8B model it fills the stages in
// order up to a quarter of the graph's memory each, the embedding's vocabulary
// rows take a layer's room on the first, and the last takes what is left, head
// and all: 7 8 8 9, slower than uniform. m-ETF and m-SCT keep every unit on one
// stage, which a free stage beside the input always starts sooner; completed by
// halving the slowest stage (32 -> 16 16 -> 16 8 8 -> 8 8 8 8) that is the
// uniform split. (Baechi minimises one pass's makespan; a pipeline wants its
// stages balanced.)
TEST(PlaceStages, BaechisPlacersOnAPipelineThatFitsOneStage) {
  const auto s = llama8b();
  const PipelineGraph g = pipeline_graph(s, h100());
  const StagePlacement topo = place_stages(s, g, StageSplit::m_topo);
  ASSERT_EQ(topo.stage_layers.size(), 4U) << topo.note;
  EXPECT_TRUE(topo.contiguous);
  EXPECT_EQ(topo.layers_moved, 0);
  EXPECT_EQ(topo.stage_layers, (std::vector<int>{7, 8, 8, 9}));
  for (int k = 0; k < 3; ++k) {
    EXPECT_LE(topo.graph.memory_bytes[k], topo.graph.memory_bytes[3]) << k;
  }
  for (const StageSplit a : {StageSplit::m_etf, StageSplit::m_sct}) {
    const StagePlacement p = place_stages(s, g, a);
    EXPECT_EQ(p.stages_used, 1) << p.note;
    EXPECT_EQ(p.stages_added, 3) << p.note;
    EXPECT_EQ(p.stage_layers, (std::vector<int>{8, 8, 8, 8})) << p.note;
    EXPECT_NE(p.note.find("completed by splitting the slowest stage 3 times"), std::string::npos)
        << p.note;
    // One stage runs the unrolled graph serially: the sum of its compute.
    double compute = 0;
    for (const auto& node : g.graph.nodes) compute += node.compute_s;
    EXPECT_NEAR(p.graph.makespan_s, compute, 1e-9 * compute);
  }
  // The graph plays the uniform split about as the analytic engine's step does
  // (which adds the data-parallel reduction and the optimizer).
  const StagePlacement u = place_stages(s, g, StageSplit::uniform);
  const double step = estimate(s, h100()).step_time_s;
  EXPECT_GT(u.graph.makespan_s, 0.9 * step);
  EXPECT_LT(u.graph.makespan_s, step);
}

// Where memory binds, m-ETF must spread: the 8B model's graph holds 19 GB a
// GPU over its four stages; with 5.5 GB usable a GPU it needs all four.
TEST(PlaceStages, MemoryMakesEtfSpread) {
  auto s = llama8b();
  const double reserved = estimate(s, h100()).memory_reserved;
  s.cluster.gpu.hbm_bytes = reserved + 5.5e9;
  const PipelineGraph g = pipeline_graph(s, h100());
  const StagePlacement p = place_stages(s, g, StageSplit::m_etf);
  EXPECT_EQ(p.stages_used, 4) << p.note;
  EXPECT_EQ(p.stages_added, 0) << p.note;
  ASSERT_EQ(p.stage_layers.size(), 4U) << p.note;
  EXPECT_EQ(std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), 0), 32);
}

// Memory decides where time cannot: with the GPU's memory cut to what the
// uniform split's fullest stage (the first: four micro-batches in flight) cannot
// hold, the balanced split moves layers off it and fits.
TEST(PlaceStages, BalancedKeepsEveryStageWithinMemory) {
  const auto base = llama8b(", recompute: none");
  const double first = estimate(base, h100()).memory_needed();
  const double reserved = estimate(base, h100()).memory_reserved;
  auto s = base;
  s.cluster.gpu.hbm_bytes = reserved + 0.93 * first;
  ASSERT_FALSE(estimate(s, h100()).fits);
  const PipelineGraph g = pipeline_graph(s, h100());
  const StagePlacement b = place_stages(s, g, StageSplit::balanced);
  ASSERT_EQ(b.stage_layers.size(), 4U) << b.note;
  EXPECT_TRUE(estimate(with_stage_layers(s, b.stage_layers), h100()).fits) << b.note;
  EXPECT_LT(b.stage_layers.front(), 8);
}

// Expectation: a split given to a scenario whose stages come from the embedding and
// the loss counted as layers, or from a layout string, replaces them (they would
// otherwise decide the chunks and the split would be priced as nothing), and its
// own split leaves it as it is.
TEST(PlaceStages, AGivenSplitReplacesTheOtherWaysOfSplitting) {
  const std::string base =
      "cluster: {preset: llama3-like, gpus: 256}\nmodel: {preset: llama3-405b}\n"
      "parallelism: {tp: 8, pp: 4, virtual_stages: 2, global_batch: 64, ";
  for (const std::string uneven : {"embedding_as_layer: true, loss_as_layer: true}\n",
                                   "pipeline_layout: \"Et*15|(t*16|)*6t*15L\"}\n"}) {
    const auto s = models::scenario::load_scenario_text(base + uneven, "uneven.yaml", kShipped);
    const std::vector<int> own = own_stage_layers(s);
    EXPECT_EQ(own, (std::vector<int>{31, 32, 32, 31})) << uneven;
    const auto same = with_stage_layers(s, own);
    EXPECT_EQ(same.parallelism.pipeline_layout, s.parallelism.pipeline_layout);
    EXPECT_EQ(same.parallelism.embedding_as_layer, s.parallelism.embedding_as_layer);
    const auto even = with_stage_layers(s, {30, 32, 32, 32});
    EXPECT_TRUE(even.parallelism.pipeline_layout.empty());
    EXPECT_FALSE(even.parallelism.embedding_as_layer || even.parallelism.loss_as_layer);
    const models::StepPlan plan = models::plan_step(even);
    EXPECT_EQ(plan.layers_by_chunk[0][0], 15) << uneven;
    EXPECT_EQ(plan.layers_by_chunk[1][0], 16) << uneven;
    EXPECT_EQ(plan.layers_by_stage, (std::vector<int>{30, 32, 32, 32}));
  }
}

TEST(PlaceStages, NamesAndErrors) {
  EXPECT_EQ(parse_stage_algorithm("M-SCT"), StageSplit::m_sct);
  EXPECT_EQ(parse_stage_algorithm("balanced"), StageSplit::balanced);
  EXPECT_FALSE(parse_stage_algorithm("m-foo"));
  const auto s = llama8b(", stage_layers: [6, 10, 10, 6]");
  const auto w = with_stage_layers(s, {8, 8, 8, 8});
  EXPECT_EQ(models::stage_layers(w, 0), 8);
  auto flat = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, global_batch: 64}\n",
      "flat.yaml", kShipped);
  try {
    (void)pipeline_graph(flat, h100());
    ADD_FAILURE() << "pp 1 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.pp is 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim
