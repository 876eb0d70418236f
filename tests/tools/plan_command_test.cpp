// `myriad plan` with a deadline, a GPU budget, a batch range and hardware compared,
// and the titles of reports after overrides: run in-process, as `myriad` would.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"

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

}  // namespace
}  // namespace myriad::cli
