// A policy set's runs over seeds as one job's outcome
// (sim/campaign/policy_outcome.hpp), what plan --rescore campaign ranks by.
#include "sim/campaign/policy_outcome.hpp"

#include <gtest/gtest.h>

namespace myriad::sim::campaign {
namespace {

// Expectation, by hand: two seeds of 2 and 4 days, 8 nodes of 8 GPUs in service:
// 3 days on average, 64 x 72 GPU-hours; one seed short of the target.
TEST(PolicyOutcome, DaysGpuHoursAndGoodputOverSeeds) {
  PolicyReport p;
  for (const double days : {2.0, 4.0}) {
    RunResult run;
    run.wall_s = days * 86400;
    run.tokens = 1e12;
    run.nodes_in_service = 8;
    run.reached_target = days < 3;
    run.seconds_by_cause[0] = 0.9 * run.wall_s;
    p.runs.push_back(run);
  }
  const PolicyOutcome o = policy_outcome(p, 8);
  EXPECT_DOUBLE_EQ(o.days.mean, 3);
  EXPECT_GT(o.days.half_width, 0);
  EXPECT_DOUBLE_EQ(o.ettr.mean, 0.9);
  EXPECT_FALSE(o.reached);
  EXPECT_DOUBLE_EQ(o.gpu_hours, 64 * 72);
  EXPECT_DOUBLE_EQ(o.tokens_per_s, (1e12 / (2 * 86400) + 1e12 / (4 * 86400)) / 2);
}

}  // namespace
}  // namespace myriad::sim::campaign
