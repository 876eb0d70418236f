// The pipeline at op grain (sim/stage_split/op_grain): a layer's ops as pieces
// that add up to the layer, placed by Baechi's placers or by a layer split.
#include "sim/stage_split/op_grain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "models/scenario/loader.hpp"
#include "models/transformer/layer_program.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

models::scenario::Scenario llama8b(const std::string& parallelism_extra = "",
                                   const std::string& training = "") {
  return models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 64" +
          parallelism_extra + "}\n" + training,
      "op_grain_test.yaml", kShipped);
}

// Per unit, the sum of its pieces' `values`.
std::vector<double> per_unit(const OpGrainGraph& g, const std::vector<double>& values) {
  std::vector<double> sum(g.layers + 2, 0);
  for (int k = 0; k < g.pieces(); ++k) sum[g.piece_unit[k]] += values[k];
  return sum;
}

void expect_pieces_add_up(const models::scenario::Scenario& s, const char* what) {
  const PipelineGraph units = pipeline_units(s, h100());
  const OpGrainGraph g = op_grain_graph(s, h100(), units);
  const auto forward = per_unit(g, g.forward_s);
  const auto backward = per_unit(g, g.backward_s);
  const auto bytes = per_unit(g, g.piece_bytes);
  for (int unit = 0; unit < units.units(); ++unit) {
    EXPECT_NEAR(forward[unit], units.forward_s[unit], 1e-12 * units.forward_s[unit]) << what;
    EXPECT_NEAR(backward[unit], units.backward_s[unit], 1e-12 * units.backward_s[unit]) << what;
    EXPECT_NEAR(bytes[unit], units.unit_bytes[unit], 1e-9 * units.unit_bytes[unit]) << what;
  }
}

TEST(OpGrain, EveryForwardOpIsAPieceAndThePiecesAddUpToTheirUnit) {
  const auto s = llama8b();
  const PipelineGraph units = pipeline_units(s, h100());
  const OpGrainGraph g = op_grain_graph(s, h100(), units);
  const auto sh = models::shard_shape(s);
  const auto layer_ops = models::transformer_layer(s.model, sh).forward.ops.size();
  const auto head_ops = models::lm_head_and_loss(s.model, sh).forward.ops.size();
  EXPECT_EQ(g.pieces(), static_cast<int>(1 + 32 * layer_ops + head_ops));
  EXPECT_EQ(g.piece_names.front(), "embedding embedding");
  EXPECT_EQ(g.piece_names.back(), "head loss");
  EXPECT_NE(std::find(g.piece_names.begin(), g.piece_names.end(), "layer 3 fc1"),
            g.piece_names.end());
  EXPECT_EQ(g.devices.count, 4);
  EXPECT_EQ(g.micro_batches,
            std::min(32, kPipelineGraphMaxOps / (2 * g.pieces())));  // the same cap as layers
  EXPECT_EQ(g.graph.nodes.size(), static_cast<std::size_t>(g.micro_batches) * 2 * g.pieces());
  EXPECT_EQ(g.graph.groups(), g.pieces());
  EXPECT_NO_THROW(g.graph.validate());
  expect_pieces_add_up(s, "bf16");
  // The qkv GEMM holds weights, the attention core none: its states are zero.
  const auto piece = [&](const std::string& name) {
    return static_cast<int>(std::find(g.piece_names.begin(), g.piece_names.end(), name) -
                            g.piece_names.begin());
  };
  EXPECT_GT(g.piece_bytes[piece("layer 0 qkv")], g.piece_bytes[piece("layer 0 attention")]);
  // Inside a unit a piece hands on its output; a unit's last one the pipeline's transfer.
  EXPECT_EQ(g.out_bytes[piece("layer 0 residual.mlp")], units.transfer_bytes);
  // fc1's output: 4,096 tokens by SwiGLU's two 14,336-wide halves over tp 8, in bf16.
  EXPECT_DOUBLE_EQ(g.out_bytes[piece("layer 0 fc1")], 4096.0 * (2 * 14336.0 / 8) * 2);
}

TEST(OpGrain, BackwardAndRecomputationJoinTheirForwardOp) {
  // fp8 adds casts before each backward GEMM; full recomputation re-runs the
  // forward; selective recomputation without fused kernels re-runs the core.
  expect_pieces_add_up(llama8b("", "training: {precision: fp8}\n"), "fp8");
  expect_pieces_add_up(llama8b(", recompute: full"), "full recompute");
  expect_pieces_add_up(llama8b(", recompute: selective", "training: {fused_kernels: false}\n"),
                       "selective, unfused");
}

TEST(OpGrain, ALayerSplitCutsNoLayerAndMatchesTheLayerGraph) {
  // Eight micro-batches, so that both graphs unroll all of them.
  const auto small = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 32}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 8}\n",
      "op_grain_test.yaml", kShipped);
  const PipelineGraph layers = pipeline_graph(small, h100());
  const OpGrainGraph g = op_grain_graph(small, h100(), layers);
  ASSERT_EQ(layers.micro_batches, 8);
  ASSERT_EQ(g.micro_batches, 8);
  const std::vector<int> split = {8, 8, 8, 8};
  const OpGrainPlacement p = split_on_ops(g, split, StageSplit::uniform);
  EXPECT_EQ(p.layers_cut, 0);
  EXPECT_EQ(p.stages_used, 4);
  EXPECT_TRUE(p.contiguous);
  const StagePlacement at_layers = place_stages(small, layers, StageSplit::uniform);
  // The same work on the same stages: the schedules differ only in how a stage
  // interleaves micro-batches between ops rather than between layers.
  EXPECT_NEAR(p.graph.makespan_s, at_layers.graph.makespan_s, 0.02 * at_layers.graph.makespan_s);
  const auto ranges = stage_ranges(g, p);
  ASSERT_EQ(ranges.size(), 4U);
  EXPECT_EQ(ranges[0].rfind("embedding embedding .. layer 7 ", 0), 0U) << ranges[0];
  EXPECT_EQ(ranges[3].rfind("layer 24 ", 0), 0U) << ranges[3];
  EXPECT_NE(ranges[3].find(".. head loss"), std::string::npos) << ranges[3];
}

TEST(OpGrain, BaechisPlacersPlaceOpsAndCountTheLayersTheyCut) {
  const auto s = llama8b();
  const PipelineGraph units = pipeline_units(s, h100());
  const OpGrainGraph g = op_grain_graph(s, h100(), units);
  for (const StageSplit a : {StageSplit::m_topo, StageSplit::m_etf, StageSplit::m_sct}) {
    const OpGrainPlacement p = place_ops(g, a);
    SCOPED_TRACE(stage_split_name(a));
    ASSERT_EQ(p.piece_stage.size(), static_cast<std::size_t>(g.pieces()));
    EXPECT_GE(p.stages_used, 1);
    EXPECT_LE(p.stages_used, 4);
    // Every piece's copies on one device (the groups hold), and the schedule is
    // the one evaluate() builds for that assignment.
    const auto again = models::place::evaluate(g.graph, g.devices, p.graph.device);
    EXPECT_GE(again.makespan_s, 0);
    // Layers cut, counted independently.
    int cut = 0;
    for (int unit = 1; unit <= g.layers; ++unit) {
      std::set<int> stages;
      for (int k = 0; k < g.pieces(); ++k) {
        if (g.piece_unit[k] == unit) stages.insert(p.piece_stage[k]);
      }
      cut += stages.size() > 1 ? 1 : 0;
    }
    EXPECT_EQ(p.layers_cut, cut);
    EXPECT_EQ(stage_ranges(g, p).size(), static_cast<std::size_t>(p.stages_used));
  }
  // m-TOPO fills the stages by memory in order: it uses them all, contiguously,
  // and cuts layers where a stage's budget runs out.
  const OpGrainPlacement topo = place_ops(g, StageSplit::m_topo);
  EXPECT_EQ(topo.stages_used, 4);
  EXPECT_TRUE(topo.contiguous);
  EXPECT_THROW((void)place_ops(g, StageSplit::uniform), std::invalid_argument);
  EXPECT_THROW((void)place_ops(g, StageSplit::balanced), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::sim
