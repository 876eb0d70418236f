// Combined 1F1B's delayed weight gradients (parallelism.delay_wgrad_compute,
// Megatron-Core's --delay-wgrad-compute): the backward's expert all-to-alls beside
// the weight gradients in a backward alone (layer_exposure.hpp) and in an F&B
// pass (pair_passes.hpp), worked by hand; the two rules agree; the scenario key,
// its check, what `plan` does with it, and both engines on a layout.
#include <gtest/gtest.h>

#include <string>

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/layer_exposure.hpp"
#include "sim/analytic/pair_passes.hpp"
#include "tests/sim/mixtral_ep8.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::GroupKind;
using models::scenario::Schedule;

// A layer's backward for the hand-worked cases (seconds x 1e-3): the attention's
// input gradients 4 and weight gradients 4, the experts' 2 and 2, the combine's
// mirror 3.5 and the dispatch's 3.
PassTimes backward_pass() {
  PassTimes b;
  b.backward = 0.004 + 0.004 + 0.002 + 0.002 + 0.0035 + 0.003;  // every all-to-all exposed
  b.weight = 0.006;
  b.inner_backward = 0.004;
  b.inner_weight = 0.002;
  b.a2a_backward = b.a2a_exposed_backward = 0.0065;
  b.a2a_first_backward = 0.0035;
  return b;
}

PassTimes forward_pass() {  // F.attention 4, F.experts 2, dispatch 3, combine 3.5
  PassTimes f;
  f.forward = 0.004 + 0.002 + 0.003 + 0.0035;
  f.inner_forward = 0.002;
  f.a2a_forward = f.a2a_exposed_forward = 0.0065;
  f.a2a_first_forward = 0.003;
  return f;
}

// Expectation, by hand, share 0.25: the experts' weight gradients (2) start
// beside F.dispatch (3) as far as it leaves room after B.experts' input
// gradients (2) and the 0.75 its kernels take: 0.25 of them; the other 1.75
// open the third phase. The attention's (4) find no room beside F.combine
// (3.5 < 4 + 0.875) and open the next layer's first phase:
//   P1  4 (the layer before's) + F.attention 4 beside B.combine 3.5: 8.875
//   P2  2 + 0.25 beside F.dispatch 3:                                  3
//   P3  1.75 + F.experts 2 beside B.dispatch 3:                        4.5
//   P4  B.attention 4 beside F.combine 3.5:                            4.875
// 21.25 ms, where the weight gradients kept in their phases give 21.5.
TEST(DelayWgrad, AnFandBPassStartsEachWeightGradientWhereItsPhaseLeavesRoom) {
  const PassTimes f = forward_pass();
  const PassTimes b = backward_pass();
  const PairPhases p = pair_phases(Schedule::combined_1f1b, f, b, 0.25, true);
  ASSERT_EQ(p.count, 4);
  const double compute[] = {0.008, 0.00225, 0.00375, 0.004};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(p.phase[static_cast<std::size_t>(i)].compute, compute[i], 1e-15) << i;
  }
  EXPECT_NEAR(p.time(0.25), 0.02125, 1e-15);
  EXPECT_NEAR(pair_time(Schedule::combined_1f1b, f, b, 0.25, false), 0.0215, 1e-15);
  // Without all-to-alls to hide, nothing moves.
  PassTimes quiet = b;
  quiet.a2a_backward = quiet.a2a_exposed_backward = quiet.a2a_first_backward = 0;
  quiet.backward -= 0.0065;
  PassTimes idle = f;
  idle.a2a_forward = idle.a2a_exposed_forward = idle.a2a_first_forward = 0;
  idle.forward -= 0.0065;
  EXPECT_NEAR(pair_time(Schedule::combined_1f1b, idle, quiet, 0.25, true),
              pair_time(Schedule::combined_1f1b, idle, quiet, 0.25, false), 1e-15);
}

// Expectation, by hand: a backward alone hides the dispatch's mirror (3) behind
// the experts' weight gradients (2: all of them, 2 < 3 x 0.75) and the combine's
// mirror (3.5) behind the attention's (4: 3.5 x 0.75 = 2.625 of it), so 4.625 of
// its 6.5 ms of all-to-alls leave the exposed time; the F&B pass's rule with no
// forward gives the same backward.
TEST(DelayWgrad, ABackwardAloneHidesItsAllToAllsBehindItsWeightGradients) {
  PhaseTime t;
  t.compute = t.gemm = 0.012;
  t.weight = 0.006;
  t.ep_inner = 0.004;
  t.ep_inner_weight = 0.002;
  t.ep_first = 0.0035;
  t.comm[GroupKind::ep] = 0.0065;
  models::scenario::OverlapSpec none;
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const PhaseTime kept = exposed(t, LayerOverlap(none, h100, false, false), 0.25);
  EXPECT_DOUBLE_EQ(kept.comm[GroupKind::ep], 0.0065);
  const PhaseTime delayed = exposed(t, LayerOverlap(none, h100, false, true), 0.25);
  EXPECT_NEAR(delayed.comm[GroupKind::ep], 0.0065 - 0.002 - 0.002625, 1e-15);
  // A forward (no weight gradients) hides nothing.
  PhaseTime forward = t;
  forward.weight = forward.ep_inner_weight = 0;
  EXPECT_DOUBLE_EQ(
      exposed(forward, LayerOverlap(none, h100, false, true), 0.25).comm[GroupKind::ep], 0.0065);

  PassTimes b = backward_pass();
  b.backward -= 0.004625;
  b.a2a_exposed_backward -= 0.004625;
  EXPECT_NEAR(pair_time(Schedule::combined_1f1b, PassTimes{}, b, 0.25, true), b.backward, 1e-15);
}

models::scenario::Scenario mixtral(bool delay, const std::string& schedule = "combined-1f1b") {
  return testing::mixtral_ep8(schedule, 2,
                              std::string(", delay_wgrad_compute: ") + (delay ? "true" : "false"));
}

// Expectation: on a layout whose all-to-alls leave the node, delaying the weight
// gradients shortens the step, hides more of the exposed expert time, and the
// step engine plays the same step; the key needs combined 1F1B.
TEST(DelayWgrad, ShortensTheStepAndTheEnginesAgree) {
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const auto delayed = mixtral(true);
  const StepReport with = estimate(delayed, h100);
  const StepReport without = estimate(mixtral(false), h100);
  EXPECT_LT(with.step_time_s, without.step_time_s);
  const auto ep = [](const StepReport& r) {
    double t = 0;
    for (const auto& part : r.breakdown) t += part.name == "ep" ? part.seconds : 0;
    return t;
  };
  EXPECT_LT(ep(with), ep(without));
  const double engine = testing::run_in_child(delayed, testing::options(), h100).step_time_s;
  EXPECT_NEAR(engine / with.step_time_s, 1, 0.02) << engine << " s against " << with.step_time_s;
  try {
    (void)mixtral(true, "interleaved");
    ADD_FAILURE() << "delay_wgrad_compute without combined-1f1b was accepted";
  } catch (const models::scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.delay_wgrad_compute"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim
