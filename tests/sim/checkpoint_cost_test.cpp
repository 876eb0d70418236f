// What a checkpoint blocks, and what follows from it: the interval (Young's
// rule on the blocking cost) and the bytes the campaign writes to storage,
// each against a value computed by hand from the model and the layout.
#include <gtest/gtest.h>

#include <cmath>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/resolved_policy.hpp"

namespace myriad::sim::campaign {
namespace {

const models::scenario::LoadOptions kScenarios{{MYRIAD_SCENARIO_DIR}};

const DeviceProfile& h100() {
  static const DeviceProfile p = load_profile(std::string(MYRIAD_PROFILE_DIR) + "/H100.json");
  return p;
}

const std::string kLlama3 =
    std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml";

// Llama 3 405B with 128 layers (the example's), tp 8, pp 16, dp 128, ZeRO-1.
// One layer: q and o projections 2 h^2, k and v 2 h kv (kv = 8 heads x 128),
// the SwiGLU MLP 3 h f, two norms 2 h. The last stage holds 8 layers, the
// final norm and the untied LM head (V h); tensor parallelism splits it by 8.
constexpr double kH = 16384;
constexpr double kF = 53248;
constexpr double kV = 128256;
constexpr double kKv = 8 * 128;
constexpr double kLayer = 2 * kH * kH + 2 * kH * kKv + 3 * kH * kF + 2 * kH;
constexpr double kLastStagePerGpu = (8 * kLayer + kV * kH + kH) / 8;
// A GPU holds its stage's bf16 weights (2 B a parameter, the same on all 128
// data-parallel replicas) and 1/128 of the Adam state (12 B a parameter).
constexpr double kHeldBytes = kLastStagePerGpu * (2 + 12.0 / 128);
// Balanced (Megatron-LM's fully parallel save): each replica copies 1/128 of
// the weights and its optimizer shard.
constexpr double kBalancedBytes = kLastStagePerGpu * 14 / 128;

TEST(CheckpointCost, TheStallIsTheCoordinationAndTheBusiestGpusCopy) {
  const auto s = models::scenario::load_scenario(kLlama3, kScenarios);
  const ResolvedPolicy r = resolve_policy(s, s.policies[0]);
  // 377 MB per GPU at 25 GB/s is 15 ms; eight of them into one node's host
  // memory at 614 GB/s take 4.9 ms, so the GPU's link sets the copy.
  EXPECT_NEAR(r.snapshot_bytes_per_gpu, kBalancedBytes, 5e-3 * kBalancedBytes);
  EXPECT_NEAR(r.snapshot_s, kBalancedBytes / 25e9, 5e-3 * kBalancedBytes / 25e9);
  // The default coordination (planning, metadata, barrier) is 2 s.
  const double stall = 2 + kBalancedBytes / 25e9;
  EXPECT_NEAR(r.stall_s, stall, 1e-3);

  // Every GPU copying all it holds: 7.2 GB at 25 GB/s, 0.29 s.
  models::scenario::PolicySpec held = s.policies[0];
  held.checkpoint_snapshot = models::scenario::CheckpointSnapshot::held;
  const ResolvedPolicy h = resolve_policy(s, held);
  EXPECT_NEAR(h.snapshot_bytes_per_gpu, kHeldBytes, 5e-3 * kHeldBytes);
  EXPECT_NEAR(h.stall_s, 2 + kHeldBytes / 25e9, 2e-3);

  // A node's host memory shared by its 8 GPUs: at 100 GB/s it takes 12.5 GB/s
  // a GPU, under the 25 GB/s link.
  held.host_memory_bw_Bps = 100e9;
  EXPECT_NEAR(resolve_policy(s, held).snapshot_s, 8 * kHeldBytes / 100e9, 2e-3);
}

TEST(CheckpointCost, TheIntervalAndTheBytesWrittenFollowFromTheStall) {
  const auto s = models::scenario::load_scenario(kLlama3, kScenarios);
  const ResolvedPolicy r = resolve_policy(s, s.policies[0]);
  // The job's mean time between failures: 3.09 h (Llama 3's 419 interruptions
  // in 54 days on 2,048 nodes).
  const double m = r.job_mtbf_s;
  ASSERT_NEAR(m / 3600, 3.09, 0.01);
  // Young: sqrt(2 x 2.015 s x 11,130 s) = 212 s, minutes rather than the
  // 17.7 s a stall of 14 ms would give.
  const double stall = 2 + kBalancedBytes / 25e9;
  const double interval = std::sqrt(2 * stall * m);
  EXPECT_NEAR(r.interval_s, interval, 1e-3 * interval);
  EXPECT_GT(r.interval_s, 200);
  EXPECT_FALSE(r.raised);  // one upload of 5.8 TB at 2 TB/s is 2.9 s

  // 30 days: a checkpoint every `interval` of training, the count restarting
  // after each failure; every one uploaded, each the whole checkpoint.
  CampaignOptions o;
  o.days = 30;
  o.seeds = 1;
  const CampaignReport report = run_campaign(s, h100(), o);
  const RunResult& run = report.policies[0].runs[0];
  const double trained_s = run.seconds_by_cause[static_cast<std::size_t>(Cause::useful)] +
                           run.seconds_by_cause[static_cast<std::size_t>(Cause::lost_work)];
  EXPECT_LE(run.checkpoints, trained_s / interval + 1);
  EXPECT_GE(run.checkpoints, trained_s / interval - run.restarts - 1);
  // A failure abandons the upload in flight (2.9 s of every 212 s).
  EXPECT_GE(run.uploads, run.checkpoints - run.interruptions - 1);
  const double bytes = report.policies[0].policy.checkpoint_bytes;
  EXPECT_DOUBLE_EQ(run.storage_bytes, run.uploads * bytes);
  // About 11,000 checkpoints of 5.8 TB: 65 PB, 25 GB/s sustained (not 134,000,
  // 775 PB and 299 GB/s).
  EXPECT_LT(run.checkpoints, 12500);
  EXPECT_LT(run.storage_bytes / run.wall_s, 30e9);
}

TEST(CheckpointCost, WarningsNameCheckpointsUnderAStepAndWhatBusyStorageWrites) {
  static const models::scenario::PolicySpec spec;  // young rule, storage only
  CampaignReport report;
  report.healthy_step_s = 10;
  PolicyReport p;
  p.name = "often";
  p.policy.spec = &spec;
  p.policy.job_mtbf_s = 86400;
  p.policy.interval_s = 8;  // under one 10 s step
  p.policy.stall_s = 1;
  p.policy.write_Bps = 1e9;
  p.runs.resize(4);
  for (auto& run : p.runs) {
    run.reached_target = true;
    run.wall_s = 86400;
    run.storage_bytes = 0.6 * 86400 * 1e9;  // 51.8 TB a day: busy 60 % at 1 GB/s
  }
  report.policies.push_back(p);
  const auto w = campaign_warnings(report);
  ASSERT_EQ(w.size(), 2U);
  EXPECT_NE(w[0].find("a checkpoint every 8 s of training, under one step of 10 s"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[1].find("busy 60 % of the time at 1 GB/s, writing 51.8 TB in 1 days (0.6 GB/s "
                      "sustained)"),
            std::string::npos)
      << w[1];
}

}  // namespace
}  // namespace myriad::sim::campaign
