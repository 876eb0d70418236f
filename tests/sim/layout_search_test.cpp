// The layout search (sim/planning/layout_search.hpp): every candidate accounted for,
// the best by the objective, each as the scenario with its overrides would be
// estimated, and the same result every time.
#include "sim/planning/layout_search.hpp"

#include <gtest/gtest.h>

#include <limits>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/loader.hpp"
#include "models/scenario/pipeline_checks.hpp"
#include "models/scenario/scenario_checks.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

const std::string kLlama8b =
    "cluster: {preset: llama3-like, gpus: 64}\n"
    "model: {preset: llama3-8b, seq_length: 4096}\n"
    "parallelism: {tp: 8, sp: true, pp: 2, zero: 1, micro_batch: 1, global_batch: 128}\n"
    "overlap: {tp: true, pp: true, dp: true}\n"
    "training: {tokens: 100B}\n";

SearchSpace small_space(const models::scenario::Scenario& s) {
  SearchSpace space = default_space(s);
  space.pp = {1, 2, 4, 3};  // 3 does not divide the 32 layers
  space.virtual_stages = {1, 2};
  space.cp = {1};
  space.zero = {1, 3};
  return space;
}

// A scenario asking for ZB-H1: the layouts of one chunk a stage keep it, the
// interleaved ones take interleaved; each row's overrides, applied to the
// scenario, estimate its step; with pipelining and one chunk, zb-h1 is no slower
// than 1F1B (its weight-gradient passes fill the bubble).
TEST(LayoutSearch, KeepsTheScenariosZeroBubbleScheduleWhereAStageRunsOneChunk) {
  auto zb = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  zb.parallelism.schedule = models::scenario::Schedule::zb_h1;
  zb.origins.erase("parallelism.schedule");
  SearchSpace space = small_space(zb);
  space.pp = {2, 4};
  PlanOptions options;
  options.top = 40;
  const PlanResult r = search_layouts(zb, h100(), space, options);
  ASSERT_GT(r.top.size(), 4U);
  int kept = 0;
  for (const auto& l : r.top) {
    using models::scenario::Schedule;
    EXPECT_EQ(l.parallelism.schedule, l.parallelism.virtual_stages > 1 ? Schedule::interleaved
                                      : l.parallelism.pp > 1           ? Schedule::zb_h1
                                                                       : Schedule::one_f_one_b);
    kept += l.parallelism.schedule == Schedule::zb_h1;
    const auto sets = layout_overrides(l.parallelism, zb.parallelism);
    const auto again = models::scenario::load_scenario_text(
        kLlama8b, "plan.yaml", models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR}, sets));
    EXPECT_EQ(again.parallelism.schedule, l.parallelism.schedule);
    EXPECT_DOUBLE_EQ(estimate(again, h100()).step_time_s, l.metrics.step_time_s);
    if (l.parallelism.schedule == Schedule::zb_h1) {
      auto plain = again;
      plain.parallelism.schedule = Schedule::one_f_one_b;
      EXPECT_LT(l.metrics.step_time_s, estimate(plain, h100()).step_time_s);
    }
  }
  EXPECT_GT(kept, 0);
}

// A scenario asking for combined 1F1B: the layouts where Megatron-Core runs it
// (experts across ranks; virtual stages with pp > 1) keep it, the others take
// 1F1B or interleaved; each row's overrides estimate its step again.
TEST(LayoutSearch, KeepsTheScenariosCombinedScheduleWhereItRuns) {
  using models::scenario::Schedule;
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096}\n"
      "parallelism: {tp: 2, sp: true, ep: 8, pp: 4, virtual_stages: 2, zero: 1, "
      "global_batch: 64, schedule: combined-1f1b}\n"
      "overlap: {dp: true, pp: true, tp: true}\n";
  const auto s = models::scenario::load_scenario_text(text, "plan.yaml", kShipped);
  SearchSpace space = default_space(s);
  space.tp = {2};
  space.pp = {1, 2, 4};
  space.virtual_stages = {1, 2};
  space.ep = {1, 8};
  space.zero = {1};
  space.recompute = {models::scenario::Recompute::none};
  PlanOptions options;
  options.top = 100;
  const PlanResult r = search_layouts(s, h100(), space, options);
  ASSERT_GT(r.top.size(), 4U);
  int kept = 0;
  for (const auto& l : r.top) {
    const auto& p = l.parallelism;
    const bool runs = p.ep > 1 && (p.pp > 1) == (p.virtual_stages > 1);
    EXPECT_EQ(p.schedule, runs                   ? Schedule::combined_1f1b
                          : p.virtual_stages > 1 ? Schedule::interleaved
                                                 : Schedule::one_f_one_b);
    kept += runs ? 1 : 0;
    const auto again = models::scenario::load_scenario_text(
        text, "plan.yaml",
        models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR}, layout_overrides(p, s.parallelism)));
    EXPECT_EQ(again.parallelism.schedule, p.schedule);
    EXPECT_DOUBLE_EQ(estimate(again, h100()).step_time_s, l.metrics.step_time_s);
  }
  EXPECT_GT(kept, 0);
}

