// The rounds a schedule's steady state repeats (models::find_period) and the
// sweeps that shift them instead of playing them (sim/analytic/pipeline_makespan):
// the round found against the graph node by node, and every sweep against the
// same sweep playing every round.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "sim/analytic/pipeline_makespan.hpp"

namespace myriad::sim {
namespace {

using models::scenario::Schedule;

struct Case {
  Schedule schedule;
  int pp, v, m;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {Schedule::interleaved, 8, 6, 32},    {Schedule::interleaved, 4, 2, 64},
      {Schedule::interleaved, 2, 3, 40},    {Schedule::one_f_one_b, 4, 1, 64},
      {Schedule::one_f_one_b, 8, 1, 100},   {Schedule::one_f_one_b, 1, 1, 20},
      {Schedule::zb_h1, 4, 1, 64},          {Schedule::dualpipe, 4, 1, 40},
      {Schedule::dualpipe, 8, 2, 64},       {Schedule::combined_1f1b, 4, 2, 64},
      {Schedule::combined_1f1b, 2, 12, 64}, {Schedule::combined_1f1b, 1, 1, 20}};
  return all;
}

// Expectation: from periodic_begin to periodic_end, node i + period is node i's
// pass a round later; `live` is, at every round's boundary, how far back the
// outputs the round reads were made; earliest_input is what its name says.
TEST(ScheduleRounds, TheRoundRepeatsNodeForNode) {
  for (const auto& [schedule, pp, v, m] : cases()) {
    const auto g = models::schedule_graph(schedule, pp, v, m);
    const std::size_t n = g.nodes.size();
    SCOPED_TRACE(testing::Message()
                 << static_cast<int>(schedule) << " " << pp << " " << v << " " << m);
    ASSERT_EQ(g.earliest_input.size(), n + 1);
    std::int32_t first = static_cast<std::int32_t>(n);
    for (std::size_t i = n; i-- > 0;) {
      if (g.nodes[i].input >= 0) first = std::min(first, g.nodes[i].input);
      if (!g.second_input.empty() && g.second_input[i] >= 0)
        first = std::min(first, g.second_input[i]);
      ASSERT_EQ(g.earliest_input[i], first) << i;
    }
    if (pp == 1) continue;  // one stage: nothing waits for an input
    // Long enough for three rounds: the steady state repeats.
    ASSERT_GT(g.period, 0U);
    ASSERT_GE(g.periodic_end - g.periodic_begin, 2 * g.period);
    const std::size_t p = g.period;
    for (std::size_t i = g.periodic_begin; i + p < g.periodic_end; ++i) {
      const auto& a = g.nodes[i];
      const auto& b = g.nodes[i + p];
      ASSERT_EQ(a.stage, b.stage) << i;
      ASSERT_EQ(a.slot, b.slot) << i;
      ASSERT_EQ(g.role[i], g.role[i + p]) << i;
      ASSERT_EQ(a.input < 0 ? -1 : a.input + static_cast<std::int32_t>(p), b.input) << i;
    }
    for (std::size_t r = g.periodic_begin + p; r + p <= g.periodic_end; r += p) {
      std::set<std::int32_t> back;
      for (std::size_t i = r; i < r + p; ++i) {
        for (const std::int32_t in :
             {g.nodes[i].input, g.second_input.empty() ? -1 : g.second_input[i]}) {
          if (in >= 0 && static_cast<std::size_t>(in) < r) {
            back.insert(static_cast<std::int32_t>(r - static_cast<std::size_t>(in)));
          }
        }
      }
      EXPECT_EQ(std::vector<std::int32_t>(back.begin(), back.end()), g.live) << r;
    }
  }
  // The interleaved schedule's round: pp micro-batches through all v chunks on
  // every stage, forward and backward.
  EXPECT_EQ(models::schedule_graph(8, 6, 32).period, 2U * 6 * 8 * 8);
}

std::vector<double> random_durations(const models::ScheduleGraph& g, std::mt19937_64& rng,
                                     bool alike) {
  std::uniform_real_distribution<double> pass(0.5, 2.0);
  std::vector<double> d(static_cast<std::size_t>(g.slots()));
  const double one = pass(rng);
  for (auto& x : d) x = alike ? one : pass(rng);
  return d;
}

// Expectation: shifting the rounds that repeat gives what playing every round
// gives, to rounding (1e-12 of the step), for every schedule, alike or unlike
// passes, blocking or let-go transfers, with data-parallel streams beside the
// passes or none.
TEST(ScheduleRounds, ShiftingTheRoundsIsPlayingThem) {
  std::mt19937_64 rng(7);
  for (const auto& [schedule, pp, v, m] : cases()) {
    const auto g = models::schedule_graph(schedule, pp, v, m);
    models::ScheduleGraph every = g;
    every.period = 0;
    for (const bool alike : {true, false}) {
      const auto d = random_durations(g, rng, alike);
      for (const PipelineTransfer t :
           {PipelineTransfer{0.05, true}, PipelineTransfer{0.3, false}}) {
        SCOPED_TRACE(testing::Message()
                     << static_cast<int>(schedule) << " " << pp << " " << v << " " << m << " alike "
                     << alike << " let go " << t.let_go);
        const double played = pipeline_makespan(every, d, t);
        EXPECT_NEAR(pipeline_makespan(g, d, t), played, 1e-12 * played);
        DpStream dp;
        dp.buckets = 2;
        dp.first_gather = {0.1, 1};
        dp.first_rest = {0.1, 3};
        dp.chunk_gather = {0.1, 2};
        dp.early_reduce = {0.1, 4};
        dp.last_reduce = {0.1, 1};
        for (const double share : {0.0, 0.3}) {
          const DpPlay fast = pipeline_with_dp(g, d, t, dp, share);
          const DpPlay slow = pipeline_with_dp(every, d, t, dp, share);
          EXPECT_NEAR(fast.end, slow.end, 1e-12 * slow.end) << share;
          EXPECT_NEAR(fast.waited, slow.waited, 1e-12 * slow.end) << share;
          EXPECT_NEAR(fast.slowed, slow.slowed, 1e-12 * slow.end) << share;
        }
      }
    }
  }
}

}  // namespace
}  // namespace myriad::sim
