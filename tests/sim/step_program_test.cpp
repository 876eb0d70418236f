// The step program (sim/program/step_program.hpp) and its evaluator
// (sim/program/evaluator.hpp): hand-worked programs, and the closed form
// checked against the evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/program/closed_form_check.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using testing::kShipped;

// Hand-built programs: what the evaluator plays, worked out by hand.
StepTask task(TaskKind kind, double seconds, Stream stream = Stream::compute) {
  StepTask t;
  t.kind = kind;
  t.stream = stream;
  t.seconds = seconds;
  t.activity = kind == TaskKind::pass        ? Activity::forward
               : kind == TaskKind::optimizer ? Activity::optimizer
               : kind == TaskKind::send      ? Activity::pp
                                             : Activity::dp;
  return t;
}

StepProgram one_stage(double share) {
  StepProgram p;
  p.overlap_share = share;
  p.chunk_layers = {{1}};
  p.chunk_dense = {{0}};
  p.stages.resize(1);
  return p;
}

TEST(ProgramEvaluator, RunsAStreamInOrder) {
  StepProgram p = one_stage(0);
  p.stages[0].tasks = {task(TaskKind::pass, 1), task(TaskKind::pass, 2),
                       task(TaskKind::optimizer, 0.5)};
  const ProgramRun r = evaluate_program(p);
  EXPECT_DOUBLE_EQ(r.step_time_s, 3.5);
  EXPECT_DOUBLE_EQ(r.times[0][1].start_s, 1);
  ASSERT_EQ(r.timelines[0].size(), 3U);
  EXPECT_EQ(r.timelines[0][2].activity, Activity::optimizer);
}

// A collective of D seconds beside a pass of W seconds takes share s of the
// compute rate while both run: the pass loses s x min(D, W / (1 - s)).
TEST(ProgramEvaluator, ACollectiveBesideComputeTakesItsShare) {
  for (const auto& [d, end] : {std::pair{0.5, 1.1}, std::pair{2.0, 1.25}}) {
    StepProgram p = one_stage(0.2);
    StepTask beside = task(TaskKind::dp_collective, d, Stream::dp);
    beside.takes_share = true;
    p.stages[0].tasks = {task(TaskKind::pass, 1), beside};
    const ProgramRun r = evaluate_program(p);
    EXPECT_NEAR(r.times[0][0].end_s, end, 1e-12) << d;
    EXPECT_NEAR(r.step_time_s, std::max(end, d), 1e-12);
  }
}

// A task that waits for another's start plus a lag, and a join that waits for
// the data-parallel stream: the compute stream's idle time counts as dp.
TEST(ProgramEvaluator, WaitsForAStartPlusALagAndJoins) {
  StepProgram p = one_stage(0);
  StepTask early = task(TaskKind::dp_collective, 1, Stream::dp);
  early.after = {{0, 0, true, 0.25}};
  StepTask join = task(TaskKind::join, 0);
  join.after = {{0, 1}};
  p.stages[0].tasks = {task(TaskKind::pass, 1), early, join, task(TaskKind::optimizer, 0.5)};
  const ProgramRun r = evaluate_program(p);
  EXPECT_DOUBLE_EQ(r.times[0][1].start_s, 0.25);
  EXPECT_DOUBLE_EQ(r.times[0][2].start_s, 1.25);
  EXPECT_DOUBLE_EQ(r.step_time_s, 1.75);
  ASSERT_EQ(r.timelines[0].size(), 3U);
  EXPECT_EQ(r.timelines[0][1].activity, Activity::dp);
  EXPECT_DOUBLE_EQ(r.timelines[0][1].end_s - r.timelines[0][1].start_s, 0.25);
}

TEST(ProgramEvaluator, RefusesACycle) {
  StepProgram p = one_stage(0);
  StepTask a = task(TaskKind::dp_collective, 1, Stream::dp);
  a.after = {{0, 1}};
  StepTask b = task(TaskKind::dp_collective, 1, Stream::network);
  b.after = {{0, 0}};
  p.stages[0].tasks = {a, b};
  EXPECT_THROW(evaluate_program(p), std::logic_error);
}

models::scenario::Scenario example(const std::string& name) {
  return models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/" + name + ".yaml", kShipped);
}

