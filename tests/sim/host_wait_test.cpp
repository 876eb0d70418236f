// The GPU's waits for the host (sim/analytic/host_wait.hpp): the stretch after a
// host sync worked out by hand, the launches a layer's ops count, where
// Megatron-Core's dropless dispatcher syncs, and what both engines make of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/loader.hpp"
#include "models/transformer/layer_program.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/host_wait.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::kShipped;

TEST(HostWait, AStretchAfterASyncWorkedOutByHand) {
  EXPECT_DOUBLE_EQ(synced_stretch({}), 0);
  // A fast host: the first launch, then the GPU's whole time.
  const std::vector<Issued> fast = {{0.1, 2}, {0.1, 2}};
  EXPECT_DOUBLE_EQ(synced_stretch(fast), 0.1 + 4);
  // A slow host: every launch, then the last kernel.
  const std::vector<Issued> slow = {{3, 1}, {3, 1}};
  EXPECT_DOUBLE_EQ(synced_stretch(slow), 6 + 1);
  // Many small launches before a long kernel: their sum, then the kernel. The
  // same work in the other order overlaps: the long kernel runs while the host
  // issues the small ones.
  const std::vector<Issued> small_first = {{1, 0.5}, {1, 0.5}, {1, 5}};
  EXPECT_DOUBLE_EQ(synced_stretch(small_first), 3 + 5);
  const std::vector<Issued> long_first = {{1, 5}, {1, 0.5}, {1, 0.5}};
  EXPECT_DOUBLE_EQ(synced_stretch(long_first), 1 + 6);
  // Never below the longer of the two, never above their sum.
  for (const auto* items : {&fast, &slow, &small_first, &long_first}) {
    double host = 0;
    double gpu = 0;
    for (const Issued& i : *items) {
      host += i.host;
      gpu += i.gpu;
    }
    EXPECT_GE(synced_stretch(*items), std::max(host, gpu));
    EXPECT_LE(synced_stretch(*items), host + gpu);
  }
  EXPECT_DOUBLE_EQ(unsynced_wait(3, 2), 1);
  EXPECT_DOUBLE_EQ(unsynced_wait(1, 2), 0);
}

models::scenario::Scenario qwen3_30b(const std::string& moe = "",
                                     const std::string& training = "fp8_recipe: current") {
  return models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpu: H100, gpus: 16}\n"
      "model: {preset: qwen3-30b-a3b" +
          (moe.empty() ? "" : ", moe: {" + moe + "}") +
          "}\n"
          "parallelism: {tp: 1, pp: 2, virtual_stages: 12, ep: 8, etp: 1, global_batch: 512}\n"
          "overlap: {pp: true, dp: true, ep: true}\n"
          "training: {precision: fp8, " +
          training + "}\n",
      "host_wait_test.yaml", kShipped);
}

const models::Op& op_named(const models::Phase& p, std::string_view name, int nth = 0) {
  for (const auto& op : p.ops) {
    if (op.name == name && nth-- == 0) return op;
  }
  throw std::runtime_error("no op " + std::string(name));
}

// Expectation: a grouped GEMM is one launch per local expert (128 / ep 8 = 16),
// its fp8 cast four per expert under current scaling (zero the amax, reduce it,
// scale, cast) and one under delayed scaling; a dense GEMM one.
TEST(HostWait, LaunchesCountExpertsAndQuantizations) {
  const auto s = qwen3_30b();
  const auto lp = models::transformer_layer(s.model, models::shard_shape(s));
  EXPECT_DOUBLE_EQ(op_named(lp.forward, "expert.fc1").launches, 16);
  EXPECT_DOUBLE_EQ(op_named(lp.forward, "qkv").launches, 1);
  const auto& ops = lp.forward.ops;
  const auto fc1 = std::find_if(ops.begin(), ops.end(),
                                [](const models::Op& o) { return o.name == "expert.fc1"; });
  ASSERT_NE(fc1, ops.begin());
  EXPECT_EQ((fc1 - 1)->name, "fp8.cast");
  EXPECT_DOUBLE_EQ((fc1 - 1)->launches, 4 * 16);
  // Backward: a cast of the output gradient, then dgrad and wgrad per expert.
  EXPECT_DOUBLE_EQ(op_named(lp.backward, "expert.fc1", 0).launches, 16);
  EXPECT_DOUBLE_EQ(op_named(lp.backward, "expert.fc1", 1).launches, 16);
  const auto delayed = qwen3_30b("", "fp8_recipe: delayed");
  const auto dl = models::transformer_layer(delayed.model, models::shard_shape(delayed));
  const auto& dops = dl.forward.ops;
  const auto dfc1 = std::find_if(dops.begin(), dops.end(),
                                 [](const models::Op& o) { return o.name == "expert.fc1"; });
  EXPECT_DOUBLE_EQ((dfc1 - 1)->launches, 16);
}

