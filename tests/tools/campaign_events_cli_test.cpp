// `myriad campaign --events` at scale: `--events-level` and one line per
// repair incident, through the command line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <array>
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

// The HTML report's data (its <script id="myriad-data">) after `campaign
// --days 5 --seeds 1` with `extra` options, and the command's result.
nlohmann::json report_data(const std::string& scenario, const std::filesystem::path& dir,
                           const std::vector<std::string>& extra, Result* result) {
  const auto html = (dir / "report.html").string();
  std::vector<std::string> args = {"campaign", scenario,
                                   "--seeds",  "1",
                                   "--report", html,
                                   "--set",    "cluster.price_per_gpu_hour=2",
                                   "--json",   (dir / "report.json").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  *result = run_cli(args);
  EXPECT_EQ(result->code, 0) << result->err;
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return nlohmann::json::parse(test_support::report_data_text(text));
}

TEST_F(EventLog, InFixedDaysTheReportChartsTokensAndTokensPerDollarNotFlatDaysAndCost) {
  // Two policies that lose different amounts: no spares waits for repairs.
  std::ofstream(scenario_, std::ios::app)
      << "  - {name: no-spares, repair_time: 12h}\n";  // appended to policies
  Result r;
  const auto days = report_data(scenario_, dir_, {"--days", "5"}, &r);
  EXPECT_DOUBLE_EQ(days["fixed_days"].get<double>(), 5);
  const auto& p = days["policies"];
  ASSERT_EQ(p.size(), 2U);
  for (const auto& policy : p) {
    // Every policy lasts 5 days at one price: nothing to compare in those.
    EXPECT_FALSE(policy.contains("wall_days")) << policy;
    EXPECT_FALSE(policy.contains("cost_usd")) << policy;
    EXPECT_GT(policy["tokens"]["mean"].get<double>(), 0) << policy;
  }
  EXPECT_GT(p[0]["tokens"]["mean"].get<double>(), p[1]["tokens"]["mean"].get<double>());
  // Tokens over 5 days x 24 h x the GPUs in service (8 spare nodes or none) x $2.
  const std::array<double, 2> nodes = {24, 16};
  for (std::size_t i = 0; i < 2; ++i) {
    const double usd = 5 * 24 * nodes[i] * 8 * 2;
    EXPECT_NEAR(p[i]["tokens_per_usd"]["mean"].get<double>(),
                p[i]["tokens"]["mean"].get<double>() / usd,
                1e-9 * p[i]["tokens"]["mean"].get<double>());
  }
  // To a token target, the days and the cost differ by policy.
  const auto target = report_data(scenario_, dir_, {"--tokens", "20B"}, &r);
  EXPECT_EQ(target["fixed_days"].get<double>(), 0);
  const auto& q = target["policies"];
  EXPECT_LT(q[0]["wall_days"]["mean"].get<double>(), q[1]["wall_days"]["mean"].get<double>());
  EXPECT_NE(q[0]["cost_usd"]["mean"].get<double>(), q[1]["cost_usd"]["mean"].get<double>());
  EXPECT_FALSE(q[0].contains("tokens"));
}

TEST_F(EventLog, TheFailureTimelineCountsTheLoggedSeedsInterruptionsAndTheirHours) {
  Result r;
  const auto data = report_data(scenario_, dir_, {"--days", "5"}, &r);
  std::ifstream in(dir_ / "report.json");
  const auto json = nlohmann::json::parse(in);
  // One seed: its mean is the logged run's figure.
  const auto& figures = json["policies"][0]["figures"];
  const double interruptions = figures["interruptions"]["mean"].get<double>();
  double hours = 0;
  for (const char* cause : {"detection", "repair_wait", "restart", "lost_work"}) {
    hours += figures["lost_hours"][cause]["mean"].get<double>();
  }
  ASSERT_GT(interruptions, 2);
  const auto& timeline = data["timeline"];
  EXPECT_EQ(timeline["seed"], 0);
  EXPECT_EQ(timeline["interruptions"].size(), static_cast<std::size_t>(interruptions));
  double drawn = 0;
  for (const auto& i : timeline["interruptions"]) {
    EXPECT_EQ(i["policy"], "spares");
    EXPECT_GE(i["day"].get<double>(), 0);
    EXPECT_LE(i["day"].get<double>(), 5);
    EXPECT_NEAR(i["hours_lost"].get<double>(),
                i["downtime_h"].get<double>() + i["lost_work_h"].get<double>(), 1e-9);
    drawn += i["hours_lost"].get<double>();
  }
  EXPECT_NEAR(drawn, hours, 1e-6);
  // The leaf failure at hour 10: its domain and nodes.
  bool leaf = false;
  for (const auto& i : timeline["interruptions"]) {
    leaf = leaf || (i["domain"] == "leaf" && i["nodes"] == "8-15" && i["cause"] == "switch");
  }
  EXPECT_TRUE(leaf) << timeline;
  // The text: five days in ten bins of 12 hours, then the total of the same seed.
  EXPECT_NE(r.out.find("failure timeline of seed 0 (--event-seed)"), std::string::npos) << r.out;
  for (const char* bin : {"\n  hours ", "\n  0-12 ", "\n  108-120 ", "\n  total "}) {
    EXPECT_NE(r.out.find(bin), std::string::npos) << bin << r.out;
  }
  EXPECT_EQ(r.out.find("\n  120-132 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fmt::format("{}, {:.1f} h", static_cast<int>(interruptions), hours)),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace myriad::cli