// Two stages of 1F1B, two micro-batches, blocking sends of t seconds: stage 0
// runs F0 F1 B0 B1, stage 1 F0 B0 F1 B1 (Megatron-LM's order); the step is
// 2f + t (fill) + f + b + t ... as worked out below.
TEST(StepProgram, TwoStagesOfOneFOneBAsWorkedOutByHand) {
  auto s = example("llama3-8b-h100-64-pp4");
  s.parallelism.pp = 2;
  s.parallelism.dp = 8;
  s.parallelism.global_batch = 2 * s.parallelism.micro_batch * s.parallelism.dp;
  s.overlap.dp = false;
  s.overlap.pp = false;
  StageCosts c;
  c.layer = {1, 2};
  c.pp_transfer.time_s = 0.1;
  c.optimizer_s = 0.5;
  const StepProgram p = build_step_program(s, c, 0);
  ASSERT_EQ(p.m, 2);
  const double f = 16;  // 16 layers a stage
  const double b = 32;
  const double t = 0.1;
  // Stage 1: F0 at f + t, B0 right after, its send, F1 (input arrived long ago), B1, send.
  // Stage 0: F0, send, F1, send, then B0 once stage 1's B0 is in, B1 likewise.
  const double s1_b1_end = (f + t) + f + b + t + f + b;
  const double step = s1_b1_end + t + b + 0.5;
  EXPECT_NEAR(evaluate_program(p).step_time_s, step, 1e-9);
}

// Where no traffic is played as flows between rank groups, the step engine
// plays what the evaluator plays: the same step, but for a node's own flows
// sharing its NICs (a let-go pipeline send beside a data-parallel ring), which
// the evaluator does not model (0.17 % with interleaving and overlap.pp here).
// ZB-H1's weight-gradient passes too.
TEST(StepProgram, TheStepEngineAgreesWithTheEvaluatorWithoutContention) {
  for (const auto& [v, overlap_pp, zero, schedule] :
       {std::tuple{1, false, 1, "1f1b"}, std::tuple{2, true, 1, "interleaved"},
        std::tuple{4, false, 3, "interleaved"}, std::tuple{1, false, 1, "zb-h1"},
        std::tuple{1, true, 3, "zb-h1"}, std::tuple{1, false, 1, "dualpipe"},
        std::tuple{1, true, 1, "dualpipe"}}) {
    auto text = fmt::format(
        "cluster: {{preset: llama3-like, gpus: 64}}\n"
        "model: {{preset: llama3-8b, seq_length: 4096}}\n"
        "parallelism: {{tp: 8, sp: true, pp: 4, virtual_stages: {}, zero: {}, micro_batch: 1, "
        "global_batch: 32, schedule: {}}}\n"
        "overlap: {{dp: true, pp: {}}}\n",
        v, zero, schedule, overlap_pp);
    const auto s = models::scenario::load_scenario_text(text, "engine.yaml", kShipped);
    const double engine = testing::run_in_child(s, testing::options(), testing::h100()).step_time_s;
    const double eval = evaluate_program(build_step_program(s, testing::h100())).step_time_s;
    EXPECT_NEAR(eval / engine, 1, 5e-3) << text << engine << " s against " << eval << " s";
  }
}

// The check a report makes: the gap between the two, and a note past 1 %.
TEST(StepProgram, TheClosedFormsCheckSaysWhenItIsApart) {
  const auto s = example("llama3-8b-h100-64-pp4");
  const double est = estimate(s, testing::h100(), Detail::summary).step_time_s;
  const ClosedFormCheck agreed = check_closed_form(s, testing::h100(), est);
  EXPECT_NEAR(agreed.gap, agreed.program_step_s / est - 1, 1e-15);
  EXPECT_TRUE(agreed.note.empty());
  const ClosedFormCheck apart = check_closed_form(s, testing::h100(), 0.9 * est);
  EXPECT_NEAR(apart.gap, agreed.program_step_s / (0.9 * est) - 1, 1e-12);
  EXPECT_NE(apart.note.find("+11."), std::string::npos) << apart.note;
}

// The shipped examples: the closed form and the evaluator within 1 %.
TEST(StepProgram, ExamplesAgreeWithTheClosedForm) {
  for (const char* name :
       {"llama3-8b-h100-64-pp4", "llama3-70b-h100-2048", "megatron-175b-selene-64",
        "gpt3-175b-megascale-12288", "llama3-405b-h100-16384-campaign", "mixtral-8x7b-h100-64",
        "megascale-moe-352b-h800-240"}) {
    const auto s = example(name);
    const DeviceProfile& profile = testing::shipped_profile(s.cluster.gpu.profile);
    const double est = estimate(s, profile, Detail::summary).step_time_s;
    const double eval = evaluate_program(build_step_program(s, profile)).step_time_s;
    EXPECT_NEAR(eval / est, 1, 0.01) << name;
  }
}

