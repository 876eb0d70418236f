// `myriad trace`: a scenario's step program written as Chakra traces, and traces
// played as a step.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

// Chakra's feeder test trace, gzip-compressed as shipped (tests/data/chakra).
std::string feeder_sample() {
  return (std::filesystem::path(MYRIAD_TEST_DATA_DIR).parent_path() / "data" / "chakra" /
          "feeder-chakra.0.et.gz")
      .string();
}

std::string example(const std::string& name) {
  return std::string(MYRIAD_SCENARIO_DIR) + "/examples/" + name + ".yaml";
}

// Exported, then played: the step the program plays, whichever way it is read.
TEST(TraceCommand, ExportsAStepAndPlaysItBack) {
  const auto dir = std::filesystem::temp_directory_path() / "myriad-trace-command-test";
  std::filesystem::remove_all(dir);
  const Result out = run_cli(
      {"trace", "export", example("llama3-8b-h100-64-pp4"), "--out", dir.string(), "--name", "l8"});
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_NE(out.out.find("4 files (one a pipeline stage"), std::string::npos) << out.out;
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(std::filesystem::exists(dir / ("l8." + std::to_string(r) + ".et")));
  const auto json = (dir / "played.json").string();
  const Result played = run_cli({"trace", "play", (dir / "l8.et.json").string(), "--json", json});
  ASSERT_EQ(played.code, 0) << played.err;
  const auto j = nlohmann::json::parse(std::ifstream(json));
  // The export says the step it describes, to four places; the play says it again.
  const std::string step =
      fmt::format("{:.4f} s as the program plays", j["step_time_s"].get<double>());
  EXPECT_NE(out.out.find(step), std::string::npos) << out.out << step;
  EXPECT_EQ(j["files"].size(), 4U);
  std::filesystem::remove_all(dir);
}

// Played on another scenario's cluster: the traces' collectives priced there.
TEST(TraceCommand, PlaysTracesOnAScenariosCluster) {
  const auto dir = std::filesystem::temp_directory_path() / "myriad-trace-on-test";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(
      run_cli({"trace", "export", example("llama3-8b-h100-64-pp4"), "--out", dir.string()}).code,
      0);
  const Result on = run_cli({"trace", "play", (dir / "step.et.json").string(), "--on",
                             example("megatron-175b-selene-64"), "--group", "dp"});
  ASSERT_EQ(on.code, 0) << on.err;
  EXPECT_NE(on.out.find("collectives priced on GPT-3 175B on 64 A100"), std::string::npos)
      << on.out;
  EXPECT_NE(run_cli({"trace", "play", (dir / "step.et.json").string(), "--group", "xx"}).code, 0);
  std::filesystem::remove_all(dir);
}

// `estimate` says, under its headline figures, when the step program it stands for
// plays apart from it by more than 1 %, and says nothing where they agree.
TEST(EstimateCommand, SaysWhenTheStepProgramPlaysApart) {
  // The pods example with its racks at 3:1: the closed form slows the stages'
  // reductions for meeting at the racks' uplinks, the program plays them apart
  // (2.0 %; `myriad simulate`, 1.7 % under the estimate, plays the flows).
  const Result apart = run_cli({"estimate", example("llama3-70b-h100-3584-pods-1to7"), "--set",
                                "cluster.network.tiers.0.oversubscription=3"});
  ASSERT_EQ(apart.code, 0) << apart.err;
  const auto note = apart.out.find("note: the step program, played without contention, takes");
  EXPECT_NE(note, std::string::npos) << apart.out;
  EXPECT_LT(note, apart.out.find("step time breakdown"));
  EXPECT_NE(apart.out.find("meeting on the oversubscribed network"), std::string::npos);
  const Result agreed = run_cli({"estimate", example("llama3-8b-h100-64-pp4")});
  EXPECT_EQ(agreed.out.find("note: the step program"), std::string::npos) << agreed.out;
}

// `simulate --workload`: a measured trace (Chakra's feeder sample, gzip as it is
// shipped) played on a one-stage scenario's cluster, every replica running it,
// beside the same program without contention; and what it refuses.
TEST(SimulateCommand, PlaysAWorkloadOnTheScenariosCluster) {
  const auto scenario = std::filesystem::temp_directory_path() / "myriad-workload.yaml";
  std::ofstream(scenario) << "cluster: {preset: llama3-like, gpus: 1024}\n"
                             "model: {preset: llama3-8b, seq_length: 4096}\n"
                             "parallelism: {tp: 8, pp: 1, global_batch: 256}\n";
  const auto json = std::filesystem::temp_directory_path() / "myriad-workload.json";
  const std::string trace = feeder_sample();
  const Result r = run_cli({"simulate", scenario.string(), "--workload", trace,
                            "--ignore-ctrl-deps", "--json", json.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 file (3664 nodes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("128 data-parallel replicas running it"), std::string::npos) << r.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  const double simulated = j["step_time_s"].get<double>();
  const double uncontended = j["uncontended_step_time_s"].get<double>();
  // Its collectives (broadcasts and all-reduces over the 128 replicas' rings)
  // as flows, the rest its traced compute: within a few per cent of the program.
  EXPECT_GT(simulated, 0.3);
  EXPECT_NEAR(simulated / uncontended, 1, 0.05);
  const Result report = run_cli({"simulate", scenario.string(), "--workload", trace, "--report",
                                 (std::filesystem::temp_directory_path() / "w.html").string()});
  EXPECT_EQ(report.code, 2);
  EXPECT_NE(report.err.find("--report"), std::string::npos) << report.err;
  std::filesystem::remove(scenario);
  std::filesystem::remove(json);
}

// A workload of one stage on a scenario of four, and one that cannot be read:
// refused, saying why, before anything is simulated.
TEST(SimulateCommand, RefusesAWorkloadItCannotPlay) {
  const std::string trace = feeder_sample();
  const Result stages = run_cli(
      {"simulate", example("llama3-8b-h100-64-pp4"), "--workload", trace, "--ignore-ctrl-deps"});
  EXPECT_EQ(stages.code, 2);
  EXPECT_NE(stages.err.find("the workload has 1 stage (trace files), the scenario's pipeline 4"),
            std::string::npos)
      << stages.err;
  const Result missing =
      run_cli({"simulate", example("llama3-8b-h100-64-pp4"), "--workload", "/nonexistent.et"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.et"), std::string::npos) << missing.err;
}

TEST(TraceCommand, SaysWhatIsWrongWithATrace) {
  const Result missing = run_cli({"trace", "play", "/nonexistent/trace.et"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/trace.et"), std::string::npos) << missing.err;
  const auto bad = std::filesystem::temp_directory_path() / "myriad-trace-bad.0.et";
  std::ofstream(bad) << "\x05\x01";
  const Result truncated = run_cli({"trace", "play", bad.string()});
  EXPECT_EQ(truncated.code, 2);
  EXPECT_NE(truncated.err.find("myriad-trace-bad.0.et"), std::string::npos) << truncated.err;
  std::filesystem::remove(bad);
  EXPECT_NE(run_cli({"trace"}).code, 0);
}

}  // namespace
}  // namespace myriad::cli
