// Work and inputs bounded before the work (issue 43): a campaign past its event
// bound, a JSON document past its value bound, a FIFO, a file the scenario read
// named as an output, an output name the file system cannot hold, and an event
// log that never follows a planted link. Each is refused at once with the figure
// and the key or flag behind it; none runs, hangs or overwrites.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"
#include "tests/tools/run_within.hpp"
#include "tools/cli/cli.hpp"

namespace myriad::cli {
namespace {

namespace fs = std::filesystem;

using test_support::address_space_limits_work;
using test_support::ChildResult;
using test_support::Result;
using test_support::run_cli;
using test_support::run_cli_within;

const std::string kCampaign =
    std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml";
const std::string kSmall =
    std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Bounds : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("myriad-bounds-" + std::to_string(::getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Before: a straggler per node every few seconds ran for ever, saying nothing
// (`check` now refuses that rate; this one, once a day per node, it accepts, and
// over 200 days of 2,080 nodes it is 17.6 million events, 17 s, a run).
TEST_F(Bounds, ACampaignPastItsEventBoundIsRefusedNamingTheKey) {
  const Result r = run_cli({"campaign", kCampaign, "--days", "200", "--seeds", "2", "--set",
                            "faults.stragglers=[{per_1000_node_days: 2e4, duration: 1h, "
                            "slowdown: 1.1}]"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("faults.stragglers[0].per_1000_node_days"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("past the bound"), std::string::npos) << r.err;
}

// Before: a tiny checkpoint made Young's interval microseconds, and the campaign
// never ended.
// A checkpoint of a thousandth of a byte with no coordination stalls for
// nothing, so Young's interval tends to zero.
TEST_F(Bounds, ACheckpointIntervalTendingToZeroIsRefused) {
  const Result r = run_cli({"campaign", kCampaign, "--days", "1", "--seeds", "2", "--set",
                            "policies.0.checkpoint_size=0.001B", "--set",
                            "policies.0.checkpoint_coordination=0s"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("policies[0].checkpoint_rule: young"), std::string::npos) << r.err;
}

TEST_F(Bounds, TooManySeedsAreRefusedBeforeAnyRun) {
  const Result r = run_cli({"campaign", kCampaign, "--seeds", "100000"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--seeds"), std::string::npos) << r.err;
}

// Before: the bad last value was found after every other value's campaign ran.
TEST_F(Bounds, EveryVaryValueIsCheckedBeforeAnyCampaignRuns) {
  std::vector<std::string> args = {
      "campaign", kCampaign, "--days", "1",
      "--seeds",  "2",       "--vary", "policies.checkpoint_size=1TB,0.001B"};
  for (int i = 0; i < 4; ++i) {  // every policy set, without coordination
    args.insert(args.end(), {"--set", fmt::format("policies.{}.checkpoint_coordination=0s", i)});
  }
  const Result r = run_cli(args);
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--vary policies.checkpoint_size=0.001B"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(1 of 2)"), std::string::npos) << "a campaign ran first:\n" << r.err;
}

// Before: the whole document became a tree of tens of bytes a value.
TEST_F(Bounds, AJsonDocumentPastItsValueBoundIsRefusedBeforeItIsBuilt) {
  const fs::path big = dir_ / "profile.json";
  {
    std::ofstream out(big);
    out << "[";
    for (int i = 0; i < 2'000'001; ++i) out << "0,";
    out << "0]";
  }
  const Result r = run_cli({"estimate", kSmall, "--profile", big.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("more than 2000000 JSON values"), std::string::npos) << r.err;
}

// Before: opening a FIFO waited for a writer for ever.
TEST_F(Bounds, AFifoIsRefusedNotWaitedOn) {
  const fs::path fifo = dir_ / "scenario.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result r = run_cli({"check", fifo.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("a pipe (FIFO), not a regular file"), std::string::npos) << r.err;
}

// Before: only files named on the command line were protected.
TEST_F(Bounds, APresetTheScenarioReadIsNeverAnOutput) {
  fs::create_directories(dir_ / "hardware");
  const fs::path preset = dir_ / "hardware" / "H100.yaml";
  fs::copy_file(std::string(MYRIAD_SCENARIO_DIR) + "/hardware/H100.yaml", preset);
  const std::string before = slurp(preset);
  const Result r =
      run_cli({"estimate", kSmall, "--preset-path", dir_.string(), "--json", preset.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("writing would destroy it"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(preset), before);
}

TEST_F(Bounds, AFailureReplayIsNeverAnOutput) {
  const fs::path replay = dir_ / "failures.csv";
  {
    std::ofstream csv(replay);
    csv << "time,component,id,duration\n2h,gpu,3,1h\n";
  }
  const std::string before = slurp(replay);
  const fs::path scenario = dir_ / "job.yaml";
  {
    std::ofstream yaml(scenario);
    yaml << slurp(kSmall) << "\nfaults: {replay: failures.csv}\n";
  }
  const Result r = run_cli(
      {"campaign", scenario.string(), "--days", "1", "--seeds", "1", "--json", replay.string()});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_NE(r.err.find("writing would destroy it"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(replay), before);
}

// Before: the name passed the check and failed after the whole run.
TEST_F(Bounds, AnOutputNameTheFileSystemCannotHoldIsRefusedFirst) {
  const std::string name = (dir_ / (std::string(250, 'a') + ".json")).string();
  const Result r = run_cli({"estimate", kSmall, "--json", name});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("this file system allows"), std::string::npos) << r.err;
}

// Before: the log went to X.partial, truncating whatever a link planted there
// pointed to.
TEST_F(Bounds, TheEventLogFollowsNoPlantedLinkAndLeavesNoTemporary) {
  const fs::path victim = dir_ / "victim.txt";
  {
    std::ofstream out(victim);
    out << "keep me\n";
  }
  const fs::path log = dir_ / "events.jsonl";
  fs::create_symlink(victim, dir_ / "events.jsonl.partial");
  const Result r =
      run_cli({"campaign", kSmall, "--days", "1", "--seeds", "1", "--events", log.string(),
               "--events-level", "all"});  // a day may hold no failure, always checkpoints
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(slurp(victim), "keep me\n");
  EXPECT_FALSE(slurp(log).empty());
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 3) << "the victim, the planted link and the log; no temporary left";
}

// Each JSON reader, short of memory for a document within its bounds (1.9
// million numbers: a tree of about 60 MB), says "out of memory" and exits 1.
// Before: std::terminate (SIGABRT): the tree's destructor allocates, and a
// bad_alloc there cannot be caught.
TEST_F(Bounds, EveryJsonReaderShortOfMemorySaysSoWithoutASignal) {
  if (!address_space_limits_work()) GTEST_SKIP() << "sanitizers map shadow memory";
  const fs::path json = dir_ / "numbers.json";
  {
    std::ofstream out(json);
    out << "[";
    for (int i = 0; i < 1'900'000; ++i) out << "0,";
    out << "0]";
  }
  const std::string profile = std::string(MYRIAD_PROFILE_DIR) + "/H200.json";
  const std::vector<std::vector<std::string>> readers = {
      {"estimate", kSmall, "--profile", json.string()},
      {"calibrate", "fit", json.string(), "--base", profile, "--out", (dir_ / "p.json").string()},
      {"calibrate", "check", "--profile", profile, "--measured-from", json.string()},
  };
  for (const auto& args : readers) {
    for (const std::size_t extra_mib : {24, 40, 56}) {
      const ChildResult got = run_cli_within(args, extra_mib << 20);
      EXPECT_FALSE(got.signalled) << args[0] << " " << args[1] << " at +" << extra_mib << " MiB";
      EXPECT_TRUE(got.code == kExitFailure || got.code == kExitBadInput)
          << args[1] << ": exit " << got.code << "\n"
          << got.err;
      if (got.code == kExitFailure) {
        EXPECT_NE(got.err.find("out of memory"), std::string::npos) << got.err;
      }
    }
  }
}

}  // namespace
}  // namespace myriad::cli
