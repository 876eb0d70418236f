// Cost models and the analytic engine, with the closed form beside the result.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/analytic/validation_suite.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/compute_cost.hpp"
#include "tests/models/published_layouts.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::a100;
using testing::kShipped;

models::scenario::Scenario load(const std::string& text) {
  return models::scenario::load_scenario_text(text, "analytic_test.yaml", kShipped);
}

TEST(DeviceProfile, EveryShippedProfileLoadsAndSaysWhereItsNumbersComeFrom) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(MYRIAD_PROFILE_DIR)) {
    const DeviceProfile p = load_profile(e.path().string());
    EXPECT_FALSE(p.parameters.empty());
    for (const auto& [key, param] : p.parameters) EXPECT_FALSE(param.origin.empty()) << key;
    ++n;
  }
  EXPECT_GE(n, 4);
}

TEST(DeviceProfile, ProblemsAreListedWithTheirKeys) {
  const auto path = std::filesystem::temp_directory_path() / "myriad_bad_profile.json";
  std::ofstream(path) << R"({"device": "X", "kind": "test", "colour": 1,
    "parameters": {"gemm_efficiency": {"value": 2, "origin": "guess"}}})";
  try {
    load_profile(path.string());
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("colour: unknown key"), std::string::npos) << m;
    EXPECT_NE(m.find("gemm_efficiency: expected a value in [0.0001, 1], found 2"),
              std::string::npos)
        << m;
    EXPECT_NE(
        m.find("origin: expected datasheet, measured, published, derived, fitted or assumption"),
        std::string::npos);
    EXPECT_NE(m.find("parameters.sms: missing"), std::string::npos);
  }
  std::filesystem::remove(path);
}

// Expectation: a GEMM in pieces costs its pieces, each priced by its own shape: fc1
// of Llama 3.1 405B at tp 8, cp 2 (4,096 tokens) in 8 ring-exchange pieces of 512
// rows fills 2 waves of 132 SMs with 208 tiles of 128 x 256 (79 % of them busy) where
// the whole GEMM's 1,664 tiles fill 13 (97 %), so the pieces take longer; a GEMM that
// fills its waves either way costs the same in pieces, less their launches.
TEST(ComputeCost, AGemmInPiecesPaysEachPiecesWaves) {
  const DeviceProfile& p = testing::h100();
  models::Op fc1 = models::make_gemm("fc1", 4096, 13312, 16384, 1, 1, true);
  const double whole = compute_cost(fc1, p).time_s;
  fc1.pieces = 8;
  const double pieces = compute_cost(fc1, p).time_s;
  models::Op piece = models::make_gemm("fc1", 512, 13312, 16384, 1, 1, true);
  EXPECT_DOUBLE_EQ(pieces, 8 * compute_cost(piece, p).time_s);
  EXPECT_GT(pieces, 1.15 * whole);
  models::Op even = models::make_gemm("even", 132 * 128 * 4, 256, 8192, 1, 2, false);
  const double even_whole = compute_cost(even, p).time_s;
  even.pieces = 4;
  EXPECT_NEAR(compute_cost(even, p).time_s, even_whole + 3 * p.kernel_overhead_s,
              1e-3 * even_whole);
}

// Expectation: gemm_latency_s is paid once by every GEMM call and by nothing else,
// so it decides a tiny GEMM's time and hardly moves a large one's.
TEST(ComputeCost, GemmLatencyIsPaidByGemmsOnly) {
  DeviceProfile p = a100();
  const models::Op tiny = models::make_gemm("tiny", 64, 64, 64, 1, 2, false);
  const models::Op big = models::make_gemm("big", 8192, 8192, 8192, 1, 2, false);
  const models::Op copy = models::make_elementwise("copy", 1e6);
  const double tiny_before = compute_cost(tiny, p).time_s;
  const double big_before = compute_cost(big, p).time_s;
  const double copy_before = compute_cost(copy, p).time_s;
  p.gemm_latency_s = 10e-6;
  EXPECT_DOUBLE_EQ(compute_cost(tiny, p).time_s, tiny_before + 10e-6);
  EXPECT_DOUBLE_EQ(compute_cost(big, p).time_s, big_before + 10e-6);
  EXPECT_GT(compute_cost(tiny, p).time_s, 2 * tiny_before);
  EXPECT_LT(compute_cost(big, p).time_s, 1.01 * big_before);
  EXPECT_DOUBLE_EQ(compute_cost(copy, p).time_s, copy_before);
}