// A random layout of a shipped model on a shipped cluster, as YAML: valid or
// not (the loader's checks say).
// `long_1f1b`: one chunk a stage and more passes (2 pp m) than the closed form
// plays one by one (kSweptPasses): its 1F1B formula and exposed_dp.
std::string random_layout(std::mt19937_64& rng, bool long_1f1b = false) {
  const auto pick = [&rng](std::initializer_list<int> v) {
    return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
  };
  const auto flip = [&rng] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  const char* models[] = {"llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b-megatron"};
  const char* clusters[] = {"llama3-like", "selene-like"};
  const std::string model = models[pick({0, 1, 2, 3})];
  const int tp = pick({1, 2, 4, 8});
  const int cp = pick({1, 1, 2});
  const int pp = pick({1, 2, 4, 8});
  const int dp = pick({1, 2, 4, 8, 16});
  const int v = pp > 1 && !long_1f1b ? pick({1, 1, 2, 4}) : 1;
  const int mb = pick({1, 2});
  const int beyond = static_cast<int>(kSweptPasses) / (2 * pp * pp) + 1;  // rounds of pp
  const int m = pp * (long_1f1b ? beyond * pick({1, 2}) : pick({1, 2, 4, 8}));
  // Mixtral's layers mixed with dense ones, half the time (first dense layers,
  // every other one).
  std::string stack;
  if (model == "mixtral-8x7b" && flip()) {
    stack = fmt::format(", moe: {{first_dense_layers: {}, every: {}}}", pick({0, 1, 3, 5}),
                        pick({1, 2, 3}));
  }
  // Multi-token prediction modules on the last stage, a time in three.
  const int mtp = pick({0, 0, 1, 2, 0, 0});
  if (mtp > 0) stack += fmt::format(", mtp_depth: {}", mtp);
  std::string text = fmt::format(
      "cluster: {{preset: {}, gpus: {}}}\n"
      "model: {{preset: {}, seq_length: 4096{}}}\n"
      "parallelism: {{tp: {}, sp: {}, cp: {}, pp: {}, virtual_stages: {}, zero: {}, "
      "micro_batch: {}, global_batch: {}",
      clusters[pick({0, 1})], tp * cp * pp * dp, model, stack, tp, tp > 1 ? "true" : "false", cp,
      pp, v, pick({0, 1, 2, 3}), mb, mb * m * dp);
  if (model == "mixtral-8x7b") {
    const int ep = pick({1, 2, 4, 8});
    text += fmt::format(", ep: {}", ep);
    // Megatron-Core's combined 1F1B, a time in three where it runs.
    if (ep > 1 && (pp > 1) == (v > 1) && !long_1f1b && pick({0, 0, 1}) == 1) {
      text += ", schedule: combined-1f1b";
    }
  }
  // Zero-bubble ZB-H1, a time in three where a stage runs one chunk and the
  // closed form sweeps the schedule.
  if (pp > 1 && v == 1 && !long_1f1b) {
    const int schedule = pick({0, 0, 1, 2});
    if (schedule == 1) text += ", schedule: zb-h1";
    if (schedule == 2) text += ", schedule: dualpipe";  // refused unless m is even and >= 2 pp
  }
  // Recomputation: none, selective, full, or full for the first 1-3 layers of
  // each chunk (parallelism.recompute_layers).
  const int recompute = pick({0, 0, 1, 2, 3, 3});
  if (recompute == 1) text += ", recompute: selective";
  if (recompute == 2) text += ", recompute: full";
  if (recompute == 3)
    text += fmt::format(", recompute: full, recompute_layers: {}", pick({1, 2, 3}));
  // Activation offload where Megatron-LM runs it (one stage, no recomputation),
  // half the time: a few layers (hidden behind the compute) or most of them.
  if (pp == 1 && recompute == 0 && flip()) {
    text += fmt::format(", offload_layers: {}", pick({1, 4, 16, 30}));
  }
  text += fmt::format("}}\noverlap: {{dp: {}, pp: {}, tp: {}, cp: {}, ep: {}}}\n", flip(), flip(),
                      flip(), flip(), flip());
  return text;
}

