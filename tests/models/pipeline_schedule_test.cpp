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

namespace myriad::models {
namespace {

// DualPipe: every rank runs each direction's micro-batches forward once and
// backward once (whole, or input then weight gradients); an F&B pass is a
// forward of one direction and a whole backward of the other; the forwards
// and backwards of a direction go in micro-batch order.
TEST(DualPipe, EveryRankRunsEachDirectionsPassesOnceInOrder) {
  for (const auto& [pp, m] : {std::pair{4, 8}, std::pair{8, 20}, std::pair{16, 64}}) {
    for (int r = 0; r < pp; ++r) {
      const auto order = pipeline_order(scenario::Schedule::dualpipe, pp, 1, m, r);
      std::map<std::pair<int, int>, int> state;  // (direction, mb): 1 forward, 2 input, 3 done
      int next_forward[2] = {0, 0};
      int next_backward[2] = {0, 0};
      for (std::size_t i = 0; i < order.size(); ++i) {
        const PipelineTask& t = order[i];
        auto& st = state[{t.chunk, t.micro_batch}];
        if (t.forward) {
          EXPECT_EQ(t.micro_batch, next_forward[t.chunk]++);
          EXPECT_EQ(st, 0);
          st = 1;
          if (t.paired) {
            ASSERT_LT(i + 1, order.size());
            EXPECT_FALSE(order[i + 1].forward);
            EXPECT_NE(order[i + 1].chunk, t.chunk);
            EXPECT_EQ(order[i + 1].part, PassPart::whole);
          }
        } else if (t.part == PassPart::weight) {
          EXPECT_EQ(st, 2);
          st = 3;
        } else {
          EXPECT_EQ(t.micro_batch, next_backward[t.chunk]++);
          EXPECT_EQ(st, 1);
          st = t.part == PassPart::input ? 2 : 3;
        }
      }
      EXPECT_EQ(state.size(), static_cast<std::size_t>(m));
      for (const auto& [task, st] : state) EXPECT_EQ(st, 3) << pp << " " << m << " rank " << r;
    }
  }
}

// The activations a rank holds at most, in chunk passes (forwards whose
// backward has not run; an F&B pass trades one for another as it goes): pp + 1
// on the two middle ranks, pp on the others (DualPipe's README table: "PP + 1").
TEST(DualPipe, HoldsPpPlusOneChunkPassesOfActivationsOnTheMiddleRanks) {
  for (const auto& [pp, m] : {std::pair{4, 8}, std::pair{8, 20}, std::pair{16, 32}}) {
    for (int r = 0; r < pp; ++r) {
      int held = 0;
      int most = 0;
      for (const auto& t : pipeline_order(scenario::Schedule::dualpipe, pp, 1, m, r)) {
        if (t.forward) ++held;
        if (!t.forward && t.part != PassPart::weight) --held;
        if (!t.paired) most = std::max(most, held);
      }
      const bool middle = r == pp / 2 - 1 || r == pp / 2;
      EXPECT_EQ(most, middle ? pp + 1 : pp) << pp << " " << m << " rank " << r;
    }
  }
}

TEST(DualPipe, RejectsWhatItCannotRun) {
  EXPECT_THROW(dualpipe_order(3, 12, 0), std::invalid_argument);  // odd pp
  EXPECT_THROW(dualpipe_order(4, 6, 0), std::invalid_argument);   // fewer than 2 pp
  EXPECT_THROW(dualpipe_order(4, 9, 0), std::invalid_argument);   // odd
  EXPECT_THROW(dualpipe_order(4, 8, 4), std::invalid_argument);   // no such rank
  EXPECT_THROW(pipeline_order(scenario::Schedule::dualpipe, 4, 3, 8, 0), std::invalid_argument);
}

// Where each chunk sits: rank r holds stage r of direction 0 and stage
// pp - 1 - r of direction 1; inputs come from the neighbour on the way.
TEST(DualPipe, ChunksSitOnBothDirectionsPipelines) {
  using scenario::Schedule;
  EXPECT_EQ(model_chunks(Schedule::dualpipe, 8, 1), 8);
  EXPECT_EQ(model_position(Schedule::dualpipe, 8, 2, 0), 2);
  EXPECT_EQ(model_position(Schedule::dualpipe, 8, 2, 1), 5);
  const ChunkPlace f1 = input_of(Schedule::dualpipe, 8, 2, 2, {true, 1, 0});
  EXPECT_EQ(f1.stage, 3);
  EXPECT_EQ(f1.chunk, 1);
  const ChunkPlace b0 = input_of(Schedule::dualpipe, 8, 2, 2, {false, 0, 0});
  EXPECT_EQ(b0.stage, 3);
  EXPECT_EQ(input_of(Schedule::dualpipe, 8, 2, 7, {true, 1, 0}).stage, -1);   // the embedding
  EXPECT_EQ(output_of(Schedule::dualpipe, 8, 2, 0, {true, 1, 0}).stage, -1);  // the head
  // Interleaved, as Megatron-LM wraps: the last stage's chunk 0 feeds the first's chunk 1.
  const ChunkPlace wrap = output_of(Schedule::interleaved, 4, 2, 3, {true, 0, 0});
  EXPECT_EQ(wrap.stage, 0);
  EXPECT_EQ(wrap.chunk, 1);
}

}  // namespace
}  // namespace myriad::models
