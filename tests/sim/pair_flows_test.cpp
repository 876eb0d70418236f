// An F&B pass (DualPipe's, combined 1F1B's) as both engines read it: its phases
// (sim/analytic/pair_passes.hpp), which all-to-alls the step engine's lowering
// puts in each, and the step engine playing them as flows beside the phases'
// compute, agreeing with the priced pass where nothing contends.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/pair_passes.hpp"
#include "sim/step/step_lowering.hpp"
#include "tests/sim/mixtral_ep8.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::scenario::Schedule;

PassTimes pass(double attention, double experts, double dispatch, double combine) {
  PassTimes t;
  t.forward = attention + experts + dispatch + combine;  // every all-to-all exposed
  t.backward = 2 * (attention + experts) + dispatch + combine;
  t.a2a_forward = t.a2a_exposed_forward = dispatch + combine;
  t.a2a_backward = t.a2a_exposed_backward = dispatch + combine;
  t.inner_forward = experts;
  t.inner_backward = 2 * experts;
  t.a2a_first_forward = dispatch;
  t.a2a_first_backward = combine;  // the combine's mirror opens the backward
  return t;
}

// Expectation: DualPipe's pass is one phase, all the compute beside all four
// all-to-alls; combined 1F1B's is four, in its guide's issue order (F.attention
// beside B.combine, B.experts beside F.dispatch, F.experts beside B.dispatch,
// B.attention beside F.combine); each phase the longer of its compute, slowed by
// the share, and its all-to-alls; the pass their sum.
TEST(PairPasses, DualPipeIsOnePhaseCombinedFourEachOfOneAllToAll) {
  const PassTimes f = pass(0.004, 0.002, 0.003, 0.0035);
  const PassTimes b = f;
  const PairPhases dual = pair_phases(Schedule::dualpipe, f, b);
  ASSERT_EQ(dual.count, 1);
  EXPECT_DOUBLE_EQ(dual.phase[0].compute, 0.006 + 0.012);
  EXPECT_DOUBLE_EQ(dual.phase[0].a2a, 2 * 0.0065);
  EXPECT_EQ(dual.phase[0].parts, 15);
  EXPECT_DOUBLE_EQ(fb_time(f, b, 0.25), 0.018 + 0.25 * 0.013);

  const PairPhases combined = pair_phases(Schedule::combined_1f1b, f, b);
  ASSERT_EQ(combined.count, 4);
  const struct {
    double compute, a2a;
    PairA2a part;
  } expected[] = {{0.004, 0.0035, PairA2a::backward_first},
                  {0.004, 0.003, PairA2a::forward_first},
                  {0.002, 0.003, PairA2a::backward_rest},
                  {0.008, 0.0035, PairA2a::forward_rest}};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    const PairPhase& ph = combined.phase[static_cast<std::size_t>(i)];
    EXPECT_NEAR(ph.compute, expected[i].compute, 1e-15) << "phase " << i;
    EXPECT_NEAR(ph.a2a, expected[i].a2a, 1e-15) << "phase " << i;
    EXPECT_EQ(ph.parts, static_cast<int>(expected[i].part)) << "phase " << i;
    EXPECT_TRUE(ph.runs(expected[i].part));
    sum += std::max(ph.compute + 0.25 * ph.a2a, ph.a2a);
  }
  // 0.004875 + 0.00475 + 0.003 + 0.008875
  EXPECT_NEAR(sum, 0.0215, 1e-15);
  EXPECT_NEAR(combined_fb_time(f, b, 0.25), sum, 1e-15);
  EXPECT_NEAR(pair_time(Schedule::combined_1f1b, f, b, 0.25), sum, 1e-15);
}

// Expectation: with expert groups across nodes, the lowering lists a layer's
// all-to-alls for the F&B passes, the dispatch opening the forward and the
// combine's mirror the backward, each played by the NVLink and the flows kinds.
TEST(PairFlows, TheLoweringPutsEachAllToAllInItsPhase) {
  const auto s = testing::mixtral_ep8("combined-1f1b");
  ASSERT_GT(models::group_span(models::GroupKind::ep, s).nodes, 1);
  const StepLowering p = lower_step(s, testing::shipped_profile("H100"), {}, false);
  ASSERT_TRUE(p.pair_flows);
  ASSERT_EQ(p.pair_a2a.size(), 4U);  // no recomputation: two forward, two backward
  EXPECT_EQ(p.pair_a2a[0].comm.collective.name, "ep.dispatch");
  EXPECT_EQ(p.pair_a2a[0].part, PairA2a::forward_first);
  EXPECT_EQ(p.pair_a2a[1].comm.collective.name, "ep.combine");
  EXPECT_EQ(p.pair_a2a[1].part, PairA2a::forward_rest);
  EXPECT_EQ(p.pair_a2a[2].part, PairA2a::backward_first);
  EXPECT_EQ(p.pair_a2a[3].part, PairA2a::backward_rest);
  for (const auto& a2a : p.pair_a2a) {
    EXPECT_EQ(p.kinds(a2a.kinds), "expert.nvlink+expert.flows") << a2a.comm.collective.name;
  }
  // The phases' all-to-alls are those the analytic engine prices.
  double forward = 0;
  for (const auto& a2a : p.pair_a2a) {
    if (a2a.part == PairA2a::forward_first || a2a.part == PairA2a::forward_rest) {
      forward += a2a.comm.cost.time_s;
    }
  }
  EXPECT_NEAR(forward, p.program.costs.layer.a2a_forward, 1e-12 * forward);
}

// Expectation: the step engine plays every F&B pass's all-to-alls as flows, so
// the rank groups' NICs carry what the interleaved schedule's passes send one
// by one (the same layers, micro-batches, pipeline and data-parallel traffic);
// and where nothing contends the step is the priced one, within 2 %.
TEST(PairFlows, CombinedSendsWhatInterleavedSendsAndTheEnginesAgree) {
  const auto paired = testing::mixtral_ep8("combined-1f1b");
  const auto alone = testing::mixtral_ep8("interleaved");
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const testing::ChildResult a = testing::run_in_child(paired, testing::options(), h100);
  const testing::ChildResult b = testing::run_in_child(alone, testing::options(), h100);
  ASSERT_GT(a.step_time_s, 0);
  ASSERT_GT(b.step_time_s, 0);
  EXPECT_NEAR(a.nic_bytes_up / b.nic_bytes_up, 1, 1e-9)
      << a.nic_bytes_up << " bytes against " << b.nic_bytes_up;
  const double priced = estimate(paired, h100).step_time_s;
  EXPECT_NEAR(a.step_time_s / priced, 1, 0.02) << a.step_time_s << " s against " << priced;
}

// Expectation: DualPipe's F&B passes likewise, one phase each.
TEST(PairFlows, DualPipeEnginesAgree) {
  const auto s = testing::mixtral_ep8("dualpipe", 1);
  const DeviceProfile& h100 = testing::shipped_profile("H100");
  const testing::ChildResult r = testing::run_in_child(s, testing::options(), h100);
  ASSERT_GT(r.step_time_s, 0);
  const double priced = estimate(s, h100).step_time_s;
  EXPECT_NEAR(r.step_time_s / priced, 1, 0.02) << r.step_time_s << " s against " << priced;
}

}  // namespace
}  // namespace myriad::sim
