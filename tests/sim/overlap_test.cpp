// Which communication hides behind compute, and how much: data-parallel overlap
// for any pipeline schedule, and tensor-, context- and expert-parallel overlap
// each under its own key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/overlap_share.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

double part(const StepReport& r, const std::string& name) {
  for (const auto& p : r.breakdown) {
    if (p.name == name) return p.seconds;
  }
  return 0;
}

double dp_traffic(const StepReport& r) {
  double t = 0;
  for (const auto& c : r.collectives) {
    if (c.group == "dp") t += c.cost.time_s * c.per_step;
  }
  return t;
}

// Llama 3 8B on 64 H100: tp 8 in the node, dp 8 (or 4) across; 4 sequences a
// micro-batch, so that a backward pass is longer than the gradients' reduction.
models::scenario::Scenario llama8b(int pp, int v, bool overlap_dp) {
  std::string text =
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: " +
      std::to_string(pp) + ", virtual_stages: " + std::to_string(v) +
      ", zero: 1, micro_batch: 4, global_batch: 256}\n";
  if (overlap_dp) text += "overlap: {dp: true}\n";
  return models::scenario::load_scenario_text(text, "overlap_test.yaml", kShipped);
}

// Expectation: without interleaving (pp 1, or plain 1F1B) Megatron-LM still
// reduces gradients bucket by bucket under the last backward and gathers
// parameters under the first forward, so overlap.dp hides most of the traffic;
// what stays exposed is at least the last gradient bucket and the first
// parameter bucket: (gather + reduce) / buckets.
TEST(DataParallelOverlap, HidesTrafficWithoutInterleaving) {
  for (int pp : {1, 2}) {
    const StepReport off = estimate(llama8b(pp, 1, false), h100());
    const StepReport on = estimate(llama8b(pp, 1, true), h100());
    const double traffic = dp_traffic(off);
    const auto s = llama8b(pp, 1, true);
    const double buckets = dp_buckets_per_chunk(models::plan_step(s));
    ASSERT_GT(traffic, 0);
    EXPECT_NEAR(part(off, "dp"), traffic, 1e-12) << "pp " << pp;
    EXPECT_LT(part(on, "dp"), 0.5 * traffic) << "pp " << pp;
    EXPECT_GE(part(on, "dp"), traffic / buckets * (1 - 1e-9)) << "pp " << pp;
    EXPECT_LT(on.step_time_s, off.step_time_s);
  }
}

// Expectation: buckets hold max(40M, 1M x dp) parameters (Megatron-LM's default):
// a chunk's share of the stage's parameters over that, rounded up.
TEST(DataParallelOverlap, BucketsAsMegatronSizesThem) {
  const auto s = llama8b(2, 1, true);
  const models::StepPlan plan = models::plan_step(s);
  EXPECT_EQ(dp_buckets_per_chunk(plan), std::ceil(plan.params_max / 40e6));
  auto wide = s;
  wide.parallelism.dp = 128;
  EXPECT_EQ(dp_buckets_per_chunk(models::plan_step(wide)), std::ceil(plan.params_max / 128e6));
}

// Expectation: interleaving leaves less exposed (the other chunks' traffic hides in
// the drain and fill), and never more than without overlap.
TEST(DataParallelOverlap, InterleavingHidesMore) {
  const StepReport plain = estimate(llama8b(2, 1, true), h100());
  const StepReport interleaved = estimate(llama8b(2, 4, true), h100());
  EXPECT_LT(part(interleaved, "dp"), part(plain, "dp"));
}

models::scenario::Scenario mixtral(const std::string& overlap) {
  return models::scenario::load_scenario_text(R"(
cluster: {preset: llama3-like, gpus: 64}
model: {preset: mixtral-8x7b, seq_length: 4096}
parallelism: {tp: 2, sp: true, ep: 8, zero: 1, micro_batch: 1, global_batch: 256}
overlap: )" + overlap + "\n",
                                              "overlap_test.yaml", kShipped);
}

// Expectation: overlap.tp hides tensor-parallel collectives only; expert
// all-to-alls hide under overlap.ep, and then share the GEMMs as cover with tp.
TEST(LayerOverlap, EachParallelismHasItsOwnKey) {
  const StepReport none = estimate(mixtral("{dp: true}"), h100());
  const StepReport tp = estimate(mixtral("{tp: true, dp: true}"), h100());
  const StepReport ep = estimate(mixtral("{ep: true, dp: true}"), h100());
  const StepReport both = estimate(mixtral("{tp: true, ep: true, dp: true}"), h100());
  ASSERT_GT(part(none, "ep"), 0);
  ASSERT_GT(part(none, "tp"), 0);
  EXPECT_EQ(part(tp, "ep"), part(none, "ep"));
  EXPECT_LT(part(tp, "tp"), part(none, "tp"));
  EXPECT_EQ(part(ep, "tp"), part(none, "tp"));
  EXPECT_LT(part(ep, "ep"), part(none, "ep"));
  // Sharing the same GEMMs, both hidden at once leave at least as much exposed as each alone.
  EXPECT_GE(part(both, "ep") + part(both, "tp"), part(ep, "ep") + part(tp, "tp") - 1e-12);
}

