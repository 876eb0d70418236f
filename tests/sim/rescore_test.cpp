// A plan's best layouts re-scored (sim/planning/rescore.hpp): what a step engine's
// step time and a campaign's outcome make of a layout's figures, growth added,
// and the order again. The engines' results are given, not run.
#include "sim/planning/rescore.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

models::scenario::Scenario llama8b() {
  return models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml", kShipped);
}

PlannedLayout planned(const models::scenario::Scenario& s, std::size_t index = 0) {
  PlannedLayout l;
  l.index = index;
  l.parallelism = s.parallelism;
  l.metrics = metrics_of(s, estimate(s, h100(), Detail::summary));
  return l;
}

TEST(Rescore, EnginesByName) {
  const RescoreEngines both = rescore_engines({"step", "campaign"});
  EXPECT_TRUE(both.step && both.campaign);
  const RescoreEngines none = rescore_engines({});
  EXPECT_FALSE(none.step || none.campaign);
}

// Expectation: a step twice the estimate's halves MFU and tokens/s and doubles
// days, GPU-hours (days x 24 x 64 GPUs) and cost; the campaign then scales by 2.
TEST(Rescore, TheStepEnginesStepGivesEveryRate) {
  auto s = llama8b();
  s.cluster.price_per_gpu_hour = 3;
  const PlannedLayout l = planned(s);
  Rescored r(l, 2);
  EXPECT_EQ(r.step_scale(), 1);
  rescore_by_step(r, s, 2 * l.metrics.step_time_s);
  const LayoutMetrics& m = r.layout.metrics;
  EXPECT_EQ(r.engine, "step");
  EXPECT_EQ(r.estimate_rank, 2);
  EXPECT_DOUBLE_EQ(r.step_scale(), 2);
  EXPECT_DOUBLE_EQ(m.step_time_s, 2 * l.metrics.step_time_s);
  EXPECT_NEAR(m.mfu, l.metrics.mfu / 2, 1e-12);
  EXPECT_NEAR(m.tokens_per_s, l.metrics.tokens_per_s / 2, 1e-9 * m.tokens_per_s);
  EXPECT_NEAR(m.days, 2 * l.metrics.days, 1e-12 * m.days);
  EXPECT_DOUBLE_EQ(m.gpu_hours, m.days * 24 * 64);
  EXPECT_DOUBLE_EQ(m.cost, 3 * m.gpu_hours);
  EXPECT_EQ(m.memory, l.metrics.memory);
}

// Expectation: the campaign's days, goodput and GPU-hours (job and spares) are
// the row's, priced at the cluster's price (none: no cost).
TEST(Rescore, TheCampaignsOutcomeGivesDaysGoodputAndCost) {
  auto s = llama8b();
  Rescored r(planned(s), 1);
  rescore_by_campaign(r, s, {{30, 1}, {0.9, 0.01}, false, 50000, 4e5});
  EXPECT_EQ(r.engine, "campaign");
  EXPECT_EQ(r.layout.metrics.days, 30);
  EXPECT_EQ(r.days->half_width, 1);
  EXPECT_EQ(r.ettr->mean, 0.9);
  EXPECT_FALSE(r.reached);
  EXPECT_EQ(r.layout.metrics.gpu_hours, 50000);
  EXPECT_EQ(r.layout.metrics.tokens_per_s, 4e5);
  EXPECT_TRUE(std::isnan(r.layout.metrics.cost));
  s.cluster.price_per_gpu_hour = 2;
  Rescored on_step(planned(s), 1);
  rescore_by_step(on_step, s, 1.0);
  rescore_by_campaign(on_step, s, {{30, 1}, {0.9, 0.01}, true, 50000, 4e5});
  EXPECT_EQ(on_step.engine, "campaign on step");
  EXPECT_EQ(on_step.layout.metrics.cost, 100000);
}

// Expectation: growth adds the small model's 3 days and keeps half of the
// model's own: 3 + 30 / 2 days, the campaign's interval halved.
TEST(Rescore, GrowthAddsTheSmallModelsTraining) {
  const auto s = llama8b();
  Rescored r(planned(s), 1);
  rescore_by_campaign(r, s, {{30, 2}, {0.9, 0.01}, true, 50000, 4e5});
  GrowthPhase g;
  g.metrics.days = 3;
  g.metrics.gpu_hours = 1000;
  g.metrics.cost = 0;
  g.saved_fraction = 0.5;
  add_growth(r, g);
  EXPECT_DOUBLE_EQ(r.layout.metrics.days, 18);
  EXPECT_DOUBLE_EQ(r.days->mean, 18);
  EXPECT_DOUBLE_EQ(r.days->half_width, 1);
  EXPECT_DOUBLE_EQ(r.layout.metrics.gpu_hours, 1000 + 25000);
}

// Expectation: ranked again by days, the slower estimate first when the step
// engine finds it faster; ties keep the estimate's order.
TEST(Rescore, RankedAgainByTheMostFaithfulFigures) {
  const auto s = llama8b();
  std::vector<Rescored> best = {Rescored(planned(s, 0), 1), Rescored(planned(s, 1), 2),
                                Rescored(planned(s, 2), 3)};
  rescore_by_step(best[0], s, 2 * best[0].estimated_step_s);
  rescore_by_step(best[2], s, 0.5 * best[2].estimated_step_s);
  PlanOptions options;
  rank_rescored(best, options);
  EXPECT_EQ(best[0].estimate_rank, 3);
  EXPECT_EQ(best[1].estimate_rank, 2);
  EXPECT_EQ(best[2].estimate_rank, 1);
}

}  // namespace
}  // namespace myriad::sim