// Schedules as a searched axis (plan --schedules): each listed one as it is, so
// the checks refuse ZB-H1 and DualPipe where they cannot run (virtual stages, one
// stage) instead of folding them into the interleaved layouts; every row's
// overrides estimate its step again; at one chunk a stage, ZB-H1 is no slower
// than 1F1B on the same layout, and the axis multiplies the candidates.
TEST(LayoutSearch, SearchesTheListedSchedules) {
  using models::scenario::Schedule;
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  SearchSpace space = small_space(s);
  space.pp = {1, 2, 4};
  space.schedule = parse_schedule_axis("interleaved,zb-h1,dualpipe,1f1b");
  ASSERT_EQ(space.schedule,
            (std::vector<Schedule>{Schedule::one_f_one_b, Schedule::zb_h1, Schedule::dualpipe}));
  SearchSpace one = space;
  one.schedule.clear();
  EXPECT_EQ(candidate_count(space), 3 * candidate_count(one));
  PlanOptions options;
  options.top = 200;
  const PlanResult r = search_layouts(s, h100(), space, options);
  EXPECT_EQ(r.candidates, r.pruned + r.evaluated);
  ASSERT_GT(r.pruned_by.count("parallelism.schedule"), 0U);
  int zb = 0;
  int dualpipe = 0;
  for (const auto& l : r.top) {
    const Schedule got = l.parallelism.schedule;
    if (got == Schedule::zb_h1 || got == Schedule::dualpipe) {
      EXPECT_EQ(l.parallelism.virtual_stages, 1);
      EXPECT_GT(l.parallelism.pp, 1);
    }
    zb += got == Schedule::zb_h1;
    dualpipe += got == Schedule::dualpipe;
    const auto again = models::scenario::load_scenario_text(
        kLlama8b, "plan.yaml",
        models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR},
                                      layout_overrides(l.parallelism, s.parallelism)));
    EXPECT_EQ(again.parallelism.schedule, got);
    EXPECT_DOUBLE_EQ(estimate(again, h100()).step_time_s, l.metrics.step_time_s);
    if (got == Schedule::zb_h1) {
      auto plain = again;
      plain.parallelism.schedule = Schedule::one_f_one_b;
      EXPECT_LT(l.metrics.step_time_s, estimate(plain, h100()).step_time_s);
    }
  }
  EXPECT_GT(zb, 0);
  EXPECT_GT(dualpipe, 0);
  EXPECT_THROW(parse_schedule_axis("1f1b,gpipe"), std::invalid_argument);
  EXPECT_TRUE(parse_schedule_axis("").empty());
}

TEST(LayoutSearch, EveryCandidateIsPrunedOrEstimated) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  const SearchSpace space = small_space(s);
  PlanOptions options;
  options.top = 5;
  const PlanResult r = search_layouts(s, h100(), space, options);
  EXPECT_EQ(r.candidates, candidate_count(space));
  EXPECT_EQ(r.candidates, r.pruned + r.evaluated);
  std::size_t by_reason = 0;
  for (const auto& [key, by] : r.pruned_by) by_reason += by.count;
  EXPECT_EQ(by_reason, r.pruned);
  // pp 3: 64 GPUs are no multiple of tp * 3; v 2 at pp 1: no interleaving.
  EXPECT_GT(r.pruned_by.count("parallelism.tp"), 0U);
  EXPECT_GT(r.pruned_by.count("parallelism.schedule"), 0U);
  ASSERT_EQ(r.top.size(), 5U);
  // Placements (and recomputations) that change nothing are folded: no two rows
  // alike, and the best stands for its twins.
  EXPECT_GT(r.top.front().alike, 0U);
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    for (std::size_t j = i + 1; j < r.top.size(); ++j) {
      EXPECT_FALSE(r.top[i].metrics.step_time_s == r.top[j].metrics.step_time_s &&
                   r.top[i].metrics.memory == r.top[j].metrics.memory);
    }
  }
  for (std::size_t i = 1; i < r.top.size(); ++i) {
    EXPECT_LE(r.top[i - 1].metrics.days, r.top[i].metrics.days);
    EXPECT_LE(r.top[i].metrics.memory, options.headroom);
  }
}

// Expectation: the best layout, loaded as the scenario with its --set overrides
// and estimated on its own, gives the same step time; the search is
// deterministic; a larger K keeps the same head.
TEST(LayoutSearch, TheBestIsWhatEstimateGivesForIt) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  const SearchSpace space = small_space(s);
  PlanOptions options;
  options.top = 3;
  const PlanResult a = search_layouts(s, h100(), space, options);
  ASSERT_FALSE(a.top.empty());
  const auto again = models::scenario::load_scenario_text(
      kLlama8b, "plan.yaml",
      models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR},
                                    layout_overrides(a.top.front().parallelism, s.parallelism)));
  EXPECT_DOUBLE_EQ(estimate(again, h100()).step_time_s, a.top.front().metrics.step_time_s);
  const PlanResult b = search_layouts(s, h100(), space, options);
  ASSERT_EQ(b.top.size(), a.top.size());
  for (std::size_t i = 0; i < a.top.size(); ++i) EXPECT_EQ(a.top[i].index, b.top[i].index);
  options.top = 50;
  const PlanResult c = search_layouts(s, h100(), space, options);
  for (std::size_t i = 0; i < a.top.size(); ++i) EXPECT_EQ(a.top[i].index, c.top[i].index);
  // Maximizing tokens/s ranks the same layouts first as minimizing days (fixed GPUs
  // and batch).
  options.top = 3;
  options.objective = {"tokens-per-s", true};
  const PlanResult d = search_layouts(s, h100(), space, options);
  EXPECT_EQ(d.top.front().index, a.top.front().index);
}

TEST(LayoutSearch, HeadroomIsAConstraint) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  PlanOptions tight;
  tight.headroom = 0.01;  // the leanest layout (ZeRO-3, full recomputation) needs 5 %
  const PlanResult r = search_layouts(s, h100(), small_space(s), tight);
  EXPECT_TRUE(r.top.empty());
  EXPECT_EQ(r.over_memory, r.evaluated);
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

