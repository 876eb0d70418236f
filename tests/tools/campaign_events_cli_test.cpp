// `myriad campaign --events` at scale: `--events-level` and one line per
// repair incident, through the command line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/tools/run_cli.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

// 16 nodes of 8 A100 under two leaves of 8 nodes, 8 spares; GPU failures, and
// leaf 1 (nodes 8-15) failing at 10 h for 2 h.
const std::string kLeafJob = R"(
cluster:
  preset: selene-like
  gpus: 128
  network:
    rail_optimized: true
    tiers:
      - {name: leaf, radix: 16, oversubscription: 1}
      - {name: spine, radix: 16}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
faults:
  processes: [{component: gpu, per_1000_node_days: 100}]
  events: [{at: 10h, domain: leaf, id: 1, repair: 2h}]
policies:
  - {name: spares, hot_spares: 8}
)";

class EventLog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("myriad_event_log_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
    scenario_ = (dir_ / "leaf.yaml").string();
    std::ofstream(scenario_) << kLeafJob;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The log's lines, after `campaign --days 5` with `extra` options.
  std::vector<std::string> log(const std::vector<std::string>& extra, Result* result = nullptr) {
    const auto file = (dir_ / "events.jsonl").string();
    std::vector<std::string> args = {"campaign", scenario_, "--days",   "5",
                                     "--seeds",  "2",       "--events", file};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    if (result != nullptr) *result = r;
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::filesystem::path dir_;
  std::string scenario_;
};

std::string kind_of(const std::string& line) {
  return nlohmann::json::parse(line).at("event").get<std::string>();
}

bool routine(const std::string& kind) {
  return kind.rfind("checkpoint_", 0) == 0 || kind.rfind("upload_", 0) == 0 ||
         kind == "peer_copy_done";
}

TEST_F(EventLog, FailuresByDefaultAllOnRequestTheSameLinesInOrder) {
  Result quiet;
  const auto failures = log({}, &quiet);
  Result loud;
  const auto all = log({"--events-level", "all"}, &loud);
  std::vector<std::string> kept;
  for (const auto& line : all) {
    if (!routine(kind_of(line))) kept.push_back(line);
  }
  // The default leaves out exactly the checkpoint routine, nothing else.
  EXPECT_EQ(failures, kept);
  EXPECT_LT(failures.size() * 10, all.size()) << "checkpoints dominate the full log";
  std::set<std::string> kinds;
  for (const auto& line : failures) kinds.insert(kind_of(line));
  for (const char* kind : {"failure", "rollback", "detected", "restart", "running", "repaired"}) {
    EXPECT_TRUE(kinds.contains(kind)) << kind;
  }
  // What was left out is said, with how to keep it; the report is the same.
  EXPECT_NE(quiet.err.find(fmt::format("event log {}: {} events; {} checkpoint and upload events "
                                       "left out (--events-level all keeps them)",
                                       (dir_ / "events.jsonl").string(), failures.size(),
                                       all.size() - failures.size())),
            std::string::npos)
      << quiet.err;
  EXPECT_NE(loud.err.find(fmt::format("{} events\n", all.size())), std::string::npos) << loud.err;
  EXPECT_EQ(quiet.out, loud.out);
}

TEST_F(EventLog, ALeafFailureAndItsRepairAreOneLineEach) {
  std::vector<nlohmann::json> leaf;
  for (const auto& line : log({})) {
    const auto e = nlohmann::json::parse(line);
    if (e.value("domain", "") == "leaf") leaf.push_back(e);
  }
  ASSERT_EQ(leaf.size(), 2U);
  EXPECT_EQ(leaf[0]["event"], "failure");
  EXPECT_EQ(leaf[1]["event"], "repaired");
  for (const auto& e : leaf) {
    EXPECT_EQ(e["id"], 1);
    EXPECT_EQ(e["nodes"], nlohmann::json::array({8, 15}));
  }
  EXPECT_DOUBLE_EQ(leaf[1]["time_h"].get<double>(), 12);
}

TEST_F(EventLog, AnUnknownLevelIsAnErrorNamingTheLevels) {
  const Result r = run_cli({"campaign", scenario_, "--days", "1", "--events",
                            (dir_ / "e.jsonl").string(), "--events-level", "checkpoints"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--events-level: expected failures (failures, detection, restarts, "
                       "repairs, stragglers) or all (also every checkpoint and upload), found "
                       "'checkpoints'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "e.jsonl"));
  // A level without a log is an error too.
  EXPECT_EQ(run_cli({"campaign", scenario_, "--events-level", "all"}).code, 2);
}

}  // namespace
}  // namespace myriad::cli