// Expectation: `check` warns about an overlap key only where it has no effect.
TEST(LayerOverlap, WarnsOnlyWhereAKeyHasNoEffect) {
  const auto warned = [](const models::scenario::Scenario& s, const std::string& key) {
    return std::any_of(s.warnings.begin(), s.warnings.end(),
                       [&](const auto& w) { return w.str().find(key) != std::string::npos; });
  };
  const auto moe = mixtral("{tp: true, ep: true, dp: true}");
  EXPECT_FALSE(warned(moe, "overlap.ep"));
  EXPECT_FALSE(warned(moe, "overlap.tp"));
  const auto dense = models::scenario::load_scenario_text(R"(
cluster: {preset: llama3-like, gpus: 64}
model: {preset: llama3-8b, seq_length: 4096}
parallelism: {tp: 8, sp: true, zero: 1, micro_batch: 1, global_batch: 64}
overlap: {tp: true, cp: true, ep: true}
)",
                                                          "overlap_test.yaml", kShipped);
  EXPECT_TRUE(warned(dense, "overlap.cp"));
  EXPECT_TRUE(warned(dense, "overlap.ep"));
  EXPECT_FALSE(warned(dense, "overlap.tp"));
}

// Expectation: communication beside compute takes the SMs its kernels hold: NCCL
// one a channel (the H100's 32 of 132), on a GPU with twice the SMs half the
// share; tensor-parallel collectives overlapped by userbuffers 2 SMs an
// all-gather and 24 a reduce-scatter, the rest NCCL's.
TEST(OverlapShare, TheSmsTheKernelsHold) {
  const DeviceProfile p = h100();
  EXPECT_DOUBLE_EQ(p.nccl_channels, 32);
  EXPECT_DOUBLE_EQ(p.overlap_compute_share(), 32.0 / 132);
  const auto share = [&](models::GroupKind g, models::CollectiveKind k) {
    return overlap_share(models::Collective{"c", k, g, 1e6}, p);
  };
  using models::CollectiveKind;
  using models::GroupKind;
  EXPECT_DOUBLE_EQ(share(GroupKind::tp, CollectiveKind::all_gather), 2.0 / 132);
  EXPECT_DOUBLE_EQ(share(GroupKind::tp, CollectiveKind::reduce_scatter), 24.0 / 132);
  EXPECT_DOUBLE_EQ(share(GroupKind::tp, CollectiveKind::all_reduce), 32.0 / 132);
  EXPECT_DOUBLE_EQ(share(GroupKind::dp, CollectiveKind::reduce_scatter), 32.0 / 132);
  EXPECT_DOUBLE_EQ(share(GroupKind::ep, CollectiveKind::all_to_all), 32.0 / 132);
  DeviceProfile wide = p;
  wide.sms = 264;
  EXPECT_DOUBLE_EQ(wide.overlap_compute_share(), p.overlap_compute_share() / 2);
  DeviceProfile none = p;
  none.nccl_channels = 0;
  EXPECT_EQ(none.overlap_compute_share(), 0);
}

// Expectation: hiding tensor-parallel traffic chunk by chunk costs the GEMMs the
// SMs its kernels hold. Without sequence parallelism the layers' all-reduces are
// NCCL's: the exposed tp time (what the step waits for, and the compute the
// kernels beside it slow) grows with the channels; with it, userbuffers' gathers
// and reduce-scatters take what they take whatever NCCL's channels.
TEST(OverlapShare, HidingTensorParallelTrafficCostsItsSms) {
  const auto layout = [](const std::string& sp) {
    return models::scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 8}\n"
        "model: {preset: llama3-8b, seq_length: 8192}\n"
        "parallelism: {tp: 8, sp: " +
            sp +
            ", micro_batch: 1, global_batch: 8}\n"
            "overlap: {tp: true}\n",
        "overlap_test.yaml", kShipped);
  };
  DeviceProfile idle = h100();
  idle.nccl_channels = 0;
  const auto all_reduce = layout("false");
  EXPECT_GT(part(estimate(all_reduce, h100()), "tp"), part(estimate(all_reduce, idle), "tp"));
  const auto userbuffers = layout("true");
  EXPECT_DOUBLE_EQ(part(estimate(userbuffers, h100()), "tp"),
                   part(estimate(userbuffers, idle), "tp"));
}

}  // namespace
}  // namespace myriad::sim