void expect_same_plan(const PlanResult& a, const PlanResult& b) {
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.pruned, b.pruned);
  EXPECT_EQ(a.evaluated, b.evaluated);
  EXPECT_EQ(a.over_memory, b.over_memory);
  EXPECT_EQ(a.balanced, b.balanced);
  EXPECT_EQ(a.partial, b.partial);
  EXPECT_EQ(a.offloaded, b.offloaded);
  EXPECT_EQ(a.offloaded_modules, b.offloaded_modules);
  ASSERT_EQ(a.pruned_by.size(), b.pruned_by.size());
  for (const auto& [key, by] : a.pruned_by) {
    ASSERT_EQ(b.pruned_by.count(key), 1U) << key;
    EXPECT_EQ(by.count, b.pruned_by.at(key).count) << key;
    EXPECT_EQ(by.first, b.pruned_by.at(key).first) << key;
    EXPECT_EQ(by.example, b.pruned_by.at(key).example) << key;
  }
  ASSERT_EQ(a.top.size(), b.top.size());
  for (std::size_t i = 0; i < a.top.size(); ++i) {
    EXPECT_EQ(a.top[i].index, b.top[i].index) << i;
    EXPECT_EQ(a.top[i].alike, b.top[i].alike) << i;
    EXPECT_EQ(a.top[i].metrics.step_time_s, b.top[i].metrics.step_time_s) << i;
    EXPECT_EQ(a.top[i].metrics.days, b.top[i].metrics.days) << i;
    EXPECT_EQ(a.top[i].parallelism.tp, b.top[i].parallelism.tp) << i;
    EXPECT_EQ(a.top[i].parallelism.dp, b.top[i].parallelism.dp) << i;
    EXPECT_EQ(a.top[i].parallelism.zero, b.top[i].parallelism.zero) << i;
    EXPECT_EQ(a.top[i].parallelism.stage_layers, b.top[i].parallelism.stage_layers) << i;
    EXPECT_EQ(a.top[i].parallelism.embedding_as_layer, b.top[i].parallelism.embedding_as_layer)
        << i;
    EXPECT_EQ(a.top[i].parallelism.loss_as_layer, b.top[i].parallelism.loss_as_layer) << i;
    EXPECT_EQ(a.top[i].parallelism.recompute_layers, b.top[i].parallelism.recompute_layers) << i;
    EXPECT_EQ(a.top[i].parallelism.offload_layers, b.top[i].parallelism.offload_layers) << i;
    EXPECT_EQ(a.top[i].parallelism.offload_modules, b.top[i].parallelism.offload_modules) << i;
  }
}

// The search in `shards` parts, each sent as JSON and read back, merged.
PlanResult merged_shards(const models::scenario::Scenario& s, const SearchSpace& space,
                         const PlanOptions& options, int shards) {
  std::vector<PlanResult> parts;
  for (int shard = 0; shard < shards; ++shard) {
    PlanOptions mine = options;
    mine.shard = shard;
    mine.shards = shards;
    const PlanResult part = search_layouts(s, h100(), space, mine);
    parts.push_back(plan_from_json(nlohmann::json::parse(plan_to_json(part).dump()), s, space));
  }
  return merge_plans(parts, options);
}

// Partial recomputation as an axis: Llama 3 70B at 16K on 64 H100, where without
// recomputation few layouts fit. Each layout recomputing every layer that fits
// is tried with the fewest layers of each chunk recomputed that still fit the
// headroom: one fewer does not, the layout is faster than recomputing all, and
// it is what estimate gives for the scenario with its overrides; the shards,
// merged, are the whole search.
TEST(LayoutSearch, PartialRecomputationIsAnAxis) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-70b, seq_length: 16384}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 128}\n"
      "overlap: {tp: true, pp: true, dp: true}\n"
      "training: {tokens: 100B}\n";
  const auto s = models::scenario::load_scenario_text(text, "plan.yaml", kShipped);
  SearchSpace space = default_space(s);
  space.tp = {8};
  space.pp = {2, 4, 8};
  space.virtual_stages = {1, 2};
  space.cp = {1};
  space.zero = {1};
  space.micro_batch = {1, 2};
  space.recompute = {models::scenario::Recompute::none, models::scenario::Recompute::full};
  PlanOptions options;
  options.top = 8;
  const PlanResult all = search_layouts(s, h100(), space, options);
  options.partial_recompute = true;
  const PlanResult partial = search_layouts(s, h100(), space, options);
  EXPECT_EQ(all.partial, 0U);
  ASSERT_GT(partial.partial, 0U);
  ASSERT_FALSE(partial.top.empty());
  EXPECT_LT(partial.top.front().metrics.step_time_s, all.top.front().metrics.step_time_s);
  int checked = 0;
  for (const auto& l : partial.top) {
    if (l.parallelism.recompute_layers == 0) continue;
    ++checked;
    models::scenario::Scenario again = s;
    apply_planned(again, l);
    const StepReport r = estimate(again, h100(), Detail::summary);
    EXPECT_EQ(r.step_time_s, l.metrics.step_time_s);
    EXPECT_LE(r.memory_needed() / r.memory_usable(), options.headroom);
    --again.parallelism.recompute_layers;
    if (again.parallelism.recompute_layers > 0) {
      const StepReport fewer = estimate(again, h100(), Detail::summary);
      EXPECT_GT(fewer.memory_needed() / fewer.memory_usable(), options.headroom);
    }
    again.parallelism.recompute_layers = 0;
    EXPECT_LT(l.metrics.step_time_s, estimate(again, h100(), Detail::summary).step_time_s);
  }
  EXPECT_GT(checked, 0);
  expect_same_plan(merged_shards(s, space, options, 3), partial);
}

// A space of one chunk a stage, cp 1, micro-batches of 1 and 2: the offload tests'.
SearchSpace one_chunk_space(const models::scenario::Scenario& s, std::vector<int> tp,
                            std::vector<int> pp, int zero,
                            std::vector<models::scenario::Recompute> recompute) {
  SearchSpace space = default_space(s);
  space.tp = std::move(tp);
  space.pp = std::move(pp);
  space.virtual_stages = {1};
  space.cp = {1};
  space.zero = {zero};
  space.micro_batch = {1, 2};
  space.recompute = std::move(recompute);
  return space;
}

// `l` applied to `s`: estimated as planned, within the headroom, its offloaded
// activations within the host's memory; the scenario.
models::scenario::Scenario expect_as_planned(const models::scenario::Scenario& s,
                                             const PlannedLayout& l, double headroom) {
  models::scenario::Scenario again = s;
  apply_planned(again, l);
  const StepReport r = estimate(again, h100(), Detail::summary);
  EXPECT_EQ(r.step_time_s, l.metrics.step_time_s);
  EXPECT_LE(r.memory_needed() / r.memory_usable(), headroom);
  EXPECT_TRUE(r.host_fits());
  return again;
}

// The best 8 of `space` without --offload and with it (`options` left with it).
std::pair<PlanResult, PlanResult> without_and_with_offload(const models::scenario::Scenario& s,
                                                           const SearchSpace& space,
                                                           PlanOptions& options) {
  options.top = 8;
  options.offload = false;
  PlanResult all = search_layouts(s, h100(), space, options);
  options.offload = true;
  return {std::move(all), search_layouts(s, h100(), space, options)};
}