// The closed form's schedule rules against the step program's: thousands of
// random valid layouts (pipeline depth, chunks, micro-batches, ZeRO, overlap,
// tp, cp, ep, MoE, dense layers among MoE ones, MTP modules, recomputation whole
// or partial, activation offload), each estimated and evaluated
// from the same priced costs.
TEST(StepProgram, ClosedFormAgreesWithTheEvaluatorOnRandomLayouts) {
  std::mt19937_64 rng(37);
  int valid = 0;
  // [0]: one stage; [1]: 1F1B; [2]: interleaved; [3]: interleaved, overlap.dp;
  // [4]: one chunk a stage, more passes than the closed form plays one by one;
  // [5]: zero-bubble ZB-H1; [6]: DualPipe; [7]: combined 1F1B
  std::array<std::vector<double>, 8> errors;
  std::array<std::string, 8> worst;
  int long_valid = 0;
  for (int tries = 0; (valid < 2000 || long_valid < 100) && tries < 40000; ++tries) {
    const bool long_1f1b = valid >= 2000;
    const std::string text = random_layout(rng, long_1f1b);
    models::scenario::Scenario s;
    try {
      s = models::scenario::load_scenario_text(text, "random.yaml", kShipped);
    } catch (const std::exception&) {
      continue;
    }
    (long_1f1b ? long_valid : valid) += 1;
    const DeviceProfile& profile = testing::shipped_profile(s.cluster.gpu.profile);
    const double est = estimate(s, profile, Detail::summary).step_time_s;
    const double eval = evaluate_program(build_step_program(s, profile)).step_time_s;
    const double error = std::abs(eval / est - 1);
    using models::scenario::Schedule;
    const std::size_t kind = long_1f1b                                           ? 4
                             : s.parallelism.schedule == Schedule::zb_h1         ? 5
                             : s.parallelism.schedule == Schedule::dualpipe      ? 6
                             : s.parallelism.schedule == Schedule::combined_1f1b ? 7
                             : s.parallelism.pp == 1                             ? 0
                             : s.parallelism.virtual_stages == 1                 ? 1
                             : s.overlap.dp                                      ? 3
                                                                                 : 2;
    if (errors[kind].empty() ||
        error > *std::max_element(errors[kind].begin(), errors[kind].end())) {
      worst[kind] = text + fmt::format("estimate {} s, evaluator {} s", est, eval);
    }
    errors[kind].push_back(error);
  }
  ASSERT_EQ(valid, 2000);
  ASSERT_EQ(long_valid, 100);
  const auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  const char* kinds[] = {
      "one stage", "1F1B",     "interleaved",  "interleaved, overlap.dp", "1F1B, long (formula)",
      "zb-h1",     "dualpipe", "combined-1f1b"};
  for (std::size_t k = 0; k < errors.size(); ++k) {
    std::printf("%-24s %4zu layouts: median %.3f %%, p95 %.3f %%, worst %.3f %%, %zu past 1 %%\n",
                kinds[k], errors[k].size(), 100 * quantile(errors[k], 0.5),
                100 * quantile(errors[k], 0.95), 100 * quantile(errors[k], 1),
                static_cast<std::size_t>(std::count_if(errors[k].begin(), errors[k].end(),
                                                       [](double e) { return e > 0.01; })));
    if (std::getenv("MYRIAD_SHOW_WORST")) std::printf("%s\n", worst[k].c_str());
  }
  // Every class: the closed form is the program's account, within 1 % everywhere.
  // Measured 2026-12-05: 0.000 % in the first four classes (the closed form plays
  // their passes one by one with each stage's data-parallel stream beside them,
  // pipeline_makespan and pipeline_with_dp); worst 0.318 % for the long 1F1B
  // schedules since recomputation, whole or partial, joined the draws (2026-12-06;
  // 0.051 % before, 0.084 % before MTP modules), whose formula (and exposed_dp
  // for the step's two ends) it keeps; 0.040 % once activation offload joined the
  // draws (2026-12-06: other layouts drawn, offload's one-stage layouts 0.000 %).
  for (std::size_t k = 0; k < errors.size(); ++k) {
    EXPECT_LT(quantile(errors[k], 1), 0.01) << kinds[k] << "\n" << worst[k];
  }
}

}  // namespace
}  // namespace myriad::sim