// Expectation: a kernel an averaged layer runs at a share (op.share: the windowed
// attention of a stack that alternates windows) pays its fixed costs at that share,
// its work as its flops and bytes say.
TEST(ComputeCost, AKernelAtAShareOfTheLayersPaysItsFixedCostsAtThatShare) {
  DeviceProfile p = a100();
  models::Op half = models::make_gemm("half", 4096, 4096, 4096, 1, 2, false);
  half.flops /= 2;
  half.bytes /= 2;
  half.share = 0.5;
  const double before = compute_cost(half, p).time_s;
  p.kernel_overhead_s += 1e-3;
  p.gemm_latency_s += 2e-3;
  EXPECT_NEAR(compute_cost(half, p).time_s - before, 1.5e-3, 1e-12);
}

// Expectation: a large square GEMM runs at the profile's efficiency and sustained
// clock; a memory-bound op moves its bytes at the sustained bandwidth.
TEST(ComputeCost, RooflineAtBothEnds) {
  const DeviceProfile& p = a100();
  const models::Op big = models::make_gemm("big", 16384, 16384, 16384, 1, 2, false);
  const double k_factor = 16384 / (16384 + p.gemm_k_half);
  const double expected =
      big.flops / (p.bf16_flops * p.gemm_efficiency * k_factor * p.sustained_clock) +
      p.kernel_overhead_s;
  EXPECT_NEAR(compute_cost(big, p).time_s, expected, expected * 0.02);  // wave: >= 98%
  const models::Op copy = models::make_elementwise("copy", 1e9);
  EXPECT_DOUBLE_EQ(compute_cost(copy, p).time_s,
                   1e9 / (p.hbm_bw_Bps * p.memory_efficiency) + p.kernel_overhead_s);
  EXPECT_TRUE(compute_cost(copy, p).memory_bound);
}

TEST(ComputeCost, SmallGemmsRunLessEfficiently) {
  const DeviceProfile& p = a100();
  const auto eff = [&](double m, double n, double k) {
    return compute_cost(models::make_gemm("g", m, n, k, 1, 2, false), p).efficiency;
  };
  EXPECT_GT(eff(8192, 8192, 8192), eff(2048, 1536, 12288));
  EXPECT_GT(eff(2048, 1536, 12288), eff(256, 256, 256));
}

models::scenario::ClusterSpec selene(int gpus) {
  return load("cluster: {preset: selene-like, gpus: " + std::to_string(gpus) +
              "}\nmodel: {preset: megatron-22b}\nparallelism: {tp: 8, global_batch: " +
              std::to_string(gpus) + "}\n")
      .cluster;
}

// Expectation: inside a node, t = 2(n-1) alpha + 2(n-1)/n * S / busbw(S), with busbw
// the measured nccl-tests value at 1 GiB (228 GB/s for 8 A100).
TEST(CommCost, IntraNodeAllReduceIsAlphaBetaAtMeasuredBusBandwidth) {
  const auto cluster = selene(8);
  const models::Collective ar{"ar", models::CollectiveKind::all_reduce, models::GroupKind::tp,
                              1073741824.0};
  const CommCost c = collective_cost(ar, {8, 8, 1}, cluster, a100());
  EXPECT_DOUBLE_EQ(c.busbw_Bps, 228.0e9);
  EXPECT_DOUBLE_EQ(c.time_s, 14 * cluster.nvlink_latency_s + 2.0 * 7 / 8 * 1073741824.0 / 228e9);
  EXPECT_EQ(c.algorithm, models::CollectiveAlgorithm::ring);
}

TEST(CommCost, InterNodeBandwidthIsTheNicsTheGroupCanUse) {
  const auto cluster = selene(256);
  const models::Collective rs{"rs", models::CollectiveKind::reduce_scatter, models::GroupKind::dp,
                              8e9};
  const double nic = cluster.nic_bw_Bps * a100().nic_efficiency;
  EXPECT_DOUBLE_EQ(collective_cost(rs, {32, 1, 32}, cluster, a100()).busbw_Bps, nic);
  EXPECT_DOUBLE_EQ(collective_cost(rs, {32, 2, 16}, cluster, a100()).busbw_Bps, 2 * nic);
  // Small all-reduces over many nodes pick the tree, large ones the ring.
  models::Collective ar = rs;
  ar.kind = models::CollectiveKind::all_reduce;
  ar.bytes = 1e4;
  EXPECT_EQ(collective_cost(ar, {32, 1, 32}, cluster, a100()).algorithm,
            models::CollectiveAlgorithm::tree);
}