// Expectation: with --offload, layouts on one stage without recomputation that
// do not fit take the fewest layers offloaded that fit them (one fewer does not),
// the search finds the faster layouts that only offload makes fit, and shards
// merge to the same plan.
TEST(LayoutSearch, ActivationOffloadIsAnAxis) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 64, gpu: H200}\n"
      "model: {preset: llama3-70b}\n"
      "parallelism: {tp: 2, sp: true, pp: 1, zero: 3, micro_batch: 1, global_batch: 256}\n"
      "overlap: {tp: true, dp: true}\n"
      "training: {tokens: 100B}\n";
  const auto s = models::scenario::load_scenario_text(text, "plan.yaml", kShipped);
  const SearchSpace space = one_chunk_space(
      s, {1, 2}, {1}, 3, {models::scenario::Recompute::none, models::scenario::Recompute::full});
  PlanOptions options;
  const auto [all, offloaded] = without_and_with_offload(s, space, options);
  EXPECT_EQ(all.offloaded, 0U);
  ASSERT_GT(offloaded.offloaded, 0U);
  EXPECT_LT(offloaded.offloaded_modules, offloaded.offloaded);  // some by whole layers
  ASSERT_FALSE(offloaded.top.empty());
  EXPECT_LT(offloaded.top.front().metrics.step_time_s, all.top.front().metrics.step_time_s);
  EXPECT_GT(offloaded.top.front().parallelism.offload_layers, 0);
  int checked = 0;
  for (const auto& l : offloaded.top) {
    if (l.parallelism.offload_layers == 0) continue;
    ++checked;
    models::scenario::Scenario again = expect_as_planned(s, l, options.headroom);
    --again.parallelism.offload_layers;
    const StepReport fewer = estimate(again, h100(), Detail::summary);
    EXPECT_GT(fewer.memory_needed() / fewer.memory_usable(), options.headroom);
  }
  EXPECT_GT(checked, 0);
  expect_same_plan(merged_shards(s, space, options, 2), offloaded);
}

// Expectation: with --offload, layouts with a pipeline (where whole layers cannot
// be offloaded) that do not fit take the modules that fit them
// (offloaded_modules_that_fit), and no longer count as over memory; the best is no
// slower, and the rows that offload are among the best; each one's overrides say its modules and
// reproduce its estimate; shards merge to the same plan (the modules through the JSON).
TEST(LayoutSearch, FineGrainedOffloadIsAnAxisOnPipelines) {
  const auto s = models::scenario::load_scenario_text(
      kLlama8b, "plan.yaml",
      models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR}, {"model.seq_length=16384"}));
  const SearchSpace space =
      one_chunk_space(s, {2, 4, 8}, {2, 4}, 1,
                      {models::scenario::Recompute::none, models::scenario::Recompute::selective});
  PlanOptions options;
  const auto [all, offloaded] = without_and_with_offload(s, space, options);
  ASSERT_GT(offloaded.offloaded, 0U);
  ASSERT_FALSE(offloaded.top.empty());
  ASSERT_FALSE(all.top.empty());
  EXPECT_EQ(offloaded.over_memory + offloaded.offloaded, all.over_memory);
  EXPECT_EQ(offloaded.offloaded_modules, offloaded.offloaded);  // no layout on one stage
  EXPECT_LE(offloaded.top.front().metrics.step_time_s, all.top.front().metrics.step_time_s);
  int checked = 0;
  for (const auto& l : offloaded.top) {
    if (l.parallelism.offload_modules.empty()) continue;
    ++checked;
    EXPECT_GT(l.parallelism.pp, 1);
    EXPECT_EQ(l.parallelism.offload_layers, 0);
    models::scenario::Scenario again = expect_as_planned(s, l, options.headroom);
    again.parallelism.offload_modules.clear();
    const StepReport without = estimate(again, h100(), Detail::summary);
    EXPECT_GT(without.memory_needed() / without.memory_usable(), options.headroom);
    const std::vector<std::string> sets = layout_overrides(l.parallelism, s.parallelism);
    EXPECT_NE(std::find(sets.begin(), sets.end(),
                        "parallelism.offload_modules=" +
                            models::scenario::offload_modules_text(l.parallelism.offload_modules)),
              sets.end());
  }
  EXPECT_GT(checked, 0);
  expect_same_plan(merged_shards(s, space, options, 2), offloaded);
}

// Expectation: the candidates split among shards (as mpirun's ranks split them),
// each shard's result sent as JSON and merged, give the search of them all at
// once: counts, first examples, the best K, their alike counts.
TEST(LayoutSearch, ShardsMergedAreTheWholeSearch) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  const SearchSpace space = small_space(s);
  PlanOptions options;
  options.top = 6;
  const PlanResult whole = search_layouts(s, h100(), space, options);
  ASSERT_GT(whole.top.front().alike, 0U);
  for (const int shards : {2, 3, 7}) {
    SCOPED_TRACE(shards);
    expect_same_plan(merged_shards(s, space, options, shards), whole);
  }
}

// The stage split as an axis: with balanced stages, pipelined layouts of the
// 8B model (whose 128k-token head weighs one and a half layers) take fewer layers
// on the last stage, and the best layout is at least as fast as without; each
// kept layout is what estimate gives for the scenario with its overrides; the
// shards, merged, are the whole search.
TEST(LayoutSearch, BalancedStagesAreAnAxis) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  SearchSpace space = small_space(s);
  space.pp = {2, 4};
  PlanOptions options;
  options.top = 6;
  const PlanResult even = search_layouts(s, h100(), space, options);
  options.balanced_stages = true;
  const PlanResult balanced = search_layouts(s, h100(), space, options);
  EXPECT_EQ(even.balanced, 0U);
  EXPECT_GT(balanced.balanced, 0U);
  ASSERT_FALSE(balanced.top.empty());
  EXPECT_LE(balanced.top.front().metrics.step_time_s, even.top.front().metrics.step_time_s);
  int with_split = 0;
  for (const auto& l : balanced.top) {
    if (l.parallelism.stage_layers.empty()) continue;
    ++with_split;
    EXPECT_LT(l.parallelism.stage_layers.back(), 32 / l.parallelism.pp);
    const auto again = models::scenario::load_scenario_text(
        kLlama8b, "plan.yaml",
        models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR},
                                      layout_overrides(l.parallelism, s.parallelism)));
    EXPECT_DOUBLE_EQ(estimate(again, h100()).step_time_s, l.metrics.step_time_s);
  }
  EXPECT_GT(with_split, 0);
  expect_same_plan(merged_shards(s, space, options, 2), balanced);
}

