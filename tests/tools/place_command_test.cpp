// `myriad place`: every placer's split of the pipeline, priced by both engines,
// the chosen one written back as a scenario every verb reads.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"
#include "tools/cli/cli.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

// Llama 3 8B on 4 stages of 8 H100: its 128k-token head weighs about three layers.
std::string llama8b_file(const std::string& name, const std::string& pp = "4") {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << "cluster: {preset: llama3-like, gpus: 64}\n"
                         "model: {preset: llama3-8b, seq_length: 4096}\n"
                         "parallelism: {tp: 8, sp: true, pp: "
                      << pp << ", zero: 1, micro_batch: 1, global_batch: 64}\n";
  return path.string();
}

TEST(Cli, PlacePricesEveryPlacerAndWritesTheFastest) {
  const std::string scenario = llama8b_file("myriad_place_test.yaml");
  const auto dir = std::filesystem::temp_directory_path();
  const auto json = dir / "myriad_place_test.json";
  const auto written = dir / "myriad_place_test_placed.yaml";
  std::filesystem::remove(written);
  const Result r =
      run_cli({"place", scenario, "--json", json.string(), "--write", written.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err << r.out;
  for (const char* name : {"uniform", "m-TOPO", "m-ETF", "m-SCT", "balanced"}) {
    EXPECT_NE(r.out.find(std::string("\n  ") + name), std::string::npos) << name << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("use it: --set 'parallelism.stage_layers=["), std::string::npos) << r.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["placements"].size(), 5U);
  const auto& uniform = j["placements"][0];
  const auto& balanced = j["placements"][4];
  EXPECT_EQ(uniform["stage_layers"], nlohmann::json({8, 8, 8, 8}));
  EXPECT_LT(balanced["analytic"]["step_time_s"].get<double>(),
            uniform["analytic"]["step_time_s"].get<double>());
  ASSERT_TRUE(balanced["simulated_step_time_s"].is_number()) << balanced.dump();
  ASSERT_TRUE(uniform["simulated_step_time_s"].is_number()) << uniform.dump();
  // The step engine agrees that the balanced split is faster.
  EXPECT_LT(balanced["simulated_step_time_s"].get<double>(),
            uniform["simulated_step_time_s"].get<double>());
  EXPECT_GT(j["graph"]["critical_path_s"].get<double>(), 0);
  EXPECT_EQ(balanced["stages"].size(), 4U);
  // The written scenario carries the chosen split, and every verb reads it.
  const std::string chosen = j["chosen"].get<std::string>();
  std::vector<int> split;
  for (const auto& p : j["placements"]) {
    if (p["algorithm"] == chosen) split = p["stage_layers"].get<std::vector<int>>();
  }
  ASSERT_EQ(split.size(), 4U);
  const auto placed = models::scenario::load_scenario(written.string(), {{MYRIAD_SCENARIO_DIR}});
  EXPECT_EQ(placed.parallelism.stage_layers, split);
  EXPECT_EQ(run_cli({"estimate", written.string()}).code, kExitOk);
}

TEST(Cli, PlaceOneAlgorithmWithoutTheStepEngine) {
  const std::string scenario = llama8b_file("myriad_place_one.yaml");
  const Result r = run_cli({"place", scenario, "--algo", "m-topo", "--no-simulate"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("m-TOPO stages:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("balanced"), std::string::npos) << r.out;
}

TEST(Cli, PlaceAtOpGrainPricesLayerSplitsAndOpPlacementsOnTheOpGraph) {
  const std::string scenario = llama8b_file("myriad_place_ops.yaml");
  const auto json = std::filesystem::temp_directory_path() / "myriad_place_ops.json";
  const Result r =
      run_cli({"place", scenario, "--grain", "op", "--no-simulate", "--algo", "uniform", "--algo",
               "balanced", "--algo", "m-topo", "--json", json.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err << r.out;
  EXPECT_NE(r.out.find("Op grain: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("m-TOPO at op grain, each stage's ops:\n  stage 0: embedding embedding"),
            std::string::npos)
      << r.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("op_grain")) << j.dump();
  const auto& ops = j["op_grain"]["placements"];
  ASSERT_EQ(ops.size(), 4U);  // uniform, balanced and m-TOPO as layers, m-TOPO as ops
  EXPECT_EQ(ops[0]["algorithm"], "uniform");
  EXPECT_EQ(ops[0]["grain"], "layers");
  EXPECT_EQ(ops[0]["layers_cut"], 0);
  EXPECT_EQ(ops[2]["grain"], "layers");
  EXPECT_EQ(ops[3]["algorithm"], "m-TOPO");
  EXPECT_EQ(ops[3]["grain"], "ops");
  EXPECT_GT(ops[3]["layers_cut"].get<int>(), 0);  // it fills stages by memory, inside layers
  EXPECT_EQ(ops[3]["stage_ops"].size(), ops[3]["stages_used"].get<std::size_t>());
  // The balanced split is as fast on the op graph as on the layer graph: faster than uniform.
  EXPECT_LT(ops[1]["graph_makespan_s"].get<double>(), ops[0]["graph_makespan_s"].get<double>());
  EXPECT_NE(run_cli({"place", scenario, "--grain", "ops"}).code, kExitOk);
}

TEST(Cli, PlaceRejectsWhatItCannotPlace) {
  const Result bad_algo = run_cli({"place", llama8b_file("myriad_place_bad.yaml"), "--algo", "x"});
  EXPECT_EQ(bad_algo.code, kExitBadInput);
  EXPECT_NE(bad_algo.err.find("--algo x: expected uniform, m-topo"), std::string::npos)
      << bad_algo.err;
  const Result flat = run_cli({"place", llama8b_file("myriad_place_flat.yaml", "1")});
  EXPECT_EQ(flat.code, kExitBadInput);
  EXPECT_NE(flat.err.find("there is no pipeline to place"), std::string::npos) << flat.err;
  const Result no_dir = run_cli({"place", llama8b_file("myriad_place_dir.yaml"), "--write",
                                 "/nonexistent-folder/placed.yaml"});
  EXPECT_EQ(no_dir.code, kExitBadInput);
  EXPECT_NE(no_dir.err.find("--write"), std::string::npos) << no_dir.err;
}

// Expectation: a million layers are refused before a graph is built, naming
// model.layers and the grain, with the least ops the graph would have (at op
// grain Llama 3 8B's layer is 10 pieces: 20,000,008 ops, which took 3.2 GB and
// more than a minute before; at layer grain 2,000,004 ops took 17 s and 800 MB).
// 200,000 layers make 400,004 ops: just past the bound.
TEST(Cli, PlaceRefusesAGraphPastItsBoundBeforeBuildingIt) {
  const std::string scenario = llama8b_file("myriad_place_huge.yaml");
  const Result op = run_cli({"place", scenario, "--grain", "op", "--set", "model.layers=1000000"});
  EXPECT_EQ(op.code, kExitBadInput) << op.err;
  EXPECT_NE(op.err.find("place: error: model.layers 1000000: the graph at --grain op has at "
                        "least 20000008 ops (10 pieces a layer"),
            std::string::npos)
      << op.err;
  EXPECT_NE(op.err.find("or --grain layer"), std::string::npos) << op.err;
  EXPECT_EQ(op.out, "");
  const Result layer = run_cli({"place", scenario, "--set", "model.layers=1000000"});
  EXPECT_EQ(layer.code, kExitBadInput) << layer.err;
  EXPECT_NE(layer.err.find("model.layers 1000000: the graph at --grain layer has at least "
                           "2000004 ops"),
            std::string::npos)
      << layer.err;
  const Result past = run_cli({"place", scenario, "--set", "model.layers=200000"});
  EXPECT_NE(past.err.find("at least 400004 ops"), std::string::npos) << past.err;
}

}  // namespace
}  // namespace myriad::cli