TEST(CommCost, OversubscriptionSlowsAllToAllAcrossThePod) {
  auto cluster = load(R"(
cluster: {preset: llama3-like, gpus: 16384}
model: {preset: mixtral-8x7b}
parallelism: {tp: 1, ep: 8, global_batch: 16384}
)")
                     .cluster;
  const models::Collective a2a{"a2a", models::CollectiveKind::all_to_all, models::GroupKind::ep,
                               1e9};
  const double inside_pod = collective_cost(a2a, {3072, 8, 384}, cluster, a100()).bandwidth_s;
  const double across = collective_cost(a2a, {16384, 8, 2048}, cluster, a100()).bandwidth_s;
  EXPECT_EQ(joining_tier(cluster, 384), 1);   // a pod: racks under the cluster switches
  EXPECT_EQ(joining_tier(cluster, 2048), 2);  // pods under the aggregation switches
  EXPECT_GT(across, 5 * inside_pod);          // 1:7 above the pod
}

TEST(Estimate, BreakdownSumsToTheStepAndRepeatsExactly) {
  const auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/gpt3-175b-megascale-12288.yaml", kShipped);
  const StepReport a = estimate(s, a100());
  const StepReport b = estimate(s, a100());
  double sum = 0;
  for (const auto& part : a.breakdown) sum += part.seconds;
  EXPECT_DOUBLE_EQ(sum, a.step_time_s);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_NEAR(a.mfu, a.model_flops / (a.step_time_s * 12288 * 312e12), 1e-12);
  EXPECT_NEAR(a.tokens_per_s, 6144 * 2048 / a.step_time_s, 1e-6);
  EXPECT_TRUE(a.fits);
}

// Expectation: one function derives a step time's rates, by hand: GPT-3 175B at
// MegaScale's 6,144 x 2,048 tokens a step on 12,288 A100 (312 TFLOP/s bf16) in 10 s
// is 1.258 M tokens/s, 300 B tokens in 2.76 days; an fp8 job gets its MFU against
// the fp8 peak too. The estimate's own rates are that function's at its step time.
TEST(StepRates, OneFunctionDerivesMfuTokensAndDays) {
  auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/gpt3-175b-megascale-12288.yaml", kShipped);
  const StepRates r = step_rates(s, 3e19, 4e19, 10.0);
  EXPECT_DOUBLE_EQ(r.mfu, 3e19 / (10.0 * 12288 * 312e12));
  EXPECT_DOUBLE_EQ(r.hfu, 4e19 / (10.0 * 12288 * 312e12));
  EXPECT_EQ(r.mfu_fp8, 0);
  EXPECT_DOUBLE_EQ(r.tokens_per_s, 6144.0 * 2048 / 10);
  EXPECT_NEAR(r.days, 300e9 / (6144.0 * 2048 / 10) / 86400, 1e-12);
  // The GPU-hours those days hold the cluster, and their cost at its price (none: NaN).
  EXPECT_DOUBLE_EQ(r.gpu_hours, r.days * 24 * 12288);
  EXPECT_TRUE(std::isnan(r.cost));
  s.cluster.price_per_gpu_hour = 2.5;
  EXPECT_DOUBLE_EQ(step_rates(s, 3e19, 4e19, 10.0).cost, 2.5 * r.gpu_hours);
  EXPECT_DOUBLE_EQ(gpu_cost(2.5, 100), 250);
  EXPECT_TRUE(std::isnan(gpu_cost(0, 100)));
  const StepReport e = estimate(s, a100());
  const StepRates again = step_rates(s, e.model_flops, e.hardware_flops, e.step_time_s);
  EXPECT_EQ(e.mfu, again.mfu);
  EXPECT_EQ(e.tokens_per_s, again.tokens_per_s);
  EXPECT_EQ(e.days_to_target, again.days);
  s.training.precision = models::scenario::Precision::fp8;
  s.cluster.gpu.fp8_flops = 624e12;
  EXPECT_DOUBLE_EQ(step_rates(s, 3e19, 4e19, 10.0).mfu_fp8, 3e19 / (10.0 * 12288 * 624e12));
}