// Expectation: layout_at(index) is the layout the search evaluated at that index.
TEST(LayoutSearch, LayoutAtDecodesTheEnumeration) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  const SearchSpace space = small_space(s);
  PlanOptions options;
  std::size_t checked = 0;
  options.on_evaluated = [&](std::size_t index, const models::scenario::ParallelSpec& p) {
    models::scenario::Scenario again = s;
    apply_layout(again, layout_at(s, space, index));
    EXPECT_EQ(again.parallelism.tp, p.tp);
    EXPECT_EQ(again.parallelism.pp, p.pp);
    EXPECT_EQ(again.parallelism.virtual_stages, p.virtual_stages);
    EXPECT_EQ(again.parallelism.dp, p.dp);
    EXPECT_EQ(again.parallelism.zero, p.zero);
    EXPECT_EQ(again.parallelism.recompute, p.recompute);
    EXPECT_EQ(again.parallelism.placement, p.placement);
    ++checked;
  };
  const PlanResult r = search_layouts(s, h100(), space, options);
  EXPECT_EQ(checked, r.evaluated);
  EXPECT_GT(checked, 10U);
  PlanOptions bad;
  bad.shard = 2;
  bad.shards = 2;
  EXPECT_THROW((void)search_layouts(s, h100(), space, bad), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

// Expectation: pruning variants read as `--prune` gives them; anything else is an
// error saying what was expected.
TEST(LayoutSearch, PruningVariantsParse) {
  const models::scenario::PruneSpec both = parse_prune("experts=8+2:4");
  EXPECT_EQ(both.experts, 8);
  EXPECT_EQ(both.pattern, models::scenario::Sparsity::two_four);
  EXPECT_DOUBLE_EQ(both.sparsity, 0.5);
  EXPECT_EQ(prune_text(both), "experts 8 + 2:4");
  const models::scenario::PruneSpec kernel = parse_prune("unstructured-kernel=0.7");
  EXPECT_TRUE(kernel.sparse_kernel);
  EXPECT_DOUBLE_EQ(kernel.sparsity, 0.7);
  EXPECT_EQ(prune_text(parse_prune("none")), "none");
  for (const char* bad :
       {"bogus", "unstructured=1.5", "experts=2.5", "experts=", "2:4+x", "2:4+unstructured=0.5"}) {
    EXPECT_THROW((void)parse_prune(bad), std::invalid_argument) << bad;
  }
}

// Expectation: a MoE search spans the experts' tp (tp or 1) and the pruning
// variants given, each layout carrying its own; the best under 2:4 is faster
// than the best unpruned, and each is what `estimate` gives for it.
TEST(LayoutSearch, SearchesExpertTensorParallelismAndPruning) {
  const auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096}\n"
      "parallelism: {tp: 2, sp: true, ep: 8, zero: 1, global_batch: 256}\n",
      "plan.yaml", kShipped);
  SearchSpace space = default_space(s);
  EXPECT_EQ(space.etp, (std::vector<int>{0, 1}));
  space.pp = {1};
  space.virtual_stages = {1};
  space.recompute = {models::scenario::Recompute::full};
  space.placement = {models::scenario::RankOrder::tp_cp_dp_pp};
  const std::size_t unpruned = candidate_count(space);
  space.prune = {parse_prune("none"), parse_prune("2:4")};
  EXPECT_EQ(candidate_count(space), 2 * unpruned);
  PlanOptions options;
  options.top = 1000;
  const PlanResult r = search_layouts(s, h100(), space, options);
  ASSERT_FALSE(r.top.empty());
  const auto best_of = [&](models::scenario::Sparsity pattern) {
    return std::find_if(r.top.begin(), r.top.end(),
                        [&](const PlannedLayout& l) { return l.prune.pattern == pattern; });
  };
  const auto sparse = best_of(models::scenario::Sparsity::two_four);
  const auto dense = best_of(models::scenario::Sparsity::none);
  ASSERT_NE(sparse, r.top.end());
  ASSERT_NE(dense, r.top.end());
  EXPECT_LT(sparse->metrics.step_time_s, dense->metrics.step_time_s);
  bool whole_experts = false;
  for (const auto& l : r.top) whole_experts |= l.parallelism.etp == 1 && l.parallelism.tp > 1;
  EXPECT_TRUE(whole_experts) << "etp 1 beside tp > 1 should be among the layouts";
  models::scenario::Scenario again = s;
  apply_planned(again, *sparse);
  EXPECT_DOUBLE_EQ(estimate(again, h100(), Detail::summary).step_time_s,
                   sparse->metrics.step_time_s);
}

