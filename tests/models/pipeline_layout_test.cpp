// Megatron-Core's pipeline layout strings (parallelism.pipeline_layout): the
// parser, the chunks they give, and what the checks refuse.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/pipeline_layout.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kLayoutPresets{{MYRIAD_SCENARIO_DIR}};

scenario::Scenario layout_scenario(const std::string& text) {
  return scenario::load_scenario_text(text, "layout_test.yaml", kLayoutPresets);
}

std::string layout_refusal(const std::string& text) {
  try {
    (void)layout_scenario(text);
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return {};
}

// Expectation: the layout Megatron-Bridge trains DeepSeek-V3 with on 1,024 H100
// ("Et|(tt|)*30mL", its 25.09 performance script) is 32 chunks: the embedding and one
// layer, thirty of two layers, the MTP block and the loss alone; repeats nest, commas
// and spaces are cosmetic, and a closing '|' opens an empty chunk, as splitting on
// '|' gives.
TEST(PipelineLayout, ParsesMegatronLayouts) {
  const auto dsv3 = scenario::parse_pipeline_layout("Et|(tt|)*30mL");
  ASSERT_TRUE(dsv3.ok()) << dsv3.error;
  ASSERT_EQ(dsv3.stages.size(), 32U);
  EXPECT_TRUE(dsv3.stages[0].embedding);
  EXPECT_EQ(dsv3.stages[0].layers, 1);
  EXPECT_EQ(dsv3.stages[0].text, "Et");
  for (std::size_t i = 1; i < 31; ++i) EXPECT_EQ(dsv3.stages[i].layers, 2) << i;
  EXPECT_EQ(dsv3.stages[31].layers, 0);
  EXPECT_EQ(dsv3.stages[31].mtp, 1);
  EXPECT_TRUE(dsv3.stages[31].loss);
  EXPECT_EQ(dsv3.stages[31].text, "mL");
  const auto nested = scenario::parse_pipeline_layout("E, t*3 | ((t|)*2)*2 tL");
  ASSERT_TRUE(nested.ok()) << nested.error;
  ASSERT_EQ(nested.stages.size(), 6U);
  EXPECT_EQ(nested.stages[0].layers, 3);
  EXPECT_EQ(nested.stages[5].text, "tL");
  EXPECT_EQ(scenario::parse_pipeline_layout("Et|tL|").stages.size(), 3U);
}

// Expectation: text that is no layout is refused with where it goes wrong, and a
// layout that would write out past 65,536 characters is refused before it is.
TEST(PipelineLayout, RefusesWhatIsNoLayout) {
  const auto bad = scenario::parse_pipeline_layout("Et|tx|L");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.where, 5U);
  EXPECT_NE(bad.error.find("'x' is not part of a layout"), std::string::npos);
  EXPECT_NE(scenario::parse_pipeline_layout("E(tt|L").error.find("without its ')'"),
            std::string::npos);
  EXPECT_NE(scenario::parse_pipeline_layout("Et)|L").error.find("without its '('"),
            std::string::npos);
  EXPECT_NE(scenario::parse_pipeline_layout("Et*|L").error.find("a count after '*'"),
            std::string::npos);
  EXPECT_NE(scenario::parse_pipeline_layout("E(t*60000)*60000L").error.find("longer than 65536"),
            std::string::npos);
  EXPECT_NE(scenario::parse_pipeline_layout("Et*99999999999L").error.find("a count above"),
            std::string::npos);
}

const std::string k405b =
    "cluster: {preset: llama3-like, gpus: 1024}\nmodel: {preset: llama3-405b}\n"
    "parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 8, cp: 2, global_batch: 512, ";

