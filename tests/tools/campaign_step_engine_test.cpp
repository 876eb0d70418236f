// `myriad campaign --step-engine simulate`: the healthy step, shrunk states,
// stragglers and injected slow nodes played on the step engine before the
// campaign, and the campaign run on what it found.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"
#include "tools/cli/cli.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

TEST(Cli, CampaignTakesItsPaceFromTheStepEngine) {
  // GPT-3 175B on 64 A100 with a straggler process 1.5x slow: the step engine
  // plays the healthy step and the step with a slow node in the first, a middle
  // and the last of 8 stages; the campaign runs on its pace and on the average
  // factor, which the pipeline keeps at most 1.5.
  const std::string scenario =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/megatron-175b-selene-64.yaml";
  const auto json = std::filesystem::temp_directory_path() / "myriad_cli_campaign_step.json";
  const Result r = run_cli(
      {"campaign", scenario, "--days", "5", "--seeds", "3", "--step-engine", "simulate", "--set",
       "faults.stragglers=[{name: slow, per_1000_node_days: 300, duration: 2h, slowdown: 1.5}]",
       "--json", json.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("step engine: healthy step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("straggler 'slow': slowdown 1.5 given"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stage 7 "), std::string::npos) << r.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  const auto& fit = j["step_engine"];
  const double factor = fit["stragglers"][0]["step_factor_simulated"].get<double>();
  EXPECT_GE(factor, 1.0);
  EXPECT_LE(factor, 1.5 + 1e-9);
  // The campaign's healthy step is the step engine's.
  EXPECT_NEAR(j["healthy_step_time_s"].get<double>(), fit["simulated_step_s"].get<double>(),
              1e-9 * fit["simulated_step_s"].get<double>());
  std::filesystem::remove(json);
  EXPECT_EQ(run_cli({"campaign", scenario, "--step-engine", "simulate", "--vary",
                     "faults.rate_scale=1,2"})
                .code,
            kExitBadInput);
}

TEST(Cli, CampaignPlaysShrunkStatesAndSlowNodesOnTheStepEngine) {
  // GPT-3 175B on 32 nodes (four replicas of 8 stages) with a policy that
  // shrinks: the replicas left after a loss (2, then 1) are played, and node 9
  // (stage 2) running 1.5x slow for 8 hours is played at its own stage; the
  // campaign's slow node then runs at that factor (its event log says so).
  const std::string scenario =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/megatron-175b-selene-64.yaml";
  const auto dir = std::filesystem::temp_directory_path();
  const auto json = dir / "myriad_cli_campaign_shrunk.json";
  const auto events = dir / "myriad_cli_campaign_shrunk.jsonl";
  const std::vector<std::string> args = {
      "campaign",      scenario,
      "--days",        "2",
      "--seeds",       "3",
      "--step-engine", "simulate",
      "--set",         "cluster.gpus=256",
      "--set",         "policies=[{name: shrink, no_spare: shrink, repair_time: 4h}]",
      "--set",         "faults.events=[{at: 1h, until: 9h, node: 9, slowdown: 1.5}]",
      "--json",        json.string(),
      "--events",      events.string()};
  const Result r = run_cli(args);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("shrunk to 2 replicas (16 to 31 nodes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shrunk to 1 replica (8 to 15 nodes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slow node 9 (event 0, stage 2): slowdown 1.5 given"), std::string::npos)
      << r.out;
  std::ifstream in(json);
  const auto fit = nlohmann::json::parse(in)["step_engine"];
  ASSERT_EQ(fit["shrunk_states"].size(), 2U);
  EXPECT_EQ(fit["shrunk_states"][0]["dp"], 2);
  EXPECT_EQ(fit["shrunk_states"][1]["dp"], 1);
  for (const auto& state : fit["shrunk_states"]) {
    // Fewer replicas, the same global batch: a longer step on both engines.
    EXPECT_GT(state["simulated_step_s"].get<double>(), fit["simulated_step_s"].get<double>());
    EXPECT_GT(state["analytic_step_s"].get<double>(), fit["analytic_step_s"].get<double>());
  }
  EXPECT_EQ(fit["shrunk_states_not_played"], 0);
  ASSERT_EQ(fit["slow_nodes"].size(), 1U);
  const double factor = fit["slow_nodes"][0]["step_factor_simulated"].get<double>();
  EXPECT_GE(factor, 1.0);
  EXPECT_LE(factor, 1.5 + 1e-9);
  std::ifstream log(events);
  int onsets = 0;
  for (std::string line; std::getline(log, line);) {
    const auto e = nlohmann::json::parse(line);
    if (e["event"] != "straggler_onset") continue;
    ++onsets;
    EXPECT_DOUBLE_EQ(e["slowdown"].get<double>(), factor) << line;
  }
  EXPECT_GE(onsets, 1);
  // One shrunk state asked for: the smaller one scales as it.
  auto one = args;
  one.insert(one.end(), {"--step-engine-states", "1"});
  const Result r1 = run_cli(one);
  ASSERT_EQ(r1.code, kExitOk) << r1.err;
  EXPECT_NE(r1.out.find("1 smaller shrunk state not played"), std::string::npos) << r1.out;
  std::filesystem::remove(json);
  std::filesystem::remove(events);
}

}  // namespace
}  // namespace myriad::cli