// Expectation: what a search checks of each candidate (the layout's keys derived
// and checked, derive_layout and check_layout) finds the same errors, in the same
// order, as deriving and checking the whole scenario does, on a scenario with
// failure processes and policies (the 405B campaign example) and on an MoE with
// pruning variants whose capacity factor holds under a token of an expert at
// micro-batch 1 (the one bound a layout can break); the rest of the checks find
// nothing in a loaded scenario.
TEST(LayoutSearch, ALayoutsChecksAreTheWholeScenarios) {
  const auto campaign = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml",
      kShipped);
  const auto moe = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096, moe: {capacity_factor: 0.0006}}\n"
      "parallelism: {tp: 2, sp: true, ep: 8, zero: 1, micro_batch: 2, global_batch: 256}\n",
      "plan.yaml", kShipped);
  const auto errors = [](const models::scenario::Diagnostics& d) {
    std::vector<std::string> out;
    for (const auto& item : d.all()) {
      if (item.severity == models::scenario::Severity::error)
        out.push_back(item.key + ": " + item.message);
    }
    return out;
  };
  std::size_t compared = 0;
  std::size_t refused = 0;
  std::size_t capacity = 0;
  for (const auto* base : {&campaign, &moe}) {
    SearchSpace space = default_space(*base);
    if (base == &campaign) space.global_batch = {1024, 2048};
    if (base == &moe) space.prune = {parse_prune("none"), parse_prune("2:4")};
    const models::scenario::Location where{base->file, 0, 0};
    const std::size_t total = candidate_count(space);
    for (std::size_t index = 0; index < total; index += 7) {
      const models::scenario::ParallelSpec layout = layout_at(*base, space, index);
      models::scenario::Scenario searched = *base;
      apply_layout(searched, layout);
      searched.model.moe.prune = prune_at(*base, space, index);
      models::scenario::Diagnostics by_layout;
      models::scenario::check_layout(searched, where, by_layout);
      models::scenario::Scenario whole = *base;
      whole.parallelism = layout;
      whole.model.moe.prune = searched.model.moe.prune;
      whole.origins.erase("parallelism.dp");
      whole.origins.erase("parallelism.schedule");
      models::scenario::derive(whole);
      models::scenario::Diagnostics all;
      models::scenario::check(whole, where, all);
      ASSERT_EQ(errors(by_layout), errors(all)) << "candidate " << index;
      ++compared;
      refused += all.has_errors();
      for (const auto& e : errors(all)) capacity += e.starts_with("model.moe.capacity_factor");
    }
  }
  EXPECT_GT(compared, 1000U);
  EXPECT_GT(refused, 100U);
  EXPECT_LT(refused, compared);
  EXPECT_GT(capacity, 0U);
}

// Expectation: a model of 2^20 experts on 64 GPUs searches ep 1, 2, ..., 64 (7
// degrees; an ep rank is a GPU), not the 21 powers of two that divide the experts,
// and a layout's estimate costs what it costs for 8 experts (the router's load in
// closed form), so the plan is done in seconds: it ran past a minute before.
TEST(LayoutSearch, ExpertParallelDegreesStopAtTheGpus) {
  const auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096, moe: {experts: 1048576}}\n"
      "parallelism: {tp: 2, sp: true, ep: 8, zero: 1, global_batch: 256}\n",
      "plan.yaml", kShipped);
  SearchSpace space = default_space(s);
  EXPECT_EQ(space.ep, (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  space.pp = {1};
  space.virtual_stages = {1};
  space.micro_batch = {1};
  space.recompute = {models::scenario::Recompute::full};
  space.placement = {models::scenario::RankOrder::tp_cp_dp_pp};
  PlanOptions options;
  const PlanResult r = search_layouts(s, h100(), space, options);
  EXPECT_EQ(r.candidates, candidate_count(space));
  EXPECT_GT(r.evaluated, 0U);
}

// Expectation: a space past kMostCandidates is refused up front, with the count,
// each list's length and the input behind the longest (here --global-batch).
TEST(LayoutSearch, TooLargeASearchIsRefusedNamingItsLongestList) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  SearchSpace space = default_space(s);
  EXPECT_EQ(search_too_large(space), "");
  space.global_batch.clear();
  for (int b = 1; b <= 100000; ++b) space.global_batch.push_back(b);
  const std::string why = search_too_large(space);
  EXPECT_NE(why.find(std::to_string(candidate_count(space)) + " candidates"), std::string::npos)
      << why;
  EXPECT_NE(why.find("global batches 100000 (--global-batch)"), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(kMostCandidates)), std::string::npos) << why;
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