TEST(Estimate, BubbleIsPMinusOneOverVStages) {
  auto s = load(R"(
cluster: {preset: selene-like, gpus: 64}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, sp: true, pp: 8, global_batch: 64, recompute: selective}
)");
  const auto bubble = [&] {
    for (const auto& part : estimate(s, a100()).breakdown) {
      if (part.name == "bubble") return part.seconds;
    }
    return 0.0;
  };
  const double one_f_one_b = bubble();
  s.parallelism.virtual_stages = 3;
  s.parallelism.schedule = models::scenario::Schedule::interleaved;
  // A third with alike chunks (PipelineMakespan.AlikeChunksTakeTheTextbookBubble);
  // a little more here: the last stage's last chunk holds the head (4 layers and
  // the head, where 1F1B spreads the head over 12 layers), and that chunk paces
  // the schedule's rounds (0.363, 2026-12-05), and each chunk adds a transfer.
  EXPECT_GT(bubble() / one_f_one_b, 1.0 / 3);
  EXPECT_LT(bubble() / one_f_one_b, 0.38);
}

TEST(Estimate, ScenarioThatDoesNotFitSaysWhatDominates) {
  const auto s = load(R"(
cluster: {preset: selene-like, gpus: 8}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, global_batch: 8}
)");
  const StepReport r = estimate(s, a100());
  EXPECT_FALSE(r.fits);
  EXPECT_GT(r.memory.total(), 175e9 * 18 / 8);  // 175B parameters x 18 B over 8 GPUs
  EXPECT_EQ(r.memory.dominant(), "optimizer states");
}

TEST(Estimate, RunsOnEveryExampleWithItsGpusProfile) {
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(MYRIAD_SCENARIO_DIR) + "/examples")) {
    SCOPED_TRACE(e.path().string());
    const auto s = models::scenario::load_scenario(e.path().string(), kShipped);
    const auto p =
        load_profile(std::string(MYRIAD_PROFILE_DIR) + "/" + s.cluster.gpu.preset + ".json");
    const StepReport r = estimate(s, p);
    EXPECT_GT(r.step_time_s, 0);
    EXPECT_GT(r.mfu, 0.05);
    EXPECT_LT(r.mfu, 0.9);
  }
}

// Expectation: the changes that would make a layout fit each save memory, say what
// they need and what the step becomes: Llama 3.1 405B as Megatron-Bridge ran it,
// but with fp32 gradient buffers (Megatron-LM's default for bf16 parameters;
// the run reduced in bf16 and fits) and 2 model chunks a stage, not 8 (more
// layers in flight; with 8 the fp32 buffers fit now that fp8 GEMM inputs are
// kept in fp8: 75.5 of 76.9 GiB): fused attention, so selective recomputation
// saves nothing and is not offered; full recomputation fits and slows the step,
// as does recomputing only the first layer of each chunk, for less; ZeRO 2 or 3
// from the distributed optimizer; fine-grained offload of the two modules that
// fit it (all five would too, for more host memory and PCIe traffic, and the step
// hides every copy); a micro-batch of 2 may be halved.
TEST(FitRemedies, EachSavesMemoryAndSaysWhatItCosts) {
  auto s = models::scenario::load_scenario_text(myriad::testing::kLlama405bMegatronBridge,
                                                "fit.yaml", kShipped);
  EXPECT_TRUE(estimate(s, testing::h100()).fits);  // bf16 gradients, as it ran
  s.training.gradient_precision = models::scenario::WirePrecision::fp32;
  EXPECT_TRUE(estimate(s, testing::h100()).fits);
  s.parallelism.virtual_stages = 2;
  const StepReport r = estimate(s, testing::h100());
  ASSERT_FALSE(r.fits);
  const auto remedies = fit_remedies(s, testing::h100());
  std::vector<std::string> changes;
  for (const auto& m : remedies) {
    changes.push_back(m.key + "=" + m.value);
    EXPECT_LT(m.memory_needed, r.memory_needed()) << changes.back();
    EXPECT_GE(m.step_time_s, r.step_time_s) << changes.back();
  }
  // ZeRO-2 too, now that its reductions every micro-batch are priced: it saves
  // the fp32 gradients' shards, ZeRO-3 the parameters' as well.
  EXPECT_EQ(changes, (std::vector<std::string>{"parallelism.recompute=full",
                                               "parallelism.recompute_layers=1",
                                               "parallelism.offload_modules=[attn_proj,mlp_norm]",
                                               "parallelism.zero=2", "parallelism.zero=3"}));
  EXPECT_TRUE(remedies[2].fits());
  EXPECT_EQ(remedies[2].step_time_s, r.step_time_s);
  EXPECT_GT(remedies[3].memory_needed, remedies[4].memory_needed);
  EXPECT_TRUE(remedies[0].fits());
  EXPECT_TRUE(remedies[1].fits());
  EXPECT_EQ(remedies[1].with, "parallelism.recompute=full");
  EXPECT_LT(remedies[1].step_time_s, remedies[0].step_time_s);
  s.parallelism.micro_batch = 2;
  s.parallelism.global_batch = 1024;
  const auto halved = fit_remedies(s, testing::h100());
  EXPECT_EQ(halved.back().key, "parallelism.micro_batch");
  EXPECT_EQ(halved.back().value, "1");
}

