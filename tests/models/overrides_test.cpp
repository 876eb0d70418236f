// `--set key.path=value`: a value set on the command line is read and checked as
// the same value in the file, reaches into presets' lists, chooses presets, and
// every problem names the override.
#include "models/scenario/overrides.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::scenario {
namespace {

const std::string kBase =
    "cluster: {preset: megascale-like, gpus: 256}\n"
    "model: {preset: gpt3-175b-megascale}\n"
    "parallelism: {tp: 8, pp: 8, global_batch: 768}\n";

Scenario load_with(const std::vector<std::string>& sets) {
  return load_scenario_text(kBase, "base.yaml", LoadOptions({MYRIAD_SCENARIO_DIR}, sets));
}

// Every problem's text, one per line.
std::string problems_with(const std::vector<std::string>& sets) {
  try {
    (void)load_with(sets);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Overrides, SetValuesAreReadWithTheirUnitsAndLaterOnesWin) {
  const Scenario s = load_with({"parallelism.tp=2", "parallelism.tp=4",
                                "cluster.gpu.nvlink_bandwidth=100GB/s", "training.tokens=1T"});
  EXPECT_EQ(s.parallelism.tp, 4);
  EXPECT_EQ(s.parallelism.dp, 8);
  EXPECT_EQ(s.cluster.gpu.nvlink_bw_Bps, 100e9);
  EXPECT_EQ(s.training.tokens, 1e12);
  EXPECT_EQ(s.origins.at("parallelism.tp").file, "--set parallelism.tp");
}

TEST(Overrides, ReachAPresetsListByIndexAndOpenMaps) {
  const Scenario s =
      load_with({"cluster.network.tiers.0.oversubscription=3:1", "overlap={tp: true, dp: true}"});
  ASSERT_EQ(s.cluster.network.tiers.size(), 3U);
  EXPECT_DOUBLE_EQ(s.cluster.network.tiers[0].oversubscription, 3.0);
  EXPECT_DOUBLE_EQ(s.cluster.network.tiers[1].oversubscription, 1.0);
  EXPECT_TRUE(s.overlap.tp);
  EXPECT_TRUE(s.overlap.dp);
}

TEST(Overrides, ChoosePresetsBeforeTheyAreResolved) {
  const Scenario gpu = load_with({"cluster.gpu=H100"});
  EXPECT_EQ(gpu.cluster.gpu.name, "H100-SXM5-80GB");
  // Keys set beside a chosen preset lay over it, wherever they come on the line.
  const Scenario model = load_with({"model.layers=40", "model.preset=llama3-70b"});
  EXPECT_EQ(model.model.hidden, 8192);
  EXPECT_EQ(model.model.layers, 40);
}

TEST(Overrides, ProblemsNameTheOverride) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"parallelism.tp=banana",
       "--set parallelism.tp: error: parallelism.tp: expected an integer >= 1, found 'banana'"},
      {"parallelism.tpp=4", "--set parallelism.tpp: error: parallelism.tpp: unknown key"},
      {"parallelism.tp", "--set parallelism.tp: error: expected key.path=value"},
      {"parallelism..tp=4", "found key path 'parallelism..tp'"},
      {"cluster.network.tiers.7.latency=1us",
       "'cluster.network.tiers' is a list of 3 items: expected an index from 0 to 2, found '7'"},
      {"cluster.gpus.x=1", "'cluster.gpus' is '256', not a mapping of keys, so it has no 'x'"},
      {"model={a: [1", "--set model: error: the value '{a: [1' is not YAML"},
      {"cluster.gpu.preset=nope", "no hardware preset named 'nope'"},
  };
  for (const auto& [set, want] : cases) {
    const std::string got = problems_with({set});
    EXPECT_NE(got.find(want), std::string::npos) << set << "\n" << got;
  }
  // All at once, each reported.
  const std::string all = problems_with({"parallelism.tp=0", "parallelism.pp=x"});
  EXPECT_NE(all.find("--set parallelism.tp"), std::string::npos) << all;
  EXPECT_NE(all.find("--set parallelism.pp"), std::string::npos) << all;
}

TEST(Overrides, ApplyToAnEmptyTree) {
  Diagnostics d;
  ConfigNode root;
  apply_overrides(root, {"a.b=1"}, OverridePhase::values, d);
  EXPECT_FALSE(d.has_errors());
  ASSERT_TRUE(root.is_map());
  const ConfigNode* a = root.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a->find("b"), nullptr);
  EXPECT_EQ(a->find("b")->text(), "1");
  EXPECT_EQ(a->find("b")->where().str(), "--set a.b");
}

}  // namespace
}  // namespace myriad::scenario
