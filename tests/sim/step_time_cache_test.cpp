// The step times a campaign runs at, state by state: the analytic engine's,
// scaled by the step engine's ratio where it played the state, or the nearest
// state it played.
#include "sim/campaign/step_time_cache.hpp"

#include <gtest/gtest.h>

#include <string>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim::campaign {
namespace {

// GPT-3 175B on 64 nodes of 8 A100: eight data-parallel replicas.
models::scenario::Scenario job() {
  return models::scenario::load_scenario_text(R"(
cluster: {preset: selene-like, gpus: 512}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
)",
                                              "step_time_cache_test.yaml",
                                              models::scenario::LoadOptions{{MYRIAD_SCENARIO_DIR}});
}

const DeviceProfile& a100() {
  static const DeviceProfile p = load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json");
  return p;
}

TEST(StepTimeCache, ShrunkStatesKeepTheGlobalBatch) {
  const auto s = job();
  StepTimeCache cache(s, a100());
  ASSERT_EQ(cache.job_nodes(), 64);
  EXPECT_EQ(cache.min_nodes(), 8);
  EXPECT_EQ(cache.dp_on(64), 8);
  // 63 nodes hold 7 replicas, but 7 does not divide 64 micro-batches: 4 does.
  EXPECT_EQ(cache.dp_on(63), 4);
  EXPECT_EQ(cache.dp_on(16), 2);
  EXPECT_EQ(cache.dp_on(7), 0);
  EXPECT_EQ(cache.step_time_s(7), 0);
  const auto shrunk = cache.at_dp(4);
  EXPECT_EQ(shrunk.parallelism.dp, 4);
  EXPECT_EQ(shrunk.cluster.gpus, 256);
  EXPECT_DOUBLE_EQ(cache.step_time_s(40), estimate(shrunk, a100()).step_time_s);
}

TEST(StepTimeCache, EachStateTakesTheNearestPlayedRatio) {
  const auto s = job();
  // Played: the job (dp 8) at 1.1 and dp 2 at 1.3; dp 4 is nearer 8 than 2 on
  // a log scale only in a tie, which goes to the larger; dp 1 takes dp 2's.
  StepTimeCache cache(s, a100(), 1.0, {{8, 1.1}, {2, 1.3}});
  EXPECT_DOUBLE_EQ(cache.scale_at(8), 1.1);
  EXPECT_DOUBLE_EQ(cache.scale_at(2), 1.3);
  EXPECT_DOUBLE_EQ(cache.scale_at(1), 1.3);
  EXPECT_DOUBLE_EQ(cache.scale_at(4), 1.1);
  EXPECT_DOUBLE_EQ(cache.step_time_s(64), 1.1 * estimate(cache.at_dp(8), a100()).step_time_s);
  EXPECT_DOUBLE_EQ(cache.step_time_s(8), 1.3 * estimate(cache.at_dp(1), a100()).step_time_s);
  // Without played states, one scale for all.
  StepTimeCache plain(s, a100(), 0.9);
  EXPECT_DOUBLE_EQ(plain.scale_at(1), 0.9);
  EXPECT_DOUBLE_EQ(plain.step_time_s(16), 0.9 * estimate(plain.at_dp(2), a100()).step_time_s);
}

}  // namespace
}  // namespace myriad::sim::campaign