// Expectation: a layout that writes out what counting the embedding and the loss as
// layers does (126 layers of Llama 3.1 405B over 8 stages of 8 chunks, 2 a chunk,
// the first and last one short) gives the same chunks and the same memory; chunk i
// runs on stage i mod pp.
TEST(PipelineLayout, WritesOutTheEvenSplitWithTheEmbeddingAndLossCounted) {
  const auto counted = layout_scenario(k405b + "embedding_as_layer: true, loss_as_layer: true}\n");
  const auto written = layout_scenario(k405b + "pipeline_layout: \"Et|(tt|)*62tL\"}\n");
  const StepPlan a = plan_step(counted);
  const StepPlan b = plan_step(written);
  for (std::size_t s = 0; s < 8; ++s) {
    for (std::size_t c = 0; c < 8; ++c) {
      EXPECT_EQ(a.layers_by_chunk[s][c], b.layers_by_chunk[s][c]) << s << " " << c;
    }
  }
  EXPECT_EQ(a.layers_by_stage, b.layers_by_stage);
  EXPECT_DOUBLE_EQ(memory_per_gpu(counted, a).total(), memory_per_gpu(written, b).total());
  // Chunk 9 (stage 1's second) holds the one layer of "t" where the others hold two.
  const auto moved = layout_scenario(k405b +
                                     "pipeline_layout: \"Et|tt|tt|tt|tt|tt|tt|tt|tt|ttt|"
                                     "t|(tt|)*52tL\"}\n");
  const StepPlan m = plan_step(moved);
  EXPECT_EQ(m.layers_by_chunk[1][1], 3);
  EXPECT_EQ(m.layers_by_chunk[2][1], 1);
  EXPECT_EQ(m.layers_by_stage[1], 17);
  EXPECT_EQ(m.layers_by_stage[2], 15);
}

// Expectation: DeepSeek-V3's layout on pp 8 x 4 chunks puts the embedding and one
// layer on stage 0's first chunk and the MTP block alone in stage 7's last chunk.
TEST(PipelineLayout, PlacesDeepSeekV3AsMegatronBridgeTrainsIt) {
  const auto s = layout_scenario(
      "cluster: {preset: llama3-like, gpus: 1024}\nmodel: {preset: deepseek-v3}\n"
      "parallelism: {tp: 2, sp: true, pp: 8, virtual_stages: 4, ep: 64, global_batch: 8192, "
      "pipeline_layout: \"Et|(tt|)*30mL\"}\n");
  const StepPlan plan = plan_step(s);
  EXPECT_EQ(plan.layers_by_chunk[0][0], 1);
  EXPECT_EQ(plan.layers_by_chunk[1][0], 2);
  EXPECT_EQ(plan.layers_by_chunk[7][3], 1);  // the MTP block
  EXPECT_EQ(plan.layers_by_stage.front(), 7);
  EXPECT_EQ(plan.layers_by_stage.back(), 7);
  // The three dense layers are the first three: chunk 0 of stages 0 and 1.
  EXPECT_EQ(plan.dense_by_chunk[0][0], 1);
  EXPECT_EQ(plan.dense_by_chunk[1][0], 2);
  EXPECT_EQ(plan.dense_by_chunk[2][0], 0);
}

// Expectation: a layout Myriad cannot run is refused with what is wrong, naming the
// key: chunks against pp x virtual_stages, the embedding and the loss at the ends,
// the MTP blocks last, every layer placed once, no other uneven-stage key beside it.
TEST(PipelineLayout, RefusesLayoutsThatDoNotFitTheModelOrTheStages) {
  const std::string dsv3 =
      "cluster: {preset: llama3-like, gpus: 1024}\nmodel: {preset: deepseek-v3}\n"
      "parallelism: {tp: 2, sp: true, pp: 8, virtual_stages: 4, ep: 64, global_batch: 8192, ";
  const auto refused = [&](const std::string& rest) { return layout_refusal(dsv3 + rest); };
  EXPECT_NE(refused("pipeline_layout: \"Et|(tt|)*29mL\"}\n")
                .find("the layout has 31 model chunks (split by '|'), expected pp * "
                      "virtual_stages = 8 * 4 = 32"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"tE|(tt|)*30mL\"}\n").find("the embedding (E) opens"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Et|(tt|)*30Lm\"}\n").find("(L) close the last chunk"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Et|m(tt|)*30L\"}\n").find("MTP blocks (m) follow"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Et|(tt|)*30tL\"}\n")
                .find("the layout places 0 MTP blocks (m), but the model has 1"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Ett|(tt|)*30mL\"}\n")
                .find("places 62 transformer layers (t), but the model has 61"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Et|(tt|)*29|mL\"}\n").find("holds nothing"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Et|(tt|)*30mL\", loss_as_layer: true}\n")
                .find("parallelism.pipeline_layout: a pipeline layout places every layer"),
            std::string::npos);
  EXPECT_NE(refused("pipeline_layout: \"Et|(t?|)*30mL\"}\n").find("character 6 of"),
            std::string::npos);
}

}  // namespace
}  // namespace myriad::models
