// The `myriad` command run in-process: output, errors and exit codes.
#include "tools/cli/cli.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "myriad_source_paths.hpp"
#include "sim/planning/sweep.hpp"
#include "sim/step/step_engine.hpp"
#include "tests/tools/run_cli.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

// Same, with `input` as standard input.
Result run_cli_in(const std::vector<std::string>& args, const std::string& input) {
  return run_cli(args, &input);
}

const std::string kDefault =
    std::string(MYRIAD_SCENARIO_DIR) + "/examples/gpt3-175b-megascale-12288.yaml";
const std::string kMalformed = std::string(MYRIAD_TEST_DATA_DIR) + "/malformed";

TEST(Cli, CheckPrintsTheResolvedScenario) {
  const Result r = run_cli({"check", kDefault});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("valid"), std::string::npos);
  EXPECT_NE(r.out.find("12288 GPUs (A100-SXM4-80GB) = 1536 nodes x 8"), std::string::npos);
  EXPECT_NE(r.out.find("nic_bandwidth: 25000000000B/s  # 25 GB/s = 200 Gbps"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dp: 192"), std::string::npos);
}

// Expectation: every scenario verb reads the scenario from stdin as `-` and takes
// `--set`, which changes what it reports; a bad override is a usage error that
// names it.
TEST(Cli, EveryScenarioVerbTakesStdinAndSet) {
  const std::string text =
      "cluster: {preset: megascale-like, gpus: 256}\n"
      "model: {preset: gpt3-175b-megascale}\n"
      "parallelism: {tp: 8, pp: 8, virtual_stages: 2, global_batch: 768}\n"
      "training: {tokens: 1B}\n";
  const Result check = run_cli_in({"check", "-", "--set", "parallelism.pp=4"}, text);
  EXPECT_EQ(check.code, kExitOk) << check.err;
  EXPECT_NE(check.out.find("# <stdin>: valid"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("dp: 8"), std::string::npos) << check.out;
  const Result plain = run_cli_in({"estimate", "-"}, text);
  const Result faster =
      run_cli_in({"estimate", "-", "--set", "cluster.gpu.bf16_peak=624TFLOP/s"}, text);
  EXPECT_EQ(plain.code, kExitOk) << plain.err;
  EXPECT_EQ(faster.code, kExitOk) << faster.err;
  EXPECT_NE(plain.out, faster.out);
  const Result campaign = run_cli_in({"campaign", "-", "--set", "training.tokens=2B"}, text);
  EXPECT_EQ(campaign.code, kExitOk) << campaign.err;
  const Result bad = run_cli({"estimate", kDefault, "--set", "parallelism.tp=banana"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--set parallelism.tp: error: parallelism.tp: expected an integer"),
            std::string::npos)
      << bad.err;
  const Result bad_simulate = run_cli_in({"simulate", "-", "--set", "parallelism.pp=x"}, text);
  EXPECT_EQ(bad_simulate.code, kExitBadInput);
  EXPECT_NE(bad_simulate.err.find("--set parallelism.pp"), std::string::npos) << bad_simulate.err;
  const Result no_input = run_cli({"estimate", "-"});
  EXPECT_EQ(no_input.code, kExitBadInput);
  EXPECT_NE(no_input.err.find("<stdin>"), std::string::npos) << no_input.err;
}

// Expectation: an fp8 job priced with a profile that has no fp8 GEMM rate (the
// A100's) is refused with the reason, not reported as an internal error.
TEST(Cli, AnFp8JobNeedsAProfileWithAnFp8Rate) {
  const Result r =
      run_cli({"estimate", std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-h100-2048.yaml",
               "--profile", std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("training.precision: fp8 GEMMs cannot be priced"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

// Expectation: an fp8 job leads with its MFU against the fp8 peak (the precision
// its GEMMs run at), the bf16 peak's beside it: on H100 (1,979 against 989 TFLOP/s
// dense) the bf16 figure is twice the fp8 one. A bf16 job leads with the bf16 peak's.
TEST(Cli, AnFp8JobLeadsWithItsMfuAgainstTheFp8Peak) {
  const std::string example =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-h100-2048.yaml";
  const Result r = run_cli({"estimate", example});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto figure = [&](const std::string& label) {
    const auto at = r.out.find(label);
    if (at == std::string::npos) return -1.0;
    return std::stod(r.out.substr(r.out.find_first_of("0123456789", at + label.size())));
  };
  const double fp8 = figure("MFU (model FLOPs / fp8 peak)");
  const double bf16 = figure("MFU against the bf16 peak");
  ASSERT_GT(fp8, 0) << r.out;
  ASSERT_GT(bf16, 0) << r.out;
  EXPECT_LT(r.out.find("fp8 peak"), r.out.find("bf16 peak")) << r.out;
  EXPECT_NEAR(bf16 / fp8, 1979.0 / 989.0, 0.02) << r.out;
  const Result plain = run_cli({"estimate", example, "--set", "training.precision=bf16"});
  ASSERT_EQ(plain.code, kExitOk) << plain.err;
  EXPECT_NE(plain.out.find("MFU (model FLOPs / bf16 peak)"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("fp8 peak"), std::string::npos) << plain.out;
}

// Expectation: a rail-only fabric says so in the report, with the groups that
// sit on different rails in different nodes, and in the JSON's topology; the
// expert all-to-alls across nodes cost more than on a fat tree whose switches
// change their rail (PXN off).
TEST(Cli, ARailOnlyFabricSaysWhatCrossesNvlink) {
  const std::string mixtral =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml";
  const auto json = std::filesystem::temp_directory_path() / "myriad-rail-only.json";
  const Result rails =
      run_cli({"estimate", mixtral, "--set", "cluster.network.rail_optimized=true", "--set",
               "cluster.network.topology=rail_only", "--json", json.string()});
  ASSERT_EQ(rails.code, kExitOk) << rails.err;
  EXPECT_NE(rails.out.find("network: rail-only"), std::string::npos) << rails.out;
  EXPECT_NE(rails.out.find("every group sits on the same rails"), std::string::npos) << rails.out;
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc.at("topology"), "rail_only");
  const Result fat = run_cli({"estimate", mixtral, "--set", "cluster.network.rail_optimized=true",
                              "--set", "cluster.network.pxn=false", "--json", json.string()});
  ASSERT_EQ(fat.code, kExitOk) << fat.err;
  EXPECT_EQ(fat.out.find("rail-only"), std::string::npos) << fat.out;
  std::ifstream again(json);
  const auto plain = nlohmann::json::parse(again);
  EXPECT_EQ(plain.at("topology"), "fat_tree");
  EXPECT_GT(doc.at("step_time_s").get<double>(), plain.at("step_time_s").get<double>());
  std::filesystem::remove(json);
}

// Expectation: plan's header says the fabric is rail-only too, without naming
// groups, which sit differently in each layout it searches.
TEST(Cli, PlanOnARailOnlyFabricSaysSo) {
  const Result r =
      run_cli({"plan", std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml",
               "--set", "cluster.network.rail_optimized=true", "--set",
               "cluster.network.topology=rail_only", "--top", "1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto line = r.out.find("network: rail-only");
  ASSERT_NE(line, std::string::npos) << r.out;
  EXPECT_LT(line, r.out.find("Best")) << r.out;
  EXPECT_NE(r.out.find("in a layout whose groups sit on different rails"), std::string::npos)
      << r.out;
}

// Expectation: where no row of plan's table runs the scenario's own schedule
// (ZB-H1 on Llama 3 8B over 64 H100, whose best three run one stage or
// interleave, neither of which ZB-H1 can), plan says so and how to search only
// where it runs.
TEST(Cli, PlanSaysWhenNoRowRunsTheScenariosSchedule) {
  const std::string llama =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";
  const Result r = run_cli({"plan", llama, "--set", "parallelism.schedule=zb-h1", "--set",
                            "parallelism.virtual_stages=1", "--top", "3"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("No row runs the scenario's zb-h1"), std::string::npos) << r.out;
  const Result own = run_cli({"plan", llama, "--schedules", "zb-h1", "--set",
                              "parallelism.virtual_stages=1", "--top", "3"});
  ASSERT_EQ(own.code, kExitOk) << own.err;
  EXPECT_EQ(own.out.find("No row runs"), std::string::npos) << own.out;
}

// Expectation: a model whose layers split evenly over no interleaved pipeline
// (Llama 3 8B cut to 30 layers) gets interleaved rows all the same, the
// embedding and the loss each taking a layer's place (32 over 2 x 8 chunks); the
// table marks them, says so under it, and the best's --set line carries the keys.
TEST(Cli, PlanCountsTheEmbeddingAndTheLossWhereTheChunksNeedIt) {
  const std::string llama =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";
  const Result r = run_cli({"plan", llama, "--set", "model.layers=30", "--set", "parallelism.pp=1",
                            "--set", "parallelism.virtual_stages=1", "--top", "3"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("  8*  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("v*: the model's layers do not split evenly over pp x v model chunks, so "
                       "the embedding and the loss each take a layer's place"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--set parallelism.virtual_stages=8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--set parallelism.embedding_as_layer=true --set "
                       "parallelism.loss_as_layer=true"),
            std::string::npos)
      << r.out;
}

// Expectation: a sweep estimates every configuration of its axes, keeps invalid
// ones as rows with their reason, marks the Pareto front among those that fit,
// and writes the same rows as CSV and JSON Lines.
TEST(Cli, SweepEstimatesEveryConfiguration) {
  const std::string mixtral =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml";
  const auto dir = std::filesystem::temp_directory_path();
  const std::string csv = (dir / ("myriad_sweep_" + std::to_string(getpid()) + ".csv")).string();
  const std::string jsonl =
      (dir / ("myriad_sweep_" + std::to_string(getpid()) + ".jsonl")).string();
  const Result r = run_cli({"sweep", mixtral, "--vary", "parallelism.tp=1,2,3,4", "--vary",
                            "parallelism.micro_batch=1..2", "--pareto", "step-time,memory", "--set",
                            "cluster.price_per_gpu_hour=2.5", "--csv", csv, "--jsonl", jsonl});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("8 configurations of 2 axes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("invalid: parallelism.tp: tp (3) must divide heads (32)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 valid, 4 fit in memory, 4 on the Pareto front"), std::string::npos)
      << r.out;
  std::ifstream csv_in(csv);
  std::string line;
  int lines = 0;
  std::getline(csv_in, line);
  EXPECT_EQ(line.rfind("parallelism.tp,parallelism.micro_batch,gpus,step_time_s", 0), 0U) << line;
  while (std::getline(csv_in, line)) ++lines;
  EXPECT_EQ(lines, 8);
  std::ifstream jsonl_in(jsonl);
  int fronts = 0;
  int records = 0;
  while (std::getline(jsonl_in, line)) {
    const auto j = nlohmann::json::parse(line);
    ++records;
    if (j.contains("pareto") && j["pareto"].get<bool>()) {
      ++fronts;
      EXPECT_TRUE(j["fits"].get<bool>());
      EXPECT_NEAR(j["cost_usd"].get<double>(), 2.5 * j["gpu_hours"].get<double>(), 1e-6);
    }
  }
  EXPECT_EQ(records, 8);
  EXPECT_EQ(fronts, 4);
  std::filesystem::remove(csv);
  std::filesystem::remove(jsonl);
  // Each configuration equals the same estimate run on its own.
  const Result one = run_cli({"estimate", mixtral, "--set", "parallelism.tp=2"});
  const Result swept = run_cli({"sweep", mixtral, "--vary", "parallelism.tp=2"});
  const auto at = one.out.find("step time");
  ASSERT_NE(at, std::string::npos);
  const std::string step = one.out.substr(at + 9, one.out.find('\n', at) - at - 9);
  EXPECT_NE(swept.out.find(step.substr(step.find_first_not_of(' '))), std::string::npos)
      << one.out << swept.out;
}

TEST(Cli, SweepRefusesBadAxesAndObjectives) {
  const std::string mixtral =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--vary", "parallelism.tp"}, "expected KEY=V1,V2"},
      {{"--vary", "parallelism.tp=1,2", "--vary", "parallelism.pp=1", "--zip"},
       "every axis needs as many values"},
      {{"--pareto", "speed"}, "unknown objective 'speed'"},
      {{"--pareto", "cost,days"}, "gives no price (cluster.price_per_gpu_hour)"},
      {{"--vary", "cluster.gpus=1..1000", "--vary", "parallelism.tp=1..1000", "--max-configs",
        "1000"},
       "more than the limit of 1000"},
  };
  for (const auto& [args, want] : cases) {
    std::vector<std::string> full = {"sweep", mixtral};
    full.insert(full.end(), args.begin(), args.end());
    const Result r = run_cli(full);
    EXPECT_EQ(r.code, kExitBadInput) << want;
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
  }
  // A broken base is reported once, as the scenario's problem.
  const Result base =
      run_cli({"sweep", mixtral, "--set", "parallelism.tp=0", "--vary", "parallelism.pp=1,2"});
  EXPECT_EQ(base.code, kExitBadInput);
  EXPECT_NE(base.err.find("--set parallelism.tp"), std::string::npos) << base.err;
  // From standard input.
  std::ifstream in(mixtral);
  std::stringstream text;
  text << in.rdbuf();
  const Result piped = run_cli_in({"sweep", "-", "--vary", "parallelism.tp=2,4"}, text.str());
  EXPECT_EQ(piped.code, kExitOk) << piped.err;
  EXPECT_NE(piped.out.find("<stdin>: 2 configurations"), std::string::npos) << piped.out;
}

// Expectation: plan searches the layouts of the scenario's model on its cluster,
// says how many candidates it pruned and why, lists the best by the objective
// with the engine that priced them, and prints the overrides that reproduce the
// best one; estimate on those overrides gives its step time.
TEST(Cli, PlanRanksLayoutsAndReproducesTheBest) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64, price_per_gpu_hour: 2}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, pp: 2, global_batch: 128}\n"
      "overlap: {tp: true, pp: true, dp: true}\n"
      "training: {tokens: 100B}\n";
  const auto dir = std::filesystem::temp_directory_path();
  const auto file = dir / ("myriad_plan_" + std::to_string(getpid()) + ".yaml");
  const std::string csv = (dir / ("myriad_plan_" + std::to_string(getpid()) + ".csv")).string();
  std::ofstream(file) << text;
  const Result r =
      run_cli({"plan", file.string(), "--objective", "cost", "--top", "3", "--csv", csv});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* want : {"candidates in", "pruned by the scenario checks", "pruned by",
                           "Best 3 by cost (min)", "estimate", "--set parallelism.tp="}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  const auto at = r.out.find("myriad simulate ");
  ASSERT_NE(at, std::string::npos);
  std::istringstream line(r.out.substr(at, r.out.find('\n', at) - at));
  std::string word;
  line >> word >> word;  // myriad simulate
  std::vector<std::string> again = {"estimate"};
  while (line >> word) again.push_back(word);
  const Result best = run_cli(again);
  ASSERT_EQ(best.code, kExitOk) << best.err;
  // Its step time is the first row's.
  const auto step_at = best.out.find("step time");
  ASSERT_NE(step_at, std::string::npos);
  std::string step = best.out.substr(step_at + 9, best.out.find('\n', step_at) - step_at - 9);
  step = step.substr(step.find_first_not_of(' '));
  const auto first_row = r.out.find("\n  1  ");
  ASSERT_NE(first_row, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(first_row, r.out.find('\n', first_row + 1) - first_row).find(step),
            std::string::npos)
      << step << "\n"
      << r.out;
  std::ifstream csv_in(csv);
  std::string header;
  std::string first;
  std::getline(csv_in, header);
  std::getline(csv_in, first);
  EXPECT_EQ(header.rfind("rank,tp,sp,pp,virtual_stages", 0), 0U) << header;
  EXPECT_NE(header.find(",meets_deadline,schedule"), std::string::npos) << header;
  EXPECT_EQ(first.rfind("1,", 0), 0U) << first;
  std::filesystem::remove(file);
  std::filesystem::remove(csv);
  const Result no_price = run_cli({"plan", kDefault, "--objective", "cost"});
  EXPECT_EQ(no_price.code, kExitBadInput);
  EXPECT_NE(no_price.err.find("gives no price"), std::string::npos) << no_price.err;
  const Result bad = run_cli({"plan", kDefault, "--objective", "speed"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("unknown objective 'speed'"), std::string::npos) << bad.err;
  const Result batch = run_cli({"plan", kDefault, "--global-batch", "x"});
  EXPECT_EQ(batch.code, kExitBadInput);
  EXPECT_NE(batch.err.find("--global-batch"), std::string::npos) << batch.err;
}

// Expectation: a --prune variant that leaves fewer experts than a token is routed
// to prunes every candidate: it is bad input (exit 2) naming the variant and what
// is left, not a plan that found no layout (it exited 0 with "No layout fits").
// `plan --schedules` searches the listed pipeline schedules: a schedule column,
// the axis in the searched line and the CSV, and a bad name refused (exit 2).
TEST(Cli, PlanSearchesPipelineSchedules) {
  const std::string llama =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";
  const auto csv = std::filesystem::temp_directory_path() /
                   ("myriad_schedules_" + std::to_string(getpid()) + ".csv");
  const Result r =
      run_cli({"plan", llama, "--schedules", "1f1b,zb-h1", "--top", "40", "--csv", csv.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("x schedule {1f1b (interleaved with v > 1), zb-h1}"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" schedule "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zb-h1"), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_TRUE(header.ends_with(",schedule,recompute_layers,offload_layers,offload_modules,variant"))
      << header;
  std::string row;
  int zb = 0;
  while (std::getline(in, row)) zb += row.ends_with(",zb-h1,0,0,,");
  EXPECT_GT(zb, 0);
  std::filesystem::remove(csv);
  const Result bad = run_cli({"plan", llama, "--schedules", "1f1b,gpipe"});
  EXPECT_EQ(bad.code, kExitBadInput) << bad.out;
  EXPECT_NE(bad.err.find("--schedules"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("found 'gpipe'"), std::string::npos) << bad.err;
}

// `plan --partial-recompute` tries the fewest recomputed layers that fit where a
// layout recomputes every one: the count, the rows ("full N/chunk") and the
// CSV's recompute_layers column.
TEST(Cli, PlanSearchesPartialRecomputation) {
  const std::string llama =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";
  const auto csv = std::filesystem::temp_directory_path() /
                   ("myriad_partial_" + std::to_string(getpid()) + ".csv");
  const Result r = run_cli({"plan", llama, "--set", "model.seq_length=32768", "--partial-recompute",
                            "--top", "5", "--csv", csv.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fit with fewer recomputed (--partial-recompute)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" full 1/chunk "), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::string row;
  int partial = 0;
  while (std::getline(in, row))
    partial += row.find(",full,") != std::string::npos && row.ends_with(",1,0,,");
  EXPECT_GT(partial, 0);
  std::filesystem::remove(csv);
}

// `sweep` over offloaded layers and host links: too few layers overflow the GPU,
// too many the host, and a slow host link shows in the step.
TEST(Cli, SweepOverActivationOffload) {
  const std::string example =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-gb200-72-offload.yaml";
  const Result r = run_cli({"sweep", example, "--vary", "parallelism.offload_layers=40,51,60",
                            "--vary", "cluster.gpu.host_link_bandwidth=64GB/s,450GB/s"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host memory over"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 valid, 2 fit in memory"), std::string::npos) << r.out;
}

// A CSV line's fields (RFC 4180: a quoted field may hold commas and doubled quotes).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// `plan --offload` keeps layouts that fit only with activations offloaded, counts
// them by kind, names them in the table and in the CSV's offload_layers and
// offload_modules columns.
TEST(Cli, PlanSearchesActivationOffload) {
  const std::string llama =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";
  const auto csv = std::filesystem::temp_directory_path() /
                   ("myriad_offload_" + std::to_string(getpid()) + ".csv");
  const Result r = run_cli({"plan", llama, "--set", "model.seq_length=16384", "--offload", "--top",
                            "5", "--csv", csv.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("fit only with activations offloaded to host memory, "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" by modules, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" by whole layers (--offload"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" offloaded "), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  const std::vector<std::string> names = split_csv(header);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const std::size_t layers = column("offload_layers");
  ASSERT_LT(layers, names.size()) << header;
  ASSERT_LT(column("offload_modules"), names.size()) << header;
  std::string row;
  int offloaded = 0;
  while (std::getline(in, row)) {
    const std::vector<std::string> cells = split_csv(row);
    ASSERT_EQ(cells.size(), names.size()) << row;
    offloaded += cells[layers] != "0";
  }
  EXPECT_GT(offloaded, 0);
  std::filesystem::remove(csv);
}

// `estimate` on DualPipe says how much of the expert all-to-alls its F&B passes hide.
TEST(Cli, EstimateSaysWhatDualPipeHides) {
  const Result r =
      run_cli({"estimate", std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml",
               "--set", "parallelism.pp=4", "--set", "parallelism.schedule=dualpipe"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("pp 4 (dualpipe)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DualPipe's F&B passes hide "), std::string::npos) << r.out;
}

// `estimate` says which groups stay inside a node's NVLink domain and which span
// nodes: on one GB200 NVL72 the 72-way FSDP group stays inside; Mixtral's tp 2 x ep
// 8 puts four expert ranks a node on two nodes (in the text and in --json).
TEST(Cli, EstimateSaysWhichGroupsStayInsideANode) {
  const Result nvl72 = run_cli({"estimate", std::string(MYRIAD_SCENARIO_DIR) +
                                                "/examples/llama3-70b-gb200-72-offload.yaml"});
  ASSERT_EQ(nvl72.code, 0) << nvl72.err;
  EXPECT_NE(nvl72.out.find("  groups: dp 72 inside a node of 72 GPUs (NVLink)\n"),
            std::string::npos)
      << nvl72.out;
  EXPECT_NE(nvl72.out.find("1 micro-batch of 2 x 8192 tokens"), std::string::npos) << nvl72.out;
  const auto json = std::filesystem::temp_directory_path() / "myriad_groups_test.json";
  const Result mixtral =
      run_cli({"estimate", std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml",
               "--json", json.string()});
  ASSERT_EQ(mixtral.code, 0) << mixtral.err;
  // --json has them too, group by group.
  const auto groups = nlohmann::json::parse(std::ifstream(json))["groups"];
  std::filesystem::remove(json);
  ASSERT_EQ(groups.size(), 3U) << groups;
  EXPECT_EQ(groups[1],
            (nlohmann::json{{"group", "ep"}, {"size", 8}, {"nodes", 2}, {"per_node", 4}}));
  EXPECT_NE(mixtral.out.find("  groups: tp 2 inside a node of 8 GPUs (NVLink); ep 8 across 2 "
                             "nodes (4 a node), dp 32 across 8 nodes (4 a node)\n"),
            std::string::npos)
      << mixtral.out;
}

TEST(Cli, PlanRefusesAPruneThatLeavesTooFewExperts) {
  const std::string mixtral =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml";
  const Result none = run_cli({"plan", mixtral, "--prune", "experts=9"});
  EXPECT_EQ(none.code, kExitBadInput) << none.out;
  EXPECT_NE(none.err.find("--prune: 'experts=9' prunes 9 of the model's 8 experts and leaves 0"),
            std::string::npos)
      << none.err;
  const Result one = run_cli({"plan", mixtral, "--prune", "none,experts=7"});
  EXPECT_EQ(one.code, kExitBadInput) << one.out;
  EXPECT_NE(one.err.find("leaves 1: fewer than the 2 each token is routed to (top_k)"),
            std::string::npos)
      << one.err;
}

// Expectation: a GPU whose memory is no larger than what the device profile
// reserves has no usable memory; every verb that prices it refuses it (exit 2),
// naming the key where it was written (a negative usable memory was reported).
TEST(Cli, HbmCapacityMustExceedTheProfileReserve) {
  const auto file =
      std::filesystem::temp_directory_path() / ("myriad_hbm_" + std::to_string(getpid()) + ".yaml");
  std::ofstream(file) << "cluster: {preset: llama3-like, gpus: 64, gpu: {preset: H100, "
                         "hbm_capacity: 1GB}}\nmodel: {preset: llama3-8b}\n"
                         "parallelism: {tp: 8, global_batch: 64}\n";
  for (const char* verb : {"estimate", "simulate", "plan", "campaign"}) {
    const Result r = run_cli({verb, file.string()});
    EXPECT_EQ(r.code, kExitBadInput) << verb << r.out;
    EXPECT_NE(r.err.find(":1:76: error: cluster.gpu.hbm_capacity: expected more than the "),
              std::string::npos)
        << verb << ": " << r.err;
    EXPECT_NE(r.err.find("found 1 GB: no memory would be left"), std::string::npos) << r.err;
  }
  std::filesystem::remove(file);
}

// Expectation: a layout that does not fit says what would, each as the --set that
// makes it, with what it needs and what it does to the step; --json has them too
// (Llama 3.1 405B as Megatron-Bridge ran it on 1,024 H100, but with fp32 gradient
// buffers and 2 model chunks a stage, not 8, which keeps more layers in flight:
// 5.9 GiB over).
TEST(Cli, ALayoutThatDoesNotFitSaysWhatWould) {
  const auto file =
      std::filesystem::temp_directory_path() / ("myriad_fit_" + std::to_string(getpid()) + ".yaml");
  const auto json =
      std::filesystem::temp_directory_path() / ("myriad_fit_" + std::to_string(getpid()) + ".json");
  std::ofstream(file) << "cluster: {preset: llama3-like, gpu: H100, gpus: 1024}\n"
                         "model: {preset: llama3-405b}\n"
                         "parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 2, cp: 2, "
                         "embedding_as_layer: true, loss_as_layer: true, global_batch: 512, "
                         "zero: 1}\n"
                         "overlap: {tp: true, pp: true, dp: true}\n"
                         "training: {precision: fp8, gradient_precision: fp32}\n";
  const Result r = run_cli({"estimate", file.string(), "--json", json.string()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fits with --set parallelism.recompute=full: needs "), std::string::npos)
      << r.out;
  const auto j = nlohmann::json::parse(std::ifstream(json));
  ASSERT_TRUE(j.contains("fit_remedies"));
  bool full = false;
  for (const auto& m : j["fit_remedies"]) {
    EXPECT_LT(m["memory_needed_bytes"].get<double>(), j["memory"]["needed"].get<double>());
    if (m["value"] == "full") {
      full = true;
      EXPECT_TRUE(m["fits"].get<bool>());
      EXPECT_GT(m["step_time_s"].get<double>(), j["step_time_s"].get<double>());
    }
  }
  EXPECT_TRUE(full);
  std::filesystem::remove(file);
  std::filesystem::remove(json);
}

// Expectation: --rescore plays the best K on the step engine (each in a child
// process) and over days on the campaign engine, ranks them again, and says which
// engine gave each figure; the step engine's figure is what `simulate` gives for
// the layout the plan prints.
// Expectation: --max-configs is held to sim::kMostSweepConfigs (10^7 was
// accepted, and axes that wide ran for hours, silent); on a terminal the sweep
// draws its progress on standard error and erases it when done, and elsewhere
// draws nothing.
TEST(Cli, SweepBoundsItsConfigurationsAndShowsProgressOnATerminal) {
  const std::string mixtral =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/mixtral-8x7b-h100-64.yaml";
  const Result wide = run_cli({"sweep", mixtral, "--vary", "parallelism.tp=1,2", "--max-configs",
                               std::to_string(sim::kMostSweepConfigs + 1)});
  EXPECT_EQ(wide.code, 2) << wide.err;
  EXPECT_NE(wide.err.find("--max-configs"), std::string::npos) << wide.err;
  const std::vector<std::string> args = {"sweep", mixtral, "--vary", "parallelism.tp=1,2,4"};
  std::ostringstream out;
  std::ostringstream err;
  Environment env = test_support::test_environment();
  env.terminal = true;
  ASSERT_EQ(run(args, out, err, env), 0) << err.str();
  EXPECT_NE(err.str().find("\rsweep: 0 of 3 configurations (0 %)"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("\r\033[K"), std::string::npos) << "the line is erased at the end";
  EXPECT_EQ(run_cli(args).err, "") << "no progress line off a terminal";
}

// Expectation: a plan whose lists span more than sim::kMostCandidates (here
// 100,000 global batches, a range with a step: over 10^9 candidates, which ran for
// days) is refused up front with exit 2, naming --global-batch; nothing is searched.
TEST(Cli, PlanRefusesTooLargeASearchUpFront) {
  const Result r =
      run_cli({"plan", kDefault, "--global-batch", "1..100000:1", "--objective", "step-time"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("myriad plan: error: the search spans"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("global batches 100000 (--global-batch)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Cli, PlanRescoresTheBestByTheStepAndCampaignEngines) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, pp: 2, global_batch: 128}\n"
      "overlap: {tp: true, pp: true, dp: true}\n"
      "training: {tokens: 100B}\n";
  const auto dir = std::filesystem::temp_directory_path();
  const auto file = dir / ("myriad_rescore_" + std::to_string(getpid()) + ".yaml");
  const auto csv = (dir / ("myriad_rescore_" + std::to_string(getpid()) + ".csv")).string();
  const auto json = (dir / ("myriad_rescore_" + std::to_string(getpid()) + ".json")).string();
  std::ofstream(file) << text;
  const Result r = run_cli({"plan", file.string(), "--top", "3", "--rescore", "step,campaign",
                            "--seeds", "2", "--csv", csv});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* want : {"est. #", "vs estimate", "ETTR", "campaign on step", "over 2 seeds"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  std::ifstream in(csv);
  std::string header_line;
  std::string first_line;
  std::getline(in, header_line);
  std::getline(in, first_line);
  const auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    return cells;
  };
  const auto header = split(header_line);
  const auto first = split(first_line);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() || static_cast<std::size_t>(it - header.begin()) >= first.size()
               ? std::string{}
               : first[static_cast<std::size_t>(it - header.begin())];
  };
  ASSERT_EQ(column("engine"), "campaign on step") << first_line;
  const double simulated = std::stod(column("simulated_step_time_s"));
  const double estimated = std::stod(column("estimated_step_time_s"));
  EXPECT_NEAR(simulated / estimated, 1.0, 0.05);
  const double ettr = std::stod(column("ettr"));
  EXPECT_GT(ettr, 0.5);
  EXPECT_LE(ettr, 1.0);
  // The days are the campaign's, at least the healthy days at the simulated step.
  const double days = std::stod(column("days"));
  EXPECT_GT(days, 100e9 / (128.0 * 4096) * simulated / 86400 * 0.999);
  // `simulate` of the printed layout gives the step engine's figure.
  const auto at = r.out.find("myriad simulate ");
  ASSERT_NE(at, std::string::npos);
  std::istringstream line(r.out.substr(at, r.out.find('\n', at) - at));
  std::string word;
  line >> word >> word;
  std::vector<std::string> again = {"simulate", "--json", json};
  while (line >> word) again.push_back(word);
  const Result sim = run_cli(again);
  ASSERT_EQ(sim.code, kExitOk) << sim.err;
  std::ifstream json_in(json);
  const auto j = nlohmann::json::parse(json_in);
  EXPECT_NEAR(j["step_time_s"].get<double>() / simulated, 1.0, 1e-8);
  for (const auto& f : {file.string(), csv, json}) std::filesystem::remove(f);
  const Result bad = run_cli({"plan", kDefault, "--rescore", "guess"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--rescore"), std::string::npos) << bad.err;
}

// Expectation: --report writes one self-contained page (Vega, Vega-Lite, the
// script and the data inlined; nothing loaded from elsewhere) whose data has a row
// per configuration; without the npm packages it fails and says how to install them.
TEST(Cli, ReportsAreSelfContainedPages) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string page = (dir / ("myriad_report_" + std::to_string(getpid()) + ".html")).string();
  const std::vector<std::string> sweep = {"sweep",    kDefault,
                                          "--vary",   "parallelism.pp=4,8,16",
                                          "--vary",   "parallelism.virtual_stages=1,2",
                                          "--pareto", "days,memory",
                                          "--report", page};
  const auto run_with = [](const std::vector<std::string>& args, const std::string& report_dir) {
    std::ostringstream out;
    std::ostringstream err;
    Environment env = test_support::test_environment();
    env.report_dir = report_dir;
    const int code = run(args, out, err, env);
    return Result{code, out.str(), err.str()};
  };
  const Result missing = run_with(sweep, (dir / "myriad-no-report-assets").string());
  EXPECT_EQ(missing.code, kExitFailure);
  EXPECT_NE(missing.err.find("run tools/setup.sh"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(page));
  if (!std::filesystem::exists(std::string(MYRIAD_REPORT_DIR) +
                               "/node_modules/vega-lite/build/vega-lite.min.js")) {
    GTEST_SKIP() << "the report's npm packages are not installed (tools/setup.sh)";
  }
  const Result r = run_with(sweep, MYRIAD_REPORT_DIR);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0U);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  const std::string text = test_support::report_data_text(html);
  ASSERT_FALSE(text.empty());
  const auto data = nlohmann::json::parse(text);
  EXPECT_EQ(data["kind"], "configurations");
  EXPECT_EQ(data["rows"].size(), 6U);
  EXPECT_EQ(data["front"]["keys"], nlohmann::json({"days", "memory"}));
  std::size_t drawn = 0;
  for (const auto& row : data["rows"]) {
    if (!row.contains("m")) continue;
    ++drawn;
    EXPECT_GT(row["m"]["step_time_s"].get<double>(), 0);
    EXPECT_TRUE(row["breakdown"].contains("compute"));
  }
  EXPECT_GE(drawn, 1U);
  std::filesystem::remove(page);
}

// Expectation: every row of the plan report shows the layout as played: dp is
// the GPUs over tp x pp x cp, not the base scenario's dp (issue 41 item 4: every
// row showed the base's).
TEST(Cli, PlanReportRowsShowTheirOwnDataParallelDegree) {
  if (!std::filesystem::exists(std::string(MYRIAD_REPORT_DIR) +
                               "/node_modules/vega-lite/build/vega-lite.min.js")) {
    GTEST_SKIP() << "the report's npm packages are not installed (tools/setup.sh)";
  }
  const std::string page = (std::filesystem::temp_directory_path() /
                            ("myriad-plan-dp-" + std::to_string(getpid()) + ".html"))
                               .string();
  const std::string example =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";  // 64 GPUs, dp 2
  const Result r = run_cli({"plan", example, "--report", page});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string text = test_support::report_data_text(html);
  ASSERT_FALSE(text.empty());
  const auto data = nlohmann::json::parse(text);
  std::set<int> seen;
  for (const auto& row : data["rows"]) {
    const auto& p = row["p"];
    const int dp = 64 / (p["tp"].get<int>() * p["pp"].get<int>() * p["cp"].get<int>());
    EXPECT_EQ(p["dp"].get<int>(), dp) << p.dump();
    seen.insert(p["dp"].get<int>());
  }
  EXPECT_GT(seen.size(), 3U);
  std::filesystem::remove(page);
}

// Expectation: a table's rule spans its columns, but a last column of prose
// counts for at most 40 characters (issue 41 item 12: rules 250-450 wide).
TEST(Cli, TableRulesDoNotRunTheLengthOfTheLongestSentence) {
  Table t({"key", "count", "for example"}, "lrl");
  t.add({"parallelism.tp", "12", std::string(300, 'x')});
  t.add({"parallelism.pp", "3", "short"});
  const std::string text = t.str(0);
  const auto rule_at = text.find('\n') + 1;
  const std::string rule = text.substr(rule_at, text.find('\n', rule_at) - rule_at);
  EXPECT_EQ(rule, std::string(14 + 2 + 5 + 2 + 40, '-'));
  Table numbers({"policy", "ETTR"}, "lr");
  numbers.add({"megascale-like", "0.9512"});
  EXPECT_NE(numbers.str(0).find(std::string(14 + 2 + 6, '-') + "\n"), std::string::npos);
}

// Expectation: a scenario's sweep section gives the axes when --vary does not;
// --vary replaces them; its bad values are errors located in the file.
TEST(Cli, SweepTakesItsAxesFromTheScenario) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, pp: 2, global_batch: 128}\n"
      "training: {tokens: 100B}\n"
      "sweep:\n"
      "  axes:\n"
      "    - {key: parallelism.pp, values: \"1,2,4\"}\n"
      "    - {key: parallelism.zero, values: \"0..3\"}\n"
      "  pareto: days,memory\n";
  const Result r = run_cli_in({"sweep", "-"}, text);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("12 configurations of 2 axes (the scenario's sweep section)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("on the Pareto front of days (min), memory (min)"), std::string::npos)
      << r.out;
  const Result replaced = run_cli_in({"sweep", "-", "--vary", "parallelism.pp=1,2"}, text);
  ASSERT_EQ(replaced.code, kExitOk) << replaced.err;
  EXPECT_NE(replaced.out.find("2 configurations of 1 axis\n"), std::string::npos) << replaced.out;
  std::string bad = text;
  bad.replace(bad.find("0..3"), 4, "0..x");
  const Result wrong = run_cli_in({"sweep", "-"}, bad);
  EXPECT_EQ(wrong.code, kExitBadInput);
  EXPECT_NE(wrong.err.find("<stdin>:8:"), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("sweep.axes[1].values: parallelism.zero: '0..x'"), std::string::npos)
      << wrong.err;
  std::string unknown = text;
  unknown.replace(unknown.find("  pareto"), 8, "  paretto");
  const Result typo = run_cli_in({"check", "-"}, unknown);
  EXPECT_EQ(typo.code, kExitBadInput);
  EXPECT_NE(typo.err.find("paretto"), std::string::npos) << typo.err;
}

// Expectation: the line that reproduces the best layout keeps the user's own
// overrides: the layout is the best on the scenario they changed.
TEST(Cli, PlanReproducesTheBestWithTheUsersOverrides) {
  const std::string example =
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/megatron-175b-selene-64.yaml";
  const Result r =
      run_cli({"plan", example, "--set", "cluster.gpu=H200", "--top", "1", "--global-batch", "64"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto at = r.out.find("myriad simulate ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_LT(line.find("--set cluster.gpu=H200"), line.find("--set parallelism.tp="));
}

TEST(Cli, CheckOriginsNoteWhereValuesCameFrom) {
  const Result r = run_cli({"check", "--origins", kDefault});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("from <derived>"), std::string::npos);
  EXPECT_NE(r.out.find("megascale-like.yaml:"), std::string::npos);
}

TEST(Cli, CheckWritesJson) {
  const auto file = std::filesystem::temp_directory_path() / "myriad_cli_check.json";
  const Result r = run_cli({"check", "--quiet", "--json", file.string(), kDefault});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["cluster"]["gpus"].get<int>(), 12288);
  std::filesystem::remove(file);
}

TEST(Cli, CheckRejectsBadScenarioWithExitTwo) {
  const Result r = run_cli({"check", kMalformed + "/many-problems-at-once.yaml"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("4 problems"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("many-problems-at-once.yaml:4:7: error: parallelism.tp"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, CheckOfAMissingFileIsBadInput) {
  const Result r = run_cli({"check", "/nonexistent/scenario.yaml"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("cannot read scenario: No such file or directory"), std::string::npos);
}

TEST(Cli, CheckToAMissingFolderIsBadInput) {
  const Result r = run_cli({"check", "--json", "/nonexistent/dir/x.json", kDefault});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(
      r.err.find("--json /nonexistent/dir/x.json: its folder /nonexistent/dir does not exist"),
      std::string::npos)
      << r.err;
}

TEST(Cli, ExplainListsEveryKey) {
  const Result r = run_cli({"explain"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* key : {"nic_bandwidth", "oversubscription", "kv_heads", "virtual_stages",
                          "recompute", "precision", "seed", "expert_ffn_hidden"}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  }
}

TEST(Cli, ExplainOneSectionOrKey) {
  const Result section = run_cli({"explain", "cluster.network.tiers"});
  EXPECT_EQ(section.code, kExitOk);
  EXPECT_NE(section.out.find("oversubscription"), std::string::npos);
  EXPECT_EQ(section.out.find("kv_heads"), std::string::npos);
  const Result item = run_cli({"explain", "cluster.network.tiers[0]"});  // as errors name it
  EXPECT_EQ(item.code, kExitOk);
  EXPECT_NE(item.out.find("oversubscription"), std::string::npos);
  const Result key = run_cli({"explain", "parallelism.tp"});
  EXPECT_EQ(key.code, kExitOk);
  EXPECT_NE(key.out.find("tensor-parallel degree"), std::string::npos);
}

TEST(Cli, ExplainUnknownSectionSuggests) {
  const Result r = run_cli({"explain", "paralelism"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("did you mean 'parallelism'"), std::string::npos) << r.err;
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli({}).code, kExitBadInput);
  EXPECT_EQ(run_cli({"frobnicate"}).code, kExitBadInput);
  EXPECT_EQ(run_cli({"check"}).code, kExitBadInput);
  EXPECT_EQ(run_cli({"check", kDefault, "--no-such-option"}).code, kExitBadInput);
}

TEST(Cli, HelpAndVersionOnEveryVerb) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"check", "--help"}, {"explain", "--help"}}) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, {"check", "--version"}, {"explain", "--version"}}) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_EQ(r.out.rfind("myriad ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("SimGrid"), std::string::npos);
  }
}

TEST(Cli, EstimatePrintsTheReportAndWritesJson) {
  const auto file = std::filesystem::temp_directory_path() / "myriad_cli_estimate.json";
  const Result r = run_cli({"estimate", "--json", file.string(), kDefault});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (const char* part : {"step time", "MFU", "tokens/s", "pipeline bubble", "memory per GPU",
                           "dp.grads", "qkv+fc1"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part;
  }
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  for (const char* key :
       {"step_time_s", "mfu", "tokens_per_s", "breakdown", "memory_per_gpu_bytes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  double sum = 0;
  for (const auto& [name, seconds] : j["breakdown"].items()) sum += seconds.get<double>();
  EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-9);
  std::filesystem::remove(file);
}

// Expectation: a base scenario that is valid only with the axes' values (here a
// growth what-if whose saved fraction the axis gives) sweeps as its first
// configuration; one broken elsewhere is refused with its own errors.
TEST(Cli, SweepTakesABaseCompletedByItsAxes) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, pp: 2, global_batch: 128}\n"
      "training: {tokens: 100B, growth: {from: llama3-8b, tokens: 10B, source: x}}\n";
  const Result missing = run_cli_in({"sweep", "-"}, text);
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("training.growth.saved_fraction: missing"), std::string::npos)
      << missing.err;
  // From itself it does not grow (llama3-8b is not smaller than llama3-8b): each
  // row says so, and the sweep runs.
  const Result r =
      run_cli_in({"sweep", "-", "--vary", "training.growth.saved_fraction=0.1,0.2"}, text);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("not fewer than the model's"), std::string::npos) << r.out;
  const Result broken = run_cli_in(
      {"sweep", "-", "--set", "parallelism.tp=3", "--vary", "training.growth.saved_fraction=0.1"},
      text);
  EXPECT_EQ(broken.code, kExitBadInput);
  EXPECT_NE(broken.err.find("parallelism.tp"), std::string::npos) << broken.err;
}

// Expectation: training.growth reaches every verb that counts days. `estimate`
// adds the small model's training to (1 - F) of the model's own and says where F
// comes from; `sweep` over F and `plan` show days with growth; `campaign` runs
// both phases and the job without growth on the same seeds, and the saving is the
// difference.
TEST(Cli, GrowthAddsTheSmallModelsTrainingEverywhere) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 256}\n"
      "model: {preset: llama3-70b}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, virtual_stages: 5, zero: 1, global_batch: 256}\n"
      "overlap: {tp: true, pp: true, dp: true}\n"
      "training:\n"
      "  tokens: 1T\n"
      "  growth: {from: llama3-8b, tokens: 100B, saved_fraction: 0.3, source: a test}\n"
      "policies: [{name: spares, hot_spares: 2}]\n";
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(getpid());
  const auto file = dir / ("myriad_growth_" + tag + ".yaml");
  std::ofstream(file) << text;
  const auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream t;
    t << in.rdbuf();
    std::filesystem::remove(p);
    return t.str();
  };

  const auto json = dir / ("myriad_growth_" + tag + ".json");
  const Result e = run_cli({"estimate", file.string(), "--json", json.string()});
  ASSERT_EQ(e.code, kExitOk) << e.err;
  EXPECT_NE(e.out.find("growth (what-if): grown from llama3-8b, saving 30 %"), std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find("source of the saving: a test"), std::string::npos);
  const auto j = nlohmann::json::parse(read(json));
  const auto& g = j.at("growth");
  const double small = g.at("small").at("metrics").at("days").get<double>();
  const double own = g.at("without_growth").at("days").get<double>();
  EXPECT_GT(small, 0);
  EXPECT_DOUBLE_EQ(own, j.at("days_to_target").get<double>());
  EXPECT_NEAR(g.at("grown").at("days").get<double>(), small + 0.7 * own, 1e-9 * own);
  EXPECT_NEAR(g.at("saved_days").get<double>(), 0.3 * own - small, 1e-9 * own);

  const std::string csv = (dir / ("myriad_growth_" + tag + ".csv")).string();
  const Result sw = run_cli(
      {"sweep", file.string(), "--vary", "training.growth.saved_fraction=0,0.3", "--csv", csv});
  ASSERT_EQ(sw.code, kExitOk) << sw.err;
  std::istringstream rows(read(csv));
  std::string header, at_0, at_03;
  std::getline(rows, header);
  std::getline(rows, at_0);
  std::getline(rows, at_03);
  const auto days_of = [&](const std::string& row) {
    std::vector<std::string> h, cells;
    std::istringstream a(header), b(row);
    for (std::string x; std::getline(a, x, ',');) h.push_back(x);
    for (std::string x; std::getline(b, x, ',');) cells.push_back(x);
    const auto col = std::find(h.begin(), h.end(), "days") - h.begin();
    return std::stod(cells.at(static_cast<std::size_t>(col)));
  };
  EXPECT_NEAR(days_of(at_0), own + small, 1e-3 * own);
  EXPECT_NEAR(days_of(at_03), 0.7 * own + small, 1e-3 * own);

  const Result p = run_cli({"plan", file.string(), "--top", "2"});
  ASSERT_EQ(p.code, kExitOk) << p.err;
  EXPECT_NE(p.out.find("growth (what-if): grown from llama3-8b"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("days, GPU-hours and cost below include it"), std::string::npos);

  const Result c = run_cli(
      {"campaign", file.string(), "--seeds", "2", "--threads", "1", "--json", json.string()});
  ASSERT_EQ(c.code, kExitOk) << c.err;
  EXPECT_NE(c.out.find("saved (paired by seed)"), std::string::npos) << c.out;
  const auto cj = nlohmann::json::parse(read(json));
  const auto& cg = cj.at("growth");
  EXPECT_DOUBLE_EQ(cg.at("grown_tokens").get<double>(), 0.7e12);
  EXPECT_DOUBLE_EQ(cg.at("small_tokens").get<double>(), 100e9);
  const auto& spares = cg.at("policies").at("spares");
  const auto mean = [&](const char* key) { return spares.at(key).at("mean").get<double>(); };
  EXPECT_NEAR(mean("total_days"), mean("small_days") + mean("grown_days"), 1e-9 * own);
  EXPECT_NEAR(mean("saved_days"), mean("without_growth_days") - mean("total_days"), 1e-9 * own);
  EXPECT_GT(mean("saved_days"), 0);
  std::filesystem::remove(file);
}

// `simulate` in a child process (SimGrid runs one engine per process); the
// JSON it wrote (and, in `bytes`, the file as written), or null when it failed.
nlohmann::json simulate_json(const std::string& scenario, const std::string& name,
                             std::string* bytes = nullptr) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("myriad_cli_" + name + "_" + std::to_string(getpid()) + ".json");
  const pid_t pid = fork();
  if (pid == 0) _exit(run_cli({"simulate", "--json", file.string(), scenario}).code);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kExitOk) return nullptr;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(file);
  if (bytes != nullptr) *bytes = text.str();
  return nlohmann::json::parse(text.str());
}

// Expectation: simulate reads stdin and takes --set like the other verbs.
TEST(Cli, SimulateTakesStdinAndSet) {
  const std::string text =
      "cluster: {preset: megascale-like, gpus: 256}\n"
      "model: {preset: gpt3-175b-megascale}\n"
      "parallelism: {tp: 8, pp: 8, virtual_stages: 2, global_batch: 768}\n";
  const auto step_time = [&](const std::vector<std::string>& sets) {
    const auto file = std::filesystem::temp_directory_path() /
                      ("myriad_cli_stdin_" + std::to_string(getpid()) + ".json");
    std::vector<std::string> args = {"simulate", "-", "--json", file.string()};
    for (const auto& set : sets) args.insert(args.end(), {"--set", set});
    const pid_t pid = fork();
    if (pid == 0) _exit(run_cli_in(args, text).code);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kExitOk);
    std::ifstream in(file);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    std::filesystem::remove(file);
    return j.is_object() ? j["step_time_s"].get<double>() : -1.0;
  };
  const double plain = step_time({});
  const double faster = step_time({"cluster.gpu.bf16_peak=624TFLOP/s"});
  EXPECT_GT(plain, 0);
  EXPECT_GT(faster, 0);
  EXPECT_LT(faster, 0.8 * plain);
}

const std::string kStragglers = std::string(MYRIAD_TEST_DATA_DIR) + "/simulate/stragglers-128.yaml";

TEST(Cli, SimulateWritesEstimatesFieldsAndItsOwn) {
  const auto j = simulate_json(kStragglers, "simulate_fields");
  ASSERT_FALSE(j.is_null());
  for (const char* key : {"step_time_s", "mfu", "hfu", "tokens_per_s", "days_to_target",
                          "breakdown", "memory", "collectives", "analytic_step_time_s",
                          "rank_groups", "critical_path", "links_by_utilization", "stragglers"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  double sum = 0;
  for (const auto& [name, seconds] : j["breakdown"].items()) sum += seconds.get<double>();
  EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-9 * sum);
  double path = 0;
  for (const auto& [name, seconds] : j["critical_path"]["by_activity"].items()) {
    path += seconds.get<double>();
  }
  EXPECT_NEAR(path, j["step_time_s"].get<double>(), 1e-9 * path);
  // Replica 0 and those holding a straggler, four stages each.
  EXPECT_EQ(j["rank_groups"].size(), 4 * j["replicas_simulated"].size());
  EXPECT_GT(j["replicas_simulated"].size(), 1U);
}

// Expectation: the step engine's log takes verbose or debug; anything else is
// refused before a simulation starts, naming what it takes.
TEST(Cli, SimulateLogLevelsAreChecked) {
  const Result r = run_cli({"simulate", "--log", "loud", kStragglers});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--log: loud not in {verbose,debug}"), std::string::npos) << r.err;
  EXPECT_TRUE(sim::valid_step_log("debug"));
  EXPECT_TRUE(sim::valid_step_log(""));
  EXPECT_FALSE(sim::valid_step_log("trace"));
}

// Expectation: the same scenario and seed give the same JSON, stragglers
// included; another seed slows other nodes.
TEST(Cli, SimulateSameSeedSameJson) {
  std::string first_bytes;
  std::string second_bytes;
  const auto first = simulate_json(kStragglers, "simulate_first", &first_bytes);
  const auto second = simulate_json(kStragglers, "simulate_second", &second_bytes);
  ASSERT_FALSE(first.is_null());
  ASSERT_FALSE(second.is_null());
  EXPECT_FALSE(first["stragglers"].empty());
  EXPECT_EQ(first_bytes, second_bytes);

  const auto reseeded = std::filesystem::temp_directory_path() /
                        ("myriad_cli_reseeded_" + std::to_string(getpid()) + ".yaml");
  std::ifstream in(kStragglers);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  yaml.replace(yaml.find("seed: 7"), 7, "seed: 8");
  std::ofstream(reseeded) << yaml;
  const auto other = simulate_json(reseeded.string(), "simulate_reseeded");
  std::filesystem::remove(reseeded);
  ASSERT_FALSE(other.is_null());
  EXPECT_NE(other["stragglers"].dump(), first["stragglers"].dump());
}

TEST(Cli, EstimateWithoutAProfileForTheGpuIsBadInput) {
  const auto file = std::filesystem::temp_directory_path() / "myriad_cli_inline_gpu.yaml";
  std::ofstream(file) << R"(
cluster:
  gpus: 8
  nics_per_node: 8
  nic_bandwidth: 200Gbps
  network: {tiers: [{radix: 64}]}
  gpu: {name: Custom, bf16_peak: 100TFLOPS, hbm_capacity: 80GB, hbm_bandwidth: 2TB/s,
        nvlink_bandwidth: 300GB/s}
model: {preset: megatron-22b}
parallelism: {tp: 8, global_batch: 8}
)";
  const Result r = run_cli({"estimate", file.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--profile"), std::string::npos) << r.err;
  const Result with = run_cli({"estimate", file.string(), "--profile",
                               std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json"});
  EXPECT_EQ(with.code, kExitOk) << with.err;
  // Its rates are the A100's, put on this GPU's peaks: the report says so.
  EXPECT_NE(with.out.find("borrowed: efficiencies achieved on A100-SXM4-80GB, priced on Custom's"),
            std::string::npos)
      << with.out;
  std::filesystem::remove(file);
}

TEST(Cli, ValidateReportsEverySuiteAndWritesJson) {
  const auto file = std::filesystem::temp_directory_path() / "myriad_cli_validate.json";
  const Result r = run_cli({"validate", "--json", file.string()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["suites"].size(), 8u);
  for (const auto& suite : j["suites"]) {
    EXPECT_TRUE(suite.contains("mean_abs_rel_error"));
    EXPECT_TRUE(suite.contains("max_abs_rel_error"));
    for (const auto& row : suite["rows"]) {
      for (const char* key : {"case", "metric", "published", "predicted", "rel_error"}) {
        EXPECT_TRUE(row.contains(key)) << key;
      }
    }
  }
  std::filesystem::remove(file);
}

// Expectation: --leave-one-out over suites of two profiles and no two of one fits
// across the profiles (the per-profile fit has nothing to hold out), prints it and
// writes it to the JSON; over one suite it is refused, saying why.
TEST(Cli, ValidateLeavesOneOutAcrossProfiles) {
  const auto file = std::filesystem::temp_directory_path() / "myriad_cli_validate_loo.json";
  const Result r = run_cli({"validate", "megatron-bridge-h100", "megascale-moe-ablation",
                            "--leave-one-out", "--json", file.string()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("across profiles (2 suites)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nprofile "), std::string::npos) << r.out;
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["leave_one_out"].size(), 2u);
  EXPECT_EQ(j["leave_one_out"][0]["over"], "every profile");
  EXPECT_TRUE(j["leave_one_out"][0]["fitted"].contains("sustained_clock_fraction"));
  EXPECT_FALSE(j["leave_one_out"][0]["fitted"].contains("attention_fwd_efficiency"));
  std::filesystem::remove(file);
  const Result one = run_cli({"validate", "megatron-bridge-h100", "--leave-one-out"});
  EXPECT_EQ(one.code, kExitBadInput);
  EXPECT_NE(one.err.find("are too few"), std::string::npos) << one.err;
}

TEST(Cli, ValidateUnknownSuiteSuggests) {
  const Result r = run_cli({"validate", "megascale-tabel2"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("did you mean 'megascale-table2'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace myriad::cli

namespace myriad::cli {
namespace {

TEST(Cli, CampaignComparesPoliciesAndWritesJsonAndEvents) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto scenario = dir / "myriad_cli_campaign.yaml";
  {
    std::ofstream f(scenario);
    f << "cluster: {preset: selene-like, gpus: 128}\n"
         "model: {preset: gpt3-175b-megatron}\n"
         "parallelism: {tp: 8, pp: 8, global_batch: 64}\n"
         "faults:\n"
         "  processes: [{component: gpu, per_1000_node_days: 100}]\n"
         "policies:\n"
         "  - {name: no-spares}\n"
         "  - {name: four-spares, hot_spares: 4}\n";
  }
  const auto json = dir / "myriad_cli_campaign.json";
  const auto events = dir / "myriad_cli_campaign.events";
  const Result r =
      run_cli({"campaign", scenario.string(), "--days", "20", "--seeds", "3", "--threads", "2",
               "--json", json.string(), "--events", events.string(), "--events-level", "all"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (const char* part :
       {"no-spares", "four-spares", "effective training time ratio", "hours lost: detection", "± ",
        "effective training time ratio, minus no-spares's (paired)", "--wide"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("failures: gpu"), std::string::npos) << "only with --wide";
  const Result wide = run_cli({"campaign", scenario.string(), "--days", "20", "--seeds", "3",
                               "--wide", "--set", "cluster.price_per_gpu_hour=2"});
  EXPECT_EQ(wide.code, kExitOk) << wide.err;
  // 20 days x 128 GPUs x $2, and 160 GPUs with the spares.
  for (const char* part : {"failures: gpu", "checkpoint upload (background)", "cost (US$)",
                           "$122.88 k", "$153.60 k", "tokens per US$"}) {
    EXPECT_NE(wide.out.find(part), std::string::npos) << part << "\n" << wide.out;
  }
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["policies"].size(), 2u);
  const auto& ettr = j["policies"][0]["figures"]["ettr"];
  EXPECT_LE(ettr["ci95_low"].get<double>(), ettr["mean"].get<double>());
  EXPECT_GT(ettr["mean"].get<double>(), 0.5);
  EXPECT_TRUE(j["policies"][1]["figures"]["lost_hours"].contains("repair_wait"));
  // Paired differences from the first policy: spares wait less for repairs.
  EXPECT_TRUE(j["policies"][0]["minus_first_policy"].empty());
  EXPECT_GT(j["policies"][1]["minus_first_policy"]["ettr"]["ci95_low"].get<double>(), 0);
  // 20 days of 16 nodes (128 GPUs), and of 4 spare nodes more.
  EXPECT_DOUBLE_EQ(j["policies"][0]["figures"]["gpu_hours"]["mean"].get<double>(), 20 * 24 * 128);
  EXPECT_DOUBLE_EQ(j["policies"][1]["figures"]["gpu_hours"]["mean"].get<double>(), 20 * 24 * 160);
  // JSON Lines: every line an object with a time, a policy and an event.
  std::ifstream log(events);
  std::string line;
  std::map<std::string, int> kinds;
  std::set<std::string> policies;
  double last = 0;
  std::string last_policy;
  while (std::getline(log, line)) {
    const auto e = nlohmann::json::parse(line);
    const auto policy = e.at("policy").get<std::string>();
    if (policy != last_policy) last = 0;  // each policy's run in turn
    EXPECT_GE(e.at("time_s").get<double>(), last) << line;
    last = e.at("time_s").get<double>();
    last_policy = policy;
    policies.insert(policy);
    ++kinds[e.at("event").get<std::string>()];
    EXPECT_EQ(e.at("seed").get<int>(), 0);
    if (e.at("event") == "rollback") {
      EXPECT_GE(e.at("lost_work_s").get<double>(), 0) << line;
    }
  }
  EXPECT_EQ(policies, (std::set<std::string>{"no-spares", "four-spares"}));
  for (const char* kind : {"failure", "rollback", "detected", "restart", "running",
                           "checkpoint_started", "checkpoint_staged", "upload_done"}) {
    EXPECT_GT(kinds[kind], 0) << kind;
  }
  EXPECT_FALSE(std::filesystem::exists(events.string() + ".partial"));
  // Same seeds, same report up to the failure timeline, which is the logged
  // seed's; CSV for another seed, with its header.
  const auto csv = dir / "myriad_cli_campaign_events.csv";
  const Result again = run_cli({"campaign", scenario.string(), "--days", "20", "--seeds", "3",
                                "--threads", "1", "--events", csv.string(), "--event-seed", "2"});
  const auto report = [](const std::string& out) {
    return out.substr(0, out.find("\n  failure timeline of seed "));
  };
  EXPECT_EQ(report(again.out), report(r.out));
  EXPECT_NE(again.out.find("failure timeline of seed 2"), std::string::npos) << again.out;
  std::ifstream table(csv);
  std::getline(table, line);
  EXPECT_EQ(line.rfind("time_s,time_h,policy,seed,event,", 0), 0u) << line;
  std::getline(table, line);
  EXPECT_NE(line.find(",no-spares,2,"), std::string::npos) << line;
  // A seed that is not run is an error.
  const Result bad = run_cli({"campaign", scenario.string(), "--days", "1", "--seeds", "2",
                              "--events", csv.string(), "--event-seed", "2"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("the event log's seed 2 is not among the 2 seeds run"), std::string::npos)
      << bad.err;
  // Without --events, --event-seed picks the failure timeline's seed.
  const Result timeline =
      run_cli({"campaign", scenario.string(), "--days", "2", "--seeds", "2", "--event-seed", "1"});
  EXPECT_EQ(timeline.code, kExitOk) << timeline.err;
  EXPECT_NE(timeline.out.find("failure timeline of seed 1 (--event-seed)"), std::string::npos)
      << timeline.out;
  for (const auto& p : {scenario, json, events, csv}) std::filesystem::remove(p);
}

TEST(Cli, CampaignLabelsTheDefaultPolicy) {
  const Result r = run_cli({"campaign", kDefault, "--days", "1", "--seeds", "2"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("policy 'default' is the default: no spares, waits for repairs (mean 4 h)"),
            std::string::npos)
      << r.out;
}

TEST(Cli, CampaignVariesOneKeyOnTheSameSeeds) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto json = dir / "myriad_cli_campaign_vary.json";
  const Result r = run_cli({"campaign", kDefault, "--days", "10", "--seeds", "3", "--vary",
                            "faults.rate_scale=0.5,2,8", "--set",
                            "policies=[{name: spares, hot_spares: 2}]", "--json", json.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("faults.rate_scale over 3 values"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("faults.rate_scale=8 (3 of 3)"), std::string::npos) << r.err;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["points"].size(), 3U);
  // More failures, less useful time; the job's MTBF scales with them.
  double last = 2;
  double mtbf = 0;
  for (const auto& point : j["points"]) {
    const auto& policy = point["campaign"]["policies"][0];
    const double ettr = policy["figures"]["ettr"]["mean"].get<double>();
    EXPECT_LT(ettr, last) << point["value"];
    last = ettr;
    if (mtbf > 0) {
      EXPECT_NEAR(policy["job_mtbf_s"].get<double>(), mtbf / 4, 1e-6 * mtbf);
    }
    mtbf = policy["job_mtbf_s"].get<double>();
  }
  std::filesystem::remove(json);
  // One axis at a time; no event log; a bad value names itself.
  EXPECT_EQ(run_cli({"campaign", kDefault, "--vary", "faults.rate_scale=1", "--vary",
                     "policies.hot_spares=1"})
                .code,
            kExitBadInput);
  const Result bad =
      run_cli({"campaign", kDefault, "--days", "1", "--vary", "faults.rate_scale=1,-1"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--vary faults.rate_scale=-1"), std::string::npos) << bad.err;
}

TEST(Cli, CampaignDaysAndTokensExcludeEachOther) {
  EXPECT_EQ(run_cli({"campaign", kDefault, "--days", "3", "--tokens", "1T"}).code, kExitBadInput);
  EXPECT_EQ(run_cli({"campaign", kDefault, "--tokens", "lots"}).code, kExitBadInput);
}

}  // namespace
}  // namespace myriad::cli

namespace myriad::cli {
namespace {

// Expectation: `explain presets` lists every hardware preset with the profile it
// takes (every preset has its own now: MI300X's since 2026-12-05), and `explain
// profiles` where each profile's rates come from.
TEST(Cli, ExplainListsPresetsAndProfiles) {
  const Result presets = run_cli({"explain", "presets"});
  EXPECT_EQ(presets.code, kExitOk) << presets.err;
  for (const char* want : {"B200", "GB200", "MI300X", "gb200-nvl72", "as gpt3-175b-megatron"}) {
    EXPECT_NE(presets.out.find(want), std::string::npos) << want << "\n" << presets.out;
  }
  const Result profiles = run_cli({"explain", "profiles"});
  EXPECT_EQ(profiles.code, kExitOk) << profiles.err;
  EXPECT_NE(profiles.out.find("13 published, 3 derived, 9 assumed"), std::string::npos)
      << profiles.out;
  EXPECT_EQ(presets.out.find("(borrowed)"), std::string::npos) << presets.out;
  EXPECT_NE(
      profiles.out.find("MI300X          MI300X             1 published, 6 derived, 18 assumed"),
      std::string::npos)
      << profiles.out;
  EXPECT_EQ(profiles.out.find("unreadable"), std::string::npos) << profiles.out;
}

// Expectation: a GPU of no profile, named in the scenario, borrows one, and says so.
TEST(Cli, AGpuBorrowsTheProfileItsScenarioNames) {
  const auto file = std::filesystem::temp_directory_path() / "myriad_cli_borrow.yaml";
  std::ofstream(file) << R"(
cluster: {preset: llama3-like, gpus: 64, gpu: {preset: H100, name: H100-fast, bf16_peak: 1.5PFLOPS}}
model: {preset: llama3-8b}
parallelism: {tp: 8, global_batch: 64}
)";
  const Result r = run_cli({"estimate", file.string()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("borrowed: efficiencies achieved on H100-SXM5-80GB, priced on H100-fast's"),
            std::string::npos)
      << r.out;
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace myriad::cli
