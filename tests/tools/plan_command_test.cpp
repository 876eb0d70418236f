// `myriad plan` with a deadline, a GPU budget, a batch range and hardware compared,
// and the titles of reports after overrides: run in-process, as `myriad` would.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"
#include "tools/cli/plan_search.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

const std::string k70b = std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-h100-2048.yaml";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The title says what runs: after --set cluster.gpu=B200, B200, not the name's H100.
TEST(PlanCommand, TitlesComeFromTheResolvedRun) {
  const Result r = run_cli({"estimate", k70b, "--set", "cluster.gpu=B200"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(first_line(r.out),
            "Llama 3 70B on 2,048 B200 (scenario \"Llama 3 70B on 2,048 H100\" with --set "
            "cluster.gpu)");
  const Result plain = run_cli({"estimate", k70b});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(first_line(plain.out), "Llama 3 70B on 2,048 H100");
}

// Searches that hardware and GPU count do not tell apart (--vary of another
// key: a what-if of the network) each say their value in a variant column, in
// the table and the CSV; a value every search shares is left out.
TEST(PlanCommand, VariedKeysTheOtherColumnsDoNotShowGetAColumn) {
  const std::string csv = ::testing::TempDir() + "/plan_variant.csv";
  const Result r = run_cli({"plan", k70b, "--gpus", "1024", "--top", "80", "--vary",
                            "cluster.nic_bandwidth=100Gbps,400Gbps", "--vary",
                            "cluster.gpus_per_node=8", "--csv", csv});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("variant"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster.nic_bandwidth=100Gbps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster.nic_bandwidth=400Gbps"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cluster.gpus_per_node=8  "), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  EXPECT_NE(text.find(",variant\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",cluster.nic_bandwidth=400Gbps\n"), std::string::npos) << text;
  // One search: no such column.
  const Result one = run_cli({"plan", k70b, "--gpus", "1024", "--top", "3"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out.find("variant"), std::string::npos) << one.out;
}

// Expectation: with a deadline the console says how many layouts meet it, and
// when none does, how far the fastest is and what would close the gap (70B on
// 15T tokens at 1,024 GPUs: no layout in a day, every one in a year).
TEST(PlanCommand, SaysWhetherAnyLayoutMeetsTheDeadline) {
  const Result none = run_cli({"plan", k70b, "--max-days", "1", "--gpus", "1024", "--top", "1"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_NE(none.out.find("meets the 1-day deadline: the fastest takes"), std::string::npos)
      << none.out;
  EXPECT_NE(none.out.find("on 1,024 GPUs. More GPUs (--gpus)"), std::string::npos) << none.out;
  const Result all = run_cli({"plan", k70b, "--max-days", "365", "--gpus", "1024", "--top", "1"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(all.out.find("within the memory headroom meet the 365-day deadline"), std::string::npos)
      << all.out;
  EXPECT_EQ(all.out.find("None of"), std::string::npos) << all.out;
}

// Expectation: a plain range of GPUs is the whole-node counts whose number of
// nodes is 2^k x 1, 3, 5 or 7 (by hand: 1,024 to 2,048 nodes of 8; 114 to 227
// racks of 72: 128, 160, 192, 224); a list or a stepped range is taken as given.
TEST(PlanCommand, GpuCountsOfARange) {
  bool ranged = false;
  EXPECT_EQ(gpu_counts("8192..16384", 8, &ranged),
            (std::vector<int>{8192, 10240, 12288, 14336, 16384}));
  EXPECT_TRUE(ranged);
  EXPECT_EQ(gpu_counts("8192..16384", 72), (std::vector<int>{9216, 11520, 13824, 16128}));
  EXPECT_EQ(gpu_counts("48..64", 8), (std::vector<int>{48, 56, 64}));
  EXPECT_EQ(gpu_counts("8192,12288", 8, &ranged), (std::vector<int>{8192, 12288}));
  EXPECT_FALSE(ranged);
  EXPECT_EQ(gpu_counts("8192..16384:4096", 8), (std::vector<int>{8192, 12288, 16384}));
  EXPECT_TRUE(gpu_counts("9..15", 8).empty());
  EXPECT_THROW((void)gpu_counts("16384..8192", 8), std::invalid_argument);
  EXPECT_THROW((void)gpu_counts("0,8", 8), std::invalid_argument);
  EXPECT_THROW((void)gpu_counts("x", 8), std::invalid_argument);
}

// Expectation: a GPU count at which the scenario's own layout is invalid (3,072
// GPUs at tp 8 pp 4: dp 96 divides no batch of 1,024) is no reason to refuse: the
// search finds the layouts that are valid there. Before, `plan` refused the
// scenario with the batch's error.
TEST(PlanCommand, TheScenariosOwnLayoutNeedNotHoldAtAnotherCount) {
  const Result r = run_cli(
      {"plan", k70b, "--set", "cluster.gpus=3072", "--global-batch", "1024..1536", "--top", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("3072 x H100-SXM5-80GB"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("(the scenario's own layout; the search tries others)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("Best 2 by days"), std::string::npos) << r.out;
}

// The text without the line that says how long the search took.
std::string without_rates(const std::string& text) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    if (line.find(" candidates in ") == std::string::npos) out += line + "\n";
    at = end + 1;
  }
  return out;
}

// Expectation: one command answers "the cheapest within D days on up to N GPUs,
// on these GPUs": the deadline, the counts and the clusters searched are said; the
// table ranks the layouts that meet the deadline first by cost and says which do;
// each cluster's first is listed; the same command gives the same text.
TEST(PlanCommand, OneCommandForADeadlineABudgetAndSeveralGpus) {
  const std::string example =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";
  // clang-format off
  const std::vector<std::string> args = {
      "plan", example, "--max-days", "15", "--gpus", "48..64", "--global-batch", "48..64",
      "--vary", "cluster.gpu=H100,B200", "--vary", "cluster.price_per_gpu_hour=2,3.5", "--zip",
      "--top", "6"};
  // clang-format on
  const Result r = run_cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("6 searches, GPUs from --gpus 48..64: whole nodes"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("H100-SXM5-80GB in Llama-3-like RoCE (rates of the H100-SXM5-80GB "
                       "profile): 48, 56, 64"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("deadline: 15 days to 1.00 T tokens (--max-days); ranked by cost"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Best 6 by cost (min)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The first of each cluster by cost"), std::string::npos) << r.out;
  // The deadline column: every "meets" before any miss ("+N d").
  const std::size_t table = r.out.find("Best 6 by cost");
  const std::size_t first_miss = r.out.find(" d  ", table);
  const std::size_t last_meet = r.out.rfind("meets", r.out.find("The first of each", table));
  ASSERT_NE(last_meet, std::string::npos) << r.out;
  if (first_miss != std::string::npos) {
    EXPECT_LT(last_meet, first_miss) << r.out;
  }
  EXPECT_NE(r.out.find("B200 in Llama-3-like RoCE"), std::string::npos) << r.out;
  EXPECT_EQ(without_rates(run_cli(args).out), without_rates(r.out));
}

}  // namespace
}  // namespace myriad::cli
