#include "models/plan/pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

namespace myriad::models {
namespace {

// Plays every stage's order against the pipeline's dependencies: a forward of
// (chunk, mb) on stage s needs the same forward on s-1 (or chunk-1 on the last
// stage); a backward needs the same backward on s+1 (or chunk+1 on the first
// stage), and the last chunk's backward on the last stage its own forward.
// Returns the number of rounds the pipeline takes when every task costs 1 and
// a stage runs at most one task a round, or -1 when the orders deadlock.
int play(int pp, int v, int m) {
  std::vector<std::vector<PipelineTask>> orders;
  for (int s = 0; s < pp; ++s) orders.push_back(pipeline_order(pp, v, m, s));
  std::set<std::tuple<bool, int, int, int>> done;  // forward?, stage, chunk, mb
  std::vector<std::size_t> next(pp, 0);
  const auto ready = [&](int s, const PipelineTask& t) {
    if (t.forward) {
      if (s > 0) return done.count({true, s - 1, t.chunk, t.micro_batch}) > 0;
      return t.chunk == 0 || done.count({true, pp - 1, t.chunk - 1, t.micro_batch}) > 0;
    }
    if (s < pp - 1) return done.count({false, s + 1, t.chunk, t.micro_batch}) > 0;
    if (t.chunk == v - 1) return done.count({true, s, t.chunk, t.micro_batch}) > 0;
    return done.count({false, 0, t.chunk + 1, t.micro_batch}) > 0;
  };
  int rounds = 0;
  for (;;) {
    std::vector<std::tuple<bool, int, int, int>> finished;
    for (int s = 0; s < pp; ++s) {
      if (next[s] < orders[s].size() && ready(s, orders[s][next[s]])) {
        const auto& t = orders[s][next[s]++];
        finished.emplace_back(t.forward, s, t.chunk, t.micro_batch);
      }
    }
    if (finished.empty()) break;
    done.insert(finished.begin(), finished.end());
    ++rounds;
  }
  for (int s = 0; s < pp; ++s) {
    if (next[s] != orders[s].size()) return -1;
  }
  return rounds;
}

TEST(PipelineSchedule, EveryTaskOnceForwardBeforeBackward) {
  for (int v : {1, 2, 3}) {
    for (int s = 0; s < 4; ++s) {
      const auto order = pipeline_order(4, v, 8, s);
      ASSERT_EQ(order.size(), 2u * 8 * v);
      std::map<std::pair<int, int>, int> seen;
      for (const auto& t : order) {
        auto& state = seen[{t.chunk, t.micro_batch}];
        EXPECT_EQ(state, t.forward ? 0 : 1) << "v " << v << " stage " << s;
        state = t.forward ? 1 : 2;
      }
      EXPECT_EQ(seen.size(), 8u * v);
    }
  }
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithPMinusStageMinusOneForwards) {
  const auto order = pipeline_order(4, 1, 8, 1);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(order[i].forward);
  EXPECT_TRUE(order[2].forward);
  EXPECT_FALSE(order[3].forward);
  EXPECT_EQ(order[3].micro_batch, 0);
}

// Expectation: with unit-time tasks and no communication, 1F1B takes 2(m + p - 1)
// rounds and the interleaved schedule 2(m v + p - 1): the bubble shrinks by v.
TEST(PipelineSchedule, PlaysWithoutDeadlockInTheExpectedTime) {
  EXPECT_EQ(play(4, 1, 8), 2 * (8 + 4 - 1));
  EXPECT_EQ(play(8, 1, 16), 2 * (16 + 8 - 1));
  EXPECT_EQ(play(4, 2, 8), 2 * (8 * 2 + 4 - 1));
  EXPECT_EQ(play(4, 3, 8), 2 * (8 * 3 + 4 - 1));
  EXPECT_EQ(play(8, 6, 32), 2 * (32 * 6 + 8 - 1));
  EXPECT_EQ(play(1, 1, 5), 10);
}

TEST(PipelineSchedule, RejectsImpossibleArguments) {
  EXPECT_THROW(pipeline_order(4, 2, 6, 0), std::invalid_argument);
  EXPECT_THROW(pipeline_order(4, 1, 8, 4), std::invalid_argument);
  EXPECT_THROW(pipeline_order(0, 1, 8, 0), std::invalid_argument);
  EXPECT_THROW(pipeline_order(scenario::Schedule::zb_h1, 4, 2, 8, 0), std::invalid_argument);
  EXPECT_THROW(pipeline_order(scenario::Schedule::zb_h1, 4, 1, 8, 4), std::invalid_argument);
}

// ZB-H1: each micro-batch's forward, then its input gradients, then its weight
// gradients, once each; 1F1B's forwards and input gradients in 1F1B's order
// (so its activations: at most pp - stage forwards in flight); stage s lets
// at most s weight-gradient passes wait, and the last ones run at the end.
TEST(PipelineSchedule, ZbH1SplitsEachBackwardAndLetsStageSDeferSWeightPasses) {
  const int pp = 4;
  const int m = 8;
  for (int s = 0; s < pp; ++s) {
    const auto order = pipeline_order(scenario::Schedule::zb_h1, pp, 1, m, s);
    ASSERT_EQ(order.size(), 3u * m);
    std::vector<PipelineTask> moving;
    std::map<int, int> state;  // micro-batch: 1 forward done, 2 input, 3 weight
    int in_flight = 0;
    int most_in_flight = 0;
    int waiting = 0;
    for (const auto& t : order) {
      auto& st = state[t.micro_batch];
      if (t.forward) {
        EXPECT_EQ(st, 0);
        st = 1;
        most_in_flight = std::max(most_in_flight, ++in_flight);
      } else if (t.part == PassPart::input) {
        EXPECT_EQ(st, 1);
        st = 2;
        --in_flight;
        ++waiting;
      } else {
        ASSERT_EQ(t.part, PassPart::weight);
        EXPECT_EQ(st, 2);
        st = 3;
        --waiting;
      }
      // s waiting when a forward starts; s + 1 between an input pass and the W after it.
      EXPECT_LE(waiting, t.forward ? s : s + 1) << "stage " << s;
      if (t.moves()) moving.push_back({t.forward, t.chunk, t.micro_batch});
    }
    EXPECT_EQ(most_in_flight, pp - s);
    EXPECT_EQ(moving, pipeline_order(pp, 1, m, s)) << "stage " << s;
    EXPECT_EQ(order.back().part, PassPart::weight);
  }
  // The first stage runs each weight-gradient pass right after its input's.
  const auto first = pipeline_order(scenario::Schedule::zb_h1, pp, 1, m, 0);
  for (std::size_t i = 0; i + 1 < first.size(); ++i) {
    if (first[i].part == PassPart::input) {
      EXPECT_EQ(first[i + 1], (PipelineTask{false, 0, first[i].micro_batch, PassPart::weight}));
    }
  }
}

}  // namespace
}  // namespace myriad::models