// Expectation: a space whose every candidate the scenario checks refuse is said
// to be empty, naming the key that emptied it (tp 3 divides no 32 heads), and
// `--prune` variants that leave fewer experts than top_k are refused before any
// search, saying how many are left; a space with an estimate is not empty.
TEST(LayoutSearch, AnEmptySpaceNamesTheConstraintThatEmptiedIt) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  SearchSpace space = small_space(s);
  PlanOptions options;
  EXPECT_EQ(empty_space_problem(search_layouts(s, h100(), space, options)), "");
  space.tp = {3};
  const std::string why = empty_space_problem(search_layouts(s, h100(), space, options));
  EXPECT_NE(why.find("the search space is empty"), std::string::npos) << why;
  EXPECT_NE(why.find("parallelism.tp refused"), std::string::npos) << why;
  const auto mixtral = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096}\n"
      "parallelism: {tp: 2, sp: true, ep: 8, global_batch: 256}\n",
      "plan.yaml", kShipped);
  EXPECT_EQ(parse_prune_axis(mixtral, "none,experts=6").size(), 2U);
  EXPECT_TRUE(parse_prune_axis(mixtral, "").empty());
  for (const char* bad : {"experts=9", "experts=8", "none,experts=7"}) {
    EXPECT_THROW((void)parse_prune_axis(mixtral, bad), std::invalid_argument) << bad;
  }
  EXPECT_THROW((void)parse_prune_axis(s, "2:4"), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

PlannedLayout planned(std::size_t index, double days, double gpu_hours, std::size_t variant = 0) {
  PlannedLayout l;
  l.index = index;
  l.variant = variant;
  l.metrics.days = days;
  l.metrics.gpu_hours = gpu_hours;
  return l;
}

// Expectation: with a deadline, the layouts that meet it rank first by the
// objective (the cheapest), those that miss it after, the nearest miss first;
// ties by (variant, index); without one, the objective alone.
TEST(LayoutSearch, TheDeadlineRanksFirstThenTheObjective) {
  PlanOptions o;
  o.objective = {"gpu-hours", false};
  o.max_days = 60;
  const PlannedLayout cheap_late = planned(0, 61, 1e6);
  const PlannedLayout dear_on_time = planned(1, 59, 2e6);
  const PlannedLayout cheap_on_time = planned(2, 60, 1.5e6);
  const PlannedLayout later = planned(3, 70, 0.5e6);
  EXPECT_TRUE(ranks_before(dear_on_time, cheap_late, o));
  EXPECT_TRUE(ranks_before(cheap_on_time, dear_on_time, o));  // 60 days meets 60
  EXPECT_TRUE(ranks_before(cheap_late, later, o));            // both late: fewer days first
  EXPECT_FALSE(ranks_before(later, cheap_late, o));
  // Ties: the earlier search, then the earlier index.
  EXPECT_TRUE(ranks_before(planned(9, 50, 1e6, 0), planned(1, 50, 1e6, 1), o));
  EXPECT_TRUE(ranks_before(planned(1, 50, 1e6, 1), planned(2, 50, 1e6, 1), o));
  o.max_days = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(ranks_before(later, cheap_late, o));
}

// Expectation: from a batch range a layout takes the largest batch that its
// micro-batch x dp divides (dp = GPUs / (tp pp cp)), by hand: 8,192 GPUs at tp 8,
// cp 4 are dp 256; micro-batches of 2 take steps of 512: 2,560 in [1,536, 2,560].
// 12,288 GPUs are dp 384: 2,304. A range no multiple reaches, or a count dp cannot
// divide, gives the range's low end (the checks then refuse the layout).
TEST(LayoutSearch, ABatchRangeGivesEachLayoutTheLargestItsDpDivides) {
  models::scenario::ParallelSpec p;
  p.tp = 8;
  p.pp = 1;
  p.cp = 4;
  p.micro_batch = 2;
  EXPECT_EQ(batch_in_range(p, {1536, 2560, 8192}), 2560);
  p.micro_batch = 1;
  EXPECT_EQ(batch_in_range(p, {1536, 2560, 12288}), 2304);
  EXPECT_EQ(batch_in_range(p, {1536, 2000, 8192}), 1792);
  EXPECT_EQ(batch_in_range(p, {1537, 1790, 8192}), 1537);  // 1,536 and 1,792 are outside
  EXPECT_EQ(batch_in_range(p, {1536, 2560, 8200}), 1536);  // 8,200 is no multiple of 32
  // Interleaved, micro-batches go in groups of pp: tp 8 pp 8 cp 2 on 16,384 GPUs
  // is dp 128, steps of 128 x 8 = 1,024: 2,048 (2,560 would be 20 micro-batches,
  // no multiple of 8, and the layout refused).
  p.pp = 8;
  p.cp = 2;
  p.virtual_stages = 8;
  EXPECT_EQ(batch_in_range(p, {1536, 2560, 16384}), 2048);
}

// Expectation: a search with a deadline counts the layouts within the headroom
// that meet it, lists those first, and a range of batches puts on every layout a
// batch its micro-batch x dp divides, within the range.
TEST(LayoutSearch, ADeadlineAndABatchRangeShapeTheSearch) {
  const auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  SearchSpace space = small_space(s);
  PlanOptions options;
  options.top = 200;
  const PlanResult all = search_layouts(s, h100(), space, options);
  ASSERT_GT(all.top.size(), 10U);
  // A deadline between the fastest and the slowest kept.
  options.max_days = all.top[all.top.size() / 2].metrics.days;
  options.objective = {"memory", false};
  const PlanResult r = search_layouts(s, h100(), space, options);
  EXPECT_GT(r.meets_deadline, 0U);
  EXPECT_LT(r.meets_deadline, r.evaluated - r.over_memory);
  bool missed = false;
  for (const auto& l : r.top) {
    const bool meets = l.metrics.days <= options.max_days;
    EXPECT_FALSE(meets && missed) << "a layout that meets the deadline after one that does not";
    missed = missed || !meets;
  }
  EXPECT_TRUE(missed);
  space.batch_range = SearchSpace::BatchRange{100, 200, s.cluster.gpus};
  options = PlanOptions{};
  options.top = 50;
  const PlanResult ranged = search_layouts(s, h100(), space, options);
  ASSERT_FALSE(ranged.top.empty());
  for (const auto& l : ranged.top) {
    const auto& p = l.parallelism;
    EXPECT_GE(p.global_batch, 100);
    EXPECT_LE(p.global_batch, 200);
    // Interleaved layouts take micro-batches in groups of pp.
    const int step = p.micro_batch * p.dp * (p.virtual_stages > 1 ? p.pp : 1);
    EXPECT_EQ(p.global_batch % step, 0);
    EXPECT_GT(p.global_batch + step, 200) << "not the largest in the range";
    // Decoded again from its index, the same batch.
    EXPECT_EQ(layout_at(s, space, l.index).global_batch, p.global_batch);
  }
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

// DeepSeek-V3's 61 layers divide over no pipeline depth but 1 and 61: the search
// gives the stages between one more layer each where pp does not divide them
// (not pruned), and the best's --set line, applied to the scenario with its own
// stage split and recomputation, reproduces the best.
TEST(LayoutSearch, PipelinesOfLayersTheyDoNotDivideAreSearched) {
  const auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/deepseek-v3-h800-2048.yaml", kShipped);
  SearchSpace space = default_space(s);
  space.tp = {1};
  space.pp = {8, 16};
  space.virtual_stages = {1};
  space.cp = {1};
  space.ep = {64};
  space.etp = {1};
  space.micro_batch = {1};
  space.zero = {1};
  space.recompute = {models::scenario::Recompute::none, models::scenario::Recompute::full};
  PlanOptions options;
  options.top = 4;
  const PlanResult r = search_layouts(s, testing::shipped_profile("H800"), space, options);
  EXPECT_EQ(r.pruned, 0U);
  ASSERT_FALSE(r.top.empty());
  int sixteen = 0;
  for (std::size_t index = 0; index < candidate_count(space); ++index) {
    const models::scenario::ParallelSpec p = layout_at(s, space, index);
    if (p.pp != 16) continue;
    ++sixteen;
    // 61 = 16 x 3 + 13: stages 1 to 13 one more.
    EXPECT_EQ(p.stage_layers, (std::vector<int>{3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3}));
  }
  EXPECT_GT(sixteen, 0);
  for (const auto& l : r.top) {
    const auto again = models::scenario::load_scenario(
        std::string(MYRIAD_SCENARIO_DIR) + "/examples/deepseek-v3-h800-2048.yaml",
        models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR},
                                      layout_overrides(l.parallelism, s.parallelism)));
    EXPECT_DOUBLE_EQ(estimate(again, testing::shipped_profile("H800"), Detail::summary).step_time_s,
                     l.metrics.step_time_s);
    // Whole layers recomputed: DeepSeek's own recomputation is off.
    if (l.parallelism.recompute != models::scenario::Recompute::none) {
      EXPECT_FALSE(again.parallelism.recompute_norms_and_up);
    }
  }
}