// Expectation: dropless, the host waits before the dispatch, after the tokens'
// permutation; the dispatch is issued right after the sync, the collectives keep
// their places once the fp8 casts are added (the combine after the experts'
// second GEMM); padded to capacity nothing syncs.
TEST(HostWait, TheDroplessDispatcherSyncsBeforeTheDispatch) {
  const auto s = qwen3_30b();
  const auto lp = models::transformer_layer(s.model, models::shard_shape(s));
  const auto& f = lp.forward;
  ASSERT_GE(f.host_sync, 1);
  EXPECT_EQ(f.ops[static_cast<std::size_t>(f.host_sync) - 1].name, "permute");
  for (const auto& c : f.comms) {
    ASSERT_GE(c.after_ops, 1) << c.name;
    const auto& before = f.ops[static_cast<std::size_t>(c.after_ops) - 1];
    if (c.name == "ep.dispatch") {
      EXPECT_EQ(c.after_ops, f.host_sync);
    }
    if (c.name == "ep.combine") {
      EXPECT_EQ(before.name, "expert.fc2");
    }
  }
  EXPECT_EQ(lp.backward.host_sync, -1);
  const auto padded = qwen3_30b("capacity_factor: 1");
  EXPECT_EQ(models::transformer_layer(padded.model, models::shard_shape(padded)).forward.host_sync,
            -1);
}

double part(const StepReport& r, std::string_view name) {
  for (const auto& b : r.breakdown) {
    if (b.name == name) return b.seconds;
  }
  return -1;
}

// Expectation: without a launch time nothing waits and the step is the GPU's;
// with the profile's (13.5 us on H100), the dropless model waits (its 16 experts a
// GPU issue about 200 kernels a layer forward after each sync), exactly by the
// breakdown's host line; a host as slow as Grace's (37 us) waits longer.
TEST(HostWait, TheStepGrowsByTheHostLineAndWithTheLaunchTime) {
  const auto s = qwen3_30b();
  DeviceProfile none = testing::h100();
  none.host_launch_s = 0;
  const StepReport gpu = estimate(s, none);
  EXPECT_DOUBLE_EQ(part(gpu, "host"), 0);
  const StepReport h100 = estimate(s, testing::h100());
  EXPECT_GT(part(h100, "host"), 0.1 * h100.step_time_s);
  EXPECT_NEAR(h100.step_time_s - gpu.step_time_s, part(h100, "host"), 0.02 * part(h100, "host"));
  DeviceProfile grace = testing::h100();
  grace.host_launch_s = 37.1e-6;
  EXPECT_GT(estimate(s, grace).step_time_s, h100.step_time_s);
}

// Expectation: the same layout padded to capacity (no sync) waits less than
// dropless: the host runs ahead of the GPU through the layer.
TEST(HostWait, ASyncCostsMoreThanTheSameLaunchesWithout) {
  DeviceProfile slow = testing::h100();
  slow.host_launch_s = 20e-6;
  const double dropless = part(estimate(qwen3_30b(), slow), "host");
  const double padded = part(estimate(qwen3_30b("capacity_factor: 1"), slow), "host");
  EXPECT_GT(dropless, padded);
}

// Expectation: the step program's evaluator plays the host waits as the closed
// form counts them (both read PassTimes), to 1e-6.
TEST(HostWait, TheEvaluatorAgreesWithTheClosedForm) {
  const auto s = qwen3_30b();
  const StepReport r = estimate(s, testing::h100());
  const ProgramRun run = evaluate_program(build_step_program(s, testing::h100()));
  EXPECT_NEAR(run.step_time_s, r.step_time_s, 1e-6 * r.step_time_s);
}

}  // namespace
}  // namespace myriad::sim
