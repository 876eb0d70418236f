// A sweep's rows as data (sim/planning/sweep_run.hpp): each configuration's figures,
// growth included, and the Pareto front among the rows that fit.
#include "sim/planning/sweep_run.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

SweepRow row(double days, double gpus, bool fits = true, double cost = 1) {
  SweepRow r;
  r.m.days = days;
  r.m.gpus = static_cast<int>(gpus);
  r.m.fits = fits;
  r.m.cost = cost;
  return r;
}

TEST(SweepRun, SettingValuesAreWhatFollowsTheEquals) {
  EXPECT_EQ(setting_values({"cluster.gpus=1024", "model.moe={top_k: 2}"}),
            (std::vector<std::string>{"1024", "{top_k: 2}"}));
}

// Expectation: a row's figures are the estimate's (metrics_of), the scenario and
// report kept only when asked.
TEST(SweepRun, ARowIsTheEstimatesFigures) {
  const auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml", kShipped);
  SweepRow r;
  evaluate_row(r, s, h100(), false);
  EXPECT_TRUE(r.valid());
  EXPECT_FALSE(r.kept);
  const LayoutMetrics m = metrics_of(s, estimate(s, h100(), Detail::summary));
  EXPECT_EQ(r.m.step_time_s, m.step_time_s);
  EXPECT_EQ(r.m.days, m.days);
  SweepRow kept;
  evaluate_row(kept, s, h100(), true);
  ASSERT_TRUE(kept.kept);
  EXPECT_EQ(kept.kept->second.step_time_s, m.step_time_s);
}

// Expectation: growth from a model no smaller is the row's problem, not a failure.
TEST(SweepRun, GrowthThatCannotBeIsTheRowsProblem) {
  const auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml",
      models::scenario::LoadOptions{
          kShipped.preset_path,
          {"training.growth={from: llama3-8b, tokens: 1T, saved_fraction: 0.5, "
           "source: test}"}});
  ASSERT_TRUE(s.training.growth.given());
  SweepRow r;
  evaluate_row(r, s, h100(), true);
  EXPECT_FALSE(r.valid());
  EXPECT_NE(r.problem.find("smaller"), std::string::npos) << r.problem;
  EXPECT_FALSE(r.kept);
}

// Expectation, by hand: of (days, GPUs) = (10, 64), (20, 32), (15, 64) and (5, 16)
// that does not fit, the first two are the front; an invalid row never is.
TEST(SweepRun, TheFrontIsAmongTheRowsThatFit) {
  std::vector<SweepRow> rows = {row(10, 64), row(20, 32), row(15, 64), row(5, 16, false)};
  rows.push_back(row(1, 1));
  rows.back().problem = "invalid";
  const std::vector<Objective> objectives = parse_objectives("days,gpus");
  mark_front(rows, objectives);
  EXPECT_TRUE(rows[0].front);
  EXPECT_TRUE(rows[1].front);
  EXPECT_FALSE(rows[2].front);
  EXPECT_FALSE(rows[3].front);
  EXPECT_FALSE(rows[4].front);
  std::vector<SweepRow> none = rows;
  mark_front(none, {});
  EXPECT_TRUE(none[0].front);  // unchanged without objectives
}

// Expectation: cost as an objective needs a price on every row that could be on
// the front; an unpriced row that does not fit does not matter.
TEST(SweepRun, CostNeedsAPriceWhereARowCouldBeOnTheFront) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Objective> cost = parse_objectives("cost");
  EXPECT_FALSE(front_needs_price({row(10, 64), row(5, 8, false, none)}, cost));
  EXPECT_TRUE(front_needs_price({row(10, 64), row(5, 8, true, none)}, cost));
  EXPECT_FALSE(front_needs_price({row(5, 8, true, none)}, parse_objectives("days")));
}

}  // namespace
}  // namespace myriad::sim
