// `myriad plan` over several searches, as data (sim/planning/plan_run.hpp): the
// objective a plan ranks by, the layouts a report draws, the searches merged over
// one numbering, the columns the table shows, the --set line of the best, and the
// points of the report.
#include "sim/planning/plan_run.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

const std::string kLlama8b =
    "cluster: {preset: llama3-like, gpus: 64}\n"
    "model: {preset: llama3-8b, seq_length: 4096}\n"
    "parallelism: {tp: 8, sp: true, pp: 2, zero: 1, micro_batch: 1, global_batch: 128}\n"
    "training: {tokens: 100B}\n";

// Two searches of Llama 3 8B: 64 and 32 GPUs, a small space each.
PlanVariants two_counts() {
  PlanVariants v;
  for (const int gpus : {64, 32}) {
    PlanVariant x;
    x.sets = {fmt::format("cluster.gpus={}", gpus)};
    models::scenario::LoadOptions options{kShipped.preset_path, x.sets};
    options.layout_searched = true;
    x.base = models::scenario::load_scenario_text(kLlama8b, "plan_run_test.yaml", options);
    x.hardware = "H100 in Llama-3-like";
    x.profile = h100();
    x.space = default_space(x.base);
    x.space.pp = {1, 2};
    x.space.virtual_stages = {1};
    x.space.zero = {1};
    x.offset = v.candidates();
    x.candidates = candidate_count(x.space);
    v.all.push_back(std::move(x));
  }
  return v;
}

// Each search alone, as one process would, then merged.
PlanSearch searched(const PlanVariants& v, const PlanOptions& options) {
  std::vector<std::vector<PlanResult>> shards(v.all.size());
  for (std::size_t i = 0; i < v.all.size(); ++i) {
    shards[i].push_back(search_layouts(v.all[i].base, v.all[i].profile, v.all[i].space, options));
  }
  PlanSearch out;
  merge_searches(v, shards, options, out);
  return out;
}

// Expectation: the objective given, else days; with a deadline, the cheapest that
// meets it: cost where priced, else GPU-hours.
TEST(PlanRun, TheObjectiveFollowsTheDeadlineAndThePrice) {
  EXPECT_EQ(plan_objective("mfu", 10, true), "mfu");
  EXPECT_EQ(plan_objective("", 0, true), "days");
  EXPECT_EQ(plan_objective("", 10, true), "cost");
  EXPECT_EQ(plan_objective("", 10, false), "gpu-hours");
}

// Expectation: past the most a report draws, every other layout is dropped and
// then every second of the rest is kept: the sample stays at most that size and
// evenly spaced; another process's sample joins it the same way.
TEST(PlanRun, TheReportsSampleThinsEvenly) {
  LayoutSample sample;
  const std::size_t n = LayoutSample::kMostReportLayouts + 10;
  for (std::size_t i = 0; i < n; ++i) sample.add(i);
  EXPECT_EQ(sample.seen(), n);
  EXPECT_LE(sample.kept().size(), LayoutSample::kMostReportLayouts);
  for (std::size_t i = 1; i < sample.kept().size(); ++i) {
    EXPECT_EQ(sample.kept()[i] - sample.kept()[i - 1], 2U);
  }
  LayoutSample other;
  other.absorb(sample.kept(), sample.seen());
  EXPECT_EQ(other.seen(), n);
  EXPECT_EQ(other.kept(), sample.kept());
}

// Expectation: the searches' layouts over one numbering (the second search's
// indices past the first's candidates), each knowing its search; each search's
// first kept; the best of both ranked together.
TEST(PlanRun, SearchesMergeOverOneNumbering) {
  const PlanVariants v = two_counts();
  PlanOptions options;
  options.top = 4;
  const PlanSearch search = searched(v, options);
  ASSERT_EQ(search.firsts.size(), 2U);
  EXPECT_EQ(search.firsts[0].variant, 0U);
  EXPECT_EQ(search.firsts[1].variant, 1U);
  EXPECT_GE(search.firsts[1].index, v.all[1].offset);
  EXPECT_EQ(search.result.candidates, v.candidates());
  ASSERT_FALSE(search.result.top.empty());
  for (const auto& l : search.result.top) {
    EXPECT_EQ(&v.of(l.index), &v.all[l.variant]);
    EXPECT_EQ(l.metrics.gpus, v.all[l.variant].base.cluster.gpus);
  }
  // The fastest of both: 64 GPUs.
  EXPECT_EQ(search.result.top.front().variant, 0U);
}

// Expectation: the table shows GPUs when the counts differ, the step engine's
// column when one played, cost only when every search is priced; the --set line
// of a layout is its search's overrides, then the layout's.
TEST(PlanRun, ColumnsAndOverridesFollowTheSearches) {
  const PlanVariants v = two_counts();
  PlanOptions options;
  const PlanSearch search = searched(v, options);
  std::vector<Rescored> best;
  for (const auto& l : search.result.top) best.emplace_back(l, static_cast<int>(best.size()) + 1);
  PlanColumns c = plan_columns(v, best, options, false, false);
  EXPECT_TRUE(c.gpus);
  EXPECT_FALSE(c.hardware || c.simulated || c.campaigned || c.priced || c.deadline);
  rescore_by_step(best.front(), v.all[best.front().layout.variant].base, 1.0);
  c = plan_columns(v, best, options, true, true);
  EXPECT_TRUE(c.simulated && c.rescored && c.deadline);
  const std::vector<std::string> sets = best_overrides(v, best.front().layout);
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.front(), v.all[best.front().layout.variant].sets.front());
  const auto own = layout_overrides(best.front().layout.parallelism,
                                    v.all[best.front().layout.variant].base.parallelism);
  EXPECT_EQ(sets.size(), 1 + own.size());
}

// Expectation: the report's points are the sampled layouts and the best, each
// estimated again as the scenario with that layout: the best's figures are the
// search's, and the best by the objective is on the front.
TEST(PlanRun, ReportPointsAreTheSampleAndTheBest) {
  const PlanVariants v = two_counts();
  PlanOptions options;
  options.top = 3;
  const PlanSearch search = searched(v, options);
  std::vector<PlannedLayout> best(search.result.top.begin(), search.result.top.end());
  GrowthPhases growth(v);
  const std::vector<PlanPoint> points = plan_points(v, options, search, best, growth);
  ASSERT_EQ(points.size(), best.size());  // nothing sampled: the best alone
  for (const PlanPoint& p : points) {
    ASSERT_GT(p.rank, 0);
    const PlannedLayout& l = best[static_cast<std::size_t>(p.rank - 1)];
    EXPECT_EQ(p.index, l.index);
    EXPECT_DOUBLE_EQ(p.m.step_time_s, l.metrics.step_time_s);
    if (p.rank == 1) {
      EXPECT_TRUE(p.front);
    }
  }
}

}  // namespace
}  // namespace myriad::sim
