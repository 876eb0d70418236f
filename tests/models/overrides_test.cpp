// `--set key.path=value`: a value set on the command line is read and checked as
// the same value in the file, reaches into presets' lists, chooses presets, and
// every problem names the override.
#include "models/scenario/overrides.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "models/scenario/run_title.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models::scenario {
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

// A scenario that refines its presets: 2,048 H800 of a Llama-3-like cluster, a
// 16-layer Llama 3 8B; its batch splits over dp 256 (2,048 GPUs) and 144 (1,152).
const std::string kRefined =
    "cluster: {preset: llama3-like, gpus: 2048, gpu: {preset: H800, hbm_capacity: 100GB}}\n"
    "model: {preset: llama3-8b, layers: 16}\n"
    "parallelism: {tp: 8, global_batch: 2304}\n";

Scenario refined_with(const std::vector<std::string>& sets) {
  return load_scenario_text(kRefined, "refined.yaml", LoadOptions({MYRIAD_SCENARIO_DIR}, sets));
}

// The warnings' text, one per line.
std::string warnings_of(const Scenario& s) {
  std::string out;
  for (const auto& w : s.warnings) out += w.str() + "\n";
  return out;
}

// A switch to another preset takes every key that preset defines, the file's
// refinements of the old one included (gb200-nvl72: 1,152 GB200 in racks of 72),
// and says so key by key; keys the new preset does not define stay.
TEST(Overrides, APresetSwitchTakesWhatTheNewPresetDefines) {
  const Scenario s = refined_with({"cluster.preset=gb200-nvl72"});
  EXPECT_EQ(s.cluster.gpus, 1152);
  EXPECT_EQ(s.cluster.gpus_per_node, 72);
  EXPECT_EQ(s.cluster.gpu.name, "GB200");
  EXPECT_EQ(s.cluster.gpu.hbm_bytes, 189471.0 * (1 << 20)) << "not the file's 100 GB for its H800";
  EXPECT_EQ(s.parallelism.dp, 144);
  const std::string w = warnings_of(s);
  EXPECT_NE(w.find("refined.yaml:1:32: warning: cluster.gpus: '2048' in the scenario gives way "
                   "to '1152' of preset 'gb200-nvl72': --set cluster.preset=gb200-nvl72 switched "
                   "the preset from 'llama3-like'"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("warning: cluster.gpu: a mapping in the scenario gives way"), std::string::npos)
      << w;
  // A model switch alike: the file's 16 layers were the 8B's.
  const Scenario m = refined_with({"model.preset=llama3-70b", "parallelism.tp=8"});
  EXPECT_EQ(m.model.layers, 80);
  EXPECT_NE(warnings_of(m).find("warning: model.layers: '16' in the scenario gives way to '80'"),
            std::string::npos)
      << warnings_of(m);
  // A GPU switch alike, inside the cluster's preset.
  const Scenario g = refined_with({"cluster.gpu.preset=B200"});
  EXPECT_EQ(g.cluster.gpu.name, "B200");
  EXPECT_EQ(g.cluster.gpu.hbm_bytes, 183359.0 * 1024 * 1024);  // as CUDA reports it
  EXPECT_EQ(g.cluster.gpus, 2048);
  EXPECT_NE(warnings_of(g).find("cluster.gpu.hbm_capacity: '100GB' in the scenario gives way"),
            std::string::npos)
      << warnings_of(g);
}

// What the same command sets wins over the new preset, in either phase and either
// order, without a warning; naming the preset the scenario has switches nothing.
TEST(Overrides, APresetSwitchLeavesWhatTheCommandSets) {
  const Scenario s = refined_with({"cluster.gpus=576", "cluster.gpu=B200", "model.layers=20",
                                   "cluster.preset=gb200-nvl72", "model.preset=llama3-70b"});
  EXPECT_EQ(s.cluster.gpus, 576);
  EXPECT_EQ(s.cluster.gpus_per_node, 72);
  EXPECT_EQ(s.cluster.gpu.name, "B200");
  EXPECT_EQ(s.model.layers, 20);
  EXPECT_EQ(s.model.hidden, 8192);
  EXPECT_EQ(warnings_of(s).find("gives way"), std::string::npos) << warnings_of(s);

  const Scenario same = refined_with({"cluster.preset=llama3-like", "model.preset=llama3-8b"});
  EXPECT_EQ(same.cluster.gpus, 2048);
  EXPECT_EQ(same.cluster.gpu.name, "H800-SXM");
  EXPECT_EQ(same.cluster.gpu.hbm_bytes, 100e9);
  EXPECT_EQ(same.model.layers, 16);
  EXPECT_EQ(warnings_of(same).find("gives way"), std::string::npos) << warnings_of(same);
  // Switching away and back again is no switch either.
  const Scenario back = refined_with({"cluster.preset=gb200-nvl72", "cluster.preset=llama3-like"});
  EXPECT_EQ(back.cluster.gpus, 2048);
  EXPECT_EQ(warnings_of(back).find("gives way"), std::string::npos) << warnings_of(back);
}

// A report's title is the run's: the scenario's name while the command changes
// neither its cluster nor its model, else the model, GPU count and GPU as
// resolved, with the name and the overrides that changed it.
TEST(Overrides, TitlesComeFromTheResolvedRun) {
  const std::string named = "name: Llama 3 8B on 2,048 H800\n" + kRefined;
  const auto title = [&](const std::vector<std::string>& sets) {
    return run_title(
        load_scenario_text(named, "refined.yaml", LoadOptions({MYRIAD_SCENARIO_DIR}, sets)));
  };
  EXPECT_EQ(title({}), "Llama 3 8B on 2,048 H800");
  EXPECT_EQ(title({"training.tokens=1T"}), "Llama 3 8B on 2,048 H800");
  EXPECT_EQ(title({"cluster.gpu=B200"}),
            "Llama 3 8B on 2,048 B200 (scenario \"Llama 3 8B on 2,048 H800\" with --set "
            "cluster.gpu)");
  EXPECT_EQ(title({"cluster.preset=gb200-nvl72", "cluster.gpus=576"}),
            "Llama 3 8B on 576 GB200 (scenario \"Llama 3 8B on 2,048 H800\" with --set "
            "cluster.gpus, --set cluster.preset)");
  EXPECT_EQ(title({"cluster.gpu=B200", "name=mine"}), "mine");
  EXPECT_EQ(run_title(refined_with({})), "refined.yaml");
  EXPECT_EQ(grouped(16384), "16,384");
  EXPECT_EQ(grouped(999), "999");
  EXPECT_EQ(grouped(-1234567), "-1,234,567");
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
}  // namespace myriad::models::scenario