// Interleaved chunks of layers they do not divide (Llama 3 405B's 126 layers on
// 8 x 4 or 16 x 8 chunks, as its published runs split them): the embedding and
// the loss each take a layer's place, where that evens them, in the order none,
// both, the loss, the embedding; the scenario's own choice where it evens them;
// one chunk a stage keeps the stage split. Each of the best reproduces its
// estimate from its overrides, and the shards, sent as JSON and merged, are the
// whole search.
TEST(LayoutSearch, InterleavedChunksCountTheEmbeddingAndTheLossWhereTheLayersNeedIt) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 1024}\n"
      "model: {preset: llama3-405b}\n"
      "parallelism: {tp: 8, sp: true, pp: 2, global_batch: 512, recompute: full}\n"
      "overlap: {tp: true, pp: true, dp: true}\n"
      "training: {tokens: 1T}\n";
  const auto s = models::scenario::load_scenario_text(text, "llama405.yaml", kShipped);
  ASSERT_EQ(s.model.layers, 126);
  SearchSpace space = default_space(s);
  space.tp = {8};
  space.pp = {2, 8, 16};
  space.virtual_stages = {1, 2, 4, 8};
  space.cp = {1};
  space.micro_batch = {1};
  space.zero = {1};
  space.recompute = {models::scenario::Recompute::full};
  space.placement = {models::scenario::RankOrder::tp_cp_dp_pp};
  int counted = 0;
  for (std::size_t index = 0; index < candidate_count(space); ++index) {
    const models::scenario::ParallelSpec p = layout_at(s, space, index);
    const bool even = 126 % (p.pp * p.virtual_stages) == 0;
    const bool spread = p.virtual_stages == 1 && p.pp > 2;  // stage_layers instead
    EXPECT_EQ(p.embedding_as_layer, !even && !spread) << p.pp << " x " << p.virtual_stages;
    EXPECT_EQ(p.loss_as_layer, !even && !spread) << p.pp << " x " << p.virtual_stages;
    EXPECT_EQ(p.stage_layers.empty(), !spread || even) << p.pp << " x " << p.virtual_stages;
    counted += p.embedding_as_layer ? 1 : 0;
  }
  EXPECT_EQ(counted, 9);  // {2, 8, 16} x {2, 4, 8}: 128 layers split evenly
  PlanOptions options;
  options.top = 6;
  const PlanResult r = search_layouts(s, h100(), space, options);
  EXPECT_EQ(r.pruned, 0U);
  ASSERT_FALSE(r.top.empty());
  bool interleaved = false;
  for (const auto& l : r.top) {
    interleaved = interleaved || l.parallelism.embedding_as_layer;
    const auto again = models::scenario::load_scenario_text(
        text, "llama405.yaml",
        models::scenario::LoadOptions({MYRIAD_SCENARIO_DIR},
                                      layout_overrides(l.parallelism, s.parallelism)));
    EXPECT_EQ(again.parallelism.embedding_as_layer, l.parallelism.embedding_as_layer);
    EXPECT_DOUBLE_EQ(estimate(again, h100(), Detail::summary).step_time_s, l.metrics.step_time_s);
  }
  EXPECT_TRUE(interleaved);  // interleaving beats 8 stages of one chunk here
  expect_same_plan(r, merged_shards(s, space, options, 3));

  // 31 layers: on 4 x 2 chunks the loss alone evens them (32), tried before the
  // embedding; a scenario that counts the embedding keeps it.
  auto odd = s;
  odd.model.layers = 31;
  space.pp = {4};
  space.virtual_stages = {2};
  const models::scenario::ParallelSpec loss = layout_at(odd, space, 0);
  EXPECT_FALSE(loss.embedding_as_layer);
  EXPECT_TRUE(loss.loss_as_layer);
  odd.parallelism.embedding_as_layer = true;
  const models::scenario::ParallelSpec embedding = layout_at(odd, space, 0);
  EXPECT_TRUE(embedding.embedding_as_layer);
  EXPECT_FALSE(embedding.loss_as_layer);
  // On one stage, nothing to count.
  space.pp = {1};
  space.virtual_stages = {1};
  EXPECT_FALSE(layout_at(odd, space, 0).embedding_as_layer);
}

// The scenario's fine-grained offload is kept where a layout's recomputation
// leaves its modules' tensors: whole under none, without core_attn under
// selective, none under full; no layout is refused for it.
TEST(LayoutSearch, OffloadedModulesFollowTheRecomputation) {
  auto s = models::scenario::load_scenario_text(kLlama8b, "plan.yaml", kShipped);
  using models::scenario::OffloadModule;
  using models::scenario::Recompute;
  s.parallelism.offload_modules = {OffloadModule::core_attn, OffloadModule::mlp_norm};
  SearchSpace space = small_space(s);
  space.recompute = {Recompute::none, Recompute::selective, Recompute::full};
  for (std::size_t index = 0; index < candidate_count(space); ++index) {
    const models::scenario::ParallelSpec p = layout_at(s, space, index);
    const std::vector<OffloadModule> expected =
        p.recompute == Recompute::none        ? s.parallelism.offload_modules
        : p.recompute == Recompute::selective ? std::vector<OffloadModule>{OffloadModule::mlp_norm}
                                              : std::vector<OffloadModule>{};
    EXPECT_EQ(p.offload_modules, expected) << index;
  }
  const PlanResult r = search_layouts(s, h100(), space, PlanOptions{});
  EXPECT_EQ(r.pruned_by.count("parallelism.offload_modules"), 0U);
}

}  // namespace
}  // namespace myriad::sim
