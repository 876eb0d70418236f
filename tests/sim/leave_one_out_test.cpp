// Fitting the profile's assumed parameters to validation suites, and leaving one
// suite out to see how the fit predicts it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/leave_one_out.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::a100;
using testing::kShipped;

// A suite whose "published" times the A100 profile gives at another sustained clock.
Suite synthetic(double clock) {
  DeviceProfile truth = a100();
  truth.sustained_clock = clock;
  Suite suite;
  suite.name = "synthetic";
  suite.metric = "iteration_time_s";
  for (const int gpus : {8, 16, 64}) {
    SuiteCase c;
    c.name = std::to_string(gpus);
    c.published_metric = "iteration_time_s";
    c.scenario = models::scenario::load_scenario_text(
        "cluster: {preset: selene-like, gpus: " + std::to_string(gpus) +
            "}\nmodel: {preset: llama3-8b, seq_length: 4096}\n"
            "parallelism: {tp: 8, sp: true, zero: 1, global_batch: 64}\n",
        "synthetic.yaml", kShipped);
    c.published_value = estimate(c.scenario, truth).step_time_s;
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

// Expectation: rows made with a sustained clock of 0.85 are fitted back to it
// (the other parameters barely move the rows of this one model), with a near-zero error.
TEST(LeaveOneOut, FitRecoversTheParameterRowsWereMadeWith) {
  const Suite suite = synthetic(0.85);
  const ParameterFit fit = fit_parameters({&suite}, a100());
  EXPECT_NEAR(fit.values[0], 0.85, 0.01);
  EXPECT_LT(fit.mean_abs_rel_error, 0.005);
}

// Expectation: on the shipped suites, every suite left out is predicted by the
// others' fit within one and a half times its own bound (5 %), and the fit on
// all suites is no worse than the shipped profile's values it starts from.
TEST(LeaveOneOut, EveryShippedSuiteIsPredictedByTheOthers) {
#ifdef MYRIAD_SANITIZE
  // Thousands of estimates of code the other tests run under the sanitizers too:
  // 568 s there (2026-12-06), the longest test of CI's sanitizer phase by ten
  // times. The standard build runs it.
  GTEST_SKIP() << "the standard build runs the fit; under sanitizers it takes ten minutes";
#endif
  std::vector<Suite> suites;
  // The A100 profile is fitted on the tables measured on A100s; the MoE suites ran on
  // H800s, whose profile's fitted parameter is their own.
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(MYRIAD_SCENARIO_DIR) + "/validation")) {
    if (e.path().extension() != ".yaml") continue;
    Suite suite = load_suite(e.path().string(), kShipped);
    const bool a100_rows = std::all_of(
        suite.cases.begin(), suite.cases.end(),
        [](const SuiteCase& c) { return c.scenario.cluster.gpu.profile == "A100-80GB"; });
    if (a100_rows) suites.push_back(std::move(suite));
  }
  ASSERT_GE(suites.size(), 4U);
  const auto held = leave_one_suite_out(suites, a100());
  double shipped_rows = 0;
  double shipped_sum = 0;
  for (std::size_t i = 0; i < held.size(); ++i) {
    EXPECT_LT(held[i].mean, 1.5 * suites[i].bound_mean) << held[i].suite;
    shipped_sum += held[i].shipped_mean * static_cast<double>(suites[i].cases.size());
    shipped_rows += static_cast<double>(suites[i].cases.size());
  }
  std::vector<const Suite*> all;
  for (const auto& s : suites) all.push_back(&s);
  EXPECT_LE(fit_parameters(all, a100()).mean_abs_rel_error, shipped_sum / shipped_rows + 1e-12);
}

// Expectation: across profiles (issue 38: the Hopper suite held out too), the
// assumptions every profile makes alike fitted on an A100 table and the H800 MoE
// suite predict the Megatron-Bridge H100 suite within 7 % mean (measured
// 2026-12-05: 3.5 % with all six other suites, as `myriad validate --leave-one-out`
// prints), and each suite left out gets one value per shared parameter, within its
// range.
TEST(LeaveOneOut, TheHopperSuiteIsPredictedAcrossProfiles) {
  std::vector<Suite> suites;
  for (const char* name : {"megatron-bridge-h100", "korthikanti2022-table5", "megascale-moe"}) {
    suites.push_back(
        load_suite(std::string(MYRIAD_SCENARIO_DIR) + "/validation/" + name + ".yaml", kShipped));
  }
  std::vector<const Suite*> all;
  for (const auto& s : suites) all.push_back(&s);
  const ProfileLookup shipped = [](const models::scenario::Scenario& s) -> const DeviceProfile& {
    return testing::shipped_profile(s.cluster.gpu.profile);
  };
  const auto held = leave_one_suite_out_across_profiles(all, shipped);
  ASSERT_EQ(held.size(), 3U);
  EXPECT_EQ(held[0].suite, "megatron-bridge-h100");
  EXPECT_LT(held[0].mean, 0.07);
  for (const auto& h : held) {
    ASSERT_EQ(h.fit.values.size(), shared_parameters().size());
    for (std::size_t k = 0; k < h.fit.values.size(); ++k) {
      EXPECT_GE(h.fit.values[k], shared_parameters()[k].lo) << h.suite;
      EXPECT_LE(h.fit.values[k], shared_parameters()[k].hi) << h.suite;
    }
    EXPECT_GT(h.shipped_mean, 0);
  }
}

}  // namespace
}  // namespace myriad::sim