// The published tables, held to their bounds (mean and max relative error of
// iteration time or MFU, as each suite file states).
class PublishedTable : public ::testing::TestWithParam<std::string> {};

TEST_P(PublishedTable, WithinItsBounds) {
  const ProfileLookup lookup = [](const models::scenario::Scenario& s) -> const DeviceProfile& {
    return testing::shipped_profile(s.cluster.gpu.profile);
  };
  const auto r = run_suite(std::string(MYRIAD_SCENARIO_DIR) + "/validation/" + GetParam() + ".yaml",
                           kShipped, lookup);
  for (const auto& row : r.rows) {
    EXPECT_LE(std::fabs(row.rel_error), r.bound_max)
        << row.name << ": published " << row.published << ", predicted " << row.predicted;
  }
  EXPECT_LE(r.mean_abs_rel_error, r.bound_mean);
  EXPECT_LE(r.bound_mean, 0.05);  // the targets of the analytic engine
  EXPECT_LE(r.bound_max, 0.10);
}

// Expectation (issue 38: the Hopper suite's MoE rows): Megatron-Bridge's Qwen3-235B-A22B
// run on 256 H100 that pads its experts and overlaps no all-to-all (25.09) is predicted
// within 10 %, and its DeepSeek-V3 run, written with its own pipeline layout
// ("Et|(tt|)*30mL"), within 10 %. The suite as a whole is out of its bounds, and says so:
// the Qwen3-30B-A3B runs took about 3 times the GPU time Myriad prices, the GPT-OSS 120B
// runs (16 experts of 2,880 a GPU, bf16) about 1.3 times, and the Qwen3-235B runs that
// overlap the all-to-alls by Megatron-Core's combined 1F1B with delayed weight gradients
// (25.11, 26.02) hid about half of what its documented mechanics allow, 15-25 % short
// (docs/validation.md#the-moe-rows);
// all are predicted short, never long.
TEST(PublishedMoeOnHopper, TheLargeMoeRowsHoldAndTheSmallOnesAreShown) {
  const ProfileLookup lookup = [](const models::scenario::Scenario& s) -> const DeviceProfile& {
    return testing::shipped_profile(s.cluster.gpu.profile);
  };
  const auto r =
      run_suite(std::string(MYRIAD_SCENARIO_DIR) + "/validation/megatron-bridge-h100-moe.yaml",
                kShipped, lookup);
  ASSERT_EQ(r.rows.size(), 9U);
  int held = 0;
  for (const auto& row : r.rows) {
    if (row.name.find("gpt-oss") != std::string::npos ||
        row.name.find("qwen3-30b") != std::string::npos) {
      EXPECT_LT(row.rel_error, -0.1) << row.name << ": predicted " << row.predicted;
    }
    if (row.name == "26.02 qwen3-235b-a22b 256 GPUs" ||
        row.name == "25.11 qwen3-235b-a22b 256 GPUs") {
      EXPECT_LT(row.rel_error, -0.15) << row.name << ": predicted " << row.predicted;
      EXPECT_GT(row.rel_error, -0.25) << row.name << ": predicted " << row.predicted;
    }
    if (row.name == "25.09 qwen3-235b-a22b 256 GPUs" || row.name == "25.09 deepseek-v3 1024 GPUs") {
      EXPECT_LE(std::fabs(row.rel_error), 0.10) << row.name << ": predicted " << row.predicted;
      ++held;
    }
  }
  EXPECT_EQ(held, 2);
  EXPECT_FALSE(r.within_bounds());
}

INSTANTIATE_TEST_SUITE_P(Published, PublishedTable,
                         ::testing::Values("korthikanti2022-table5", "megatron-sc21-table1",
                                           "megascale-table2", "megascale-table3", "megascale-moe",
                                           "megatron-bridge-h100"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace myriad::sim
