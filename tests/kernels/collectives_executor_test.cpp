// The thread executor runs the same schedules on real floats, one thread per
// rank, and gets what a serial reference computes. Inputs are fresh random
// integers (never zero) stored in floats, so that sums are exact in any order.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/broadcast.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/hierarchical.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/sendrecv.hpp"
#include "kernels/collectives/thread_executor.hpp"

namespace myriad::kernels::collectives {
namespace {

using Buffers = std::vector<std::vector<float>>;
constexpr int kFloat = 4;
constexpr float kUnset = -7777;  // where a rank's buffer has no input: must be overwritten

// Non-zero integers in [-1000, 1000]: sums of up to 64 ranks stay exact in a float.
std::vector<float> random_ints(std::size_t n, std::mt19937& gen) {
  std::uniform_int_distribution<int> value(1, 1000);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(negative(gen) ? -value(gen) : value(gen));
  return v;
}

Buffers random_buffers(const Schedule& s, std::mt19937& gen) {
  Buffers b;
  for (int r = 0; r < s.nranks(); ++r)
    b.push_back(random_ints(static_cast<std::size_t>(s.layout(r).bytes() / kFloat), gen));
  return b;
}

std::vector<float> elementwise_sum(const Buffers& b) {
  std::vector<float> sum(b[0].size(), 0);
  for (const auto& v : b) {
    for (std::size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
  }
  return sum;
}

// The floats of chunks [first, first + count) of a rank's layout.
std::pair<std::size_t, std::size_t> span_of(const ChunkLayout& l, int first, int count) {
  return {static_cast<std::size_t>(l.offset(first) / kFloat),
          static_cast<std::size_t>(l.offset(first + count) / kFloat)};
}

class Executor : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  [[nodiscard]] int n() const { return std::get<0>(GetParam()); }
  [[nodiscard]] std::int64_t bytes() const {
    return std::int64_t{kFloat} * std::get<1>(GetParam());
  }
  std::mt19937 gen_{
      static_cast<unsigned>(std::get<0>(GetParam()) * 7919 + std::get<1>(GetParam()))};

  void expect_allreduce(const Schedule& s) {
    Buffers b = random_buffers(s, gen_);
    const std::vector<float> want = elementwise_sum(b);
    execute(s, b);
    for (int r = 0; r < n(); ++r) {
      ASSERT_EQ(b[static_cast<std::size_t>(r)], want)
          << std::string(models::algorithm_name(s.spec.algorithm)) << ", rank " << r;
    }
  }
};

TEST_P(Executor, AllreduceEveryAlgorithm) {
  expect_allreduce(make_ring_allreduce(n(), bytes(), 3, kFloat));
  expect_allreduce(make_tree_allreduce(n(), bytes(), 2, kFloat));
  expect_allreduce(make_hierarchical_allreduce(n(), n() % 4 == 0 ? 4 : 1, bytes(), kFloat));
}

TEST_P(Executor, ReduceScatterLeavesEachRankItsShard) {
  const int channels = 2;
  const Schedule s = make_ring_reduce_scatter(n(), bytes(), channels, kFloat);
  Buffers b = random_buffers(s, gen_);
  const std::vector<float> want = elementwise_sum(b);
  execute(s, b);
  for (int r = 0; r < n(); ++r) {
    const auto [lo, hi] = span_of(s.layout(r), r * channels, channels);
    for (std::size_t i = lo; i < hi; ++i)
      ASSERT_EQ(b[static_cast<std::size_t>(r)][i], want[i]) << "rank " << r;
  }
}

TEST_P(Executor, AllgatherGivesEveryRankEveryShard) {
  const int channels = 2;
  const Schedule s = make_ring_allgather(n(), bytes(), channels, kFloat);
  const std::vector<float> whole = random_ints(static_cast<std::size_t>(bytes() / kFloat), gen_);
  Buffers b(static_cast<std::size_t>(n()), std::vector<float>(whole.size(), kUnset));
  for (int r = 0; r < n(); ++r) {
    const auto [lo, hi] = span_of(s.layout(r), r * channels, channels);
    for (std::size_t i = lo; i < hi; ++i) b[static_cast<std::size_t>(r)][i] = whole[i];
  }
  execute(s, b);
  for (int r = 0; r < n(); ++r) ASSERT_EQ(b[static_cast<std::size_t>(r)], whole) << "rank " << r;
}

TEST_P(Executor, BroadcastAndSendrecvCopyTheSource) {
  const Schedule s = make_broadcast(n(), n() / 2, bytes(), 3, kFloat);
  const std::vector<float> data = random_ints(static_cast<std::size_t>(bytes() / kFloat), gen_);
  Buffers b(static_cast<std::size_t>(n()), std::vector<float>(data.size(), kUnset));
  b[static_cast<std::size_t>(n() / 2)] = data;
  execute(s, b);
  for (int r = 0; r < n(); ++r) ASSERT_EQ(b[static_cast<std::size_t>(r)], data) << "rank " << r;

  const Schedule p2p = make_sendrecv(n() - 1, 0, bytes(), kFloat);
  Buffers q(static_cast<std::size_t>(n()), std::vector<float>(data.size(), kUnset));
  q.back() = data;
  execute(p2p, q);
  EXPECT_EQ(q.front(), data);
}

// Rank i's block for j, as the sender lays it out; checks that rank j's output holds it.
void expect_alltoall(const Schedule& s, const Buffers& before, const Buffers& after) {
  const int n = s.nranks();
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const auto [in_lo, in_hi] = span_of(s.layout(i), j, 1);
      const auto [out_lo, out_hi] = span_of(s.layout(j), n + i, 1);
      ASSERT_EQ(in_hi - in_lo, out_hi - out_lo);
      for (std::size_t k = 0; k < in_hi - in_lo; ++k) {
        ASSERT_EQ(after[static_cast<std::size_t>(j)][out_lo + k],
                  before[static_cast<std::size_t>(i)][in_lo + k])
            << "block " << i << " -> " << j;
      }
    }
  }
}

TEST_P(Executor, AlltoallAndAlltoallvDeliverEveryBlock) {
  const Schedule s = make_alltoall(n(), bytes(), kFloat);
  Buffers b = random_buffers(s, gen_);
  const Buffers before = b;
  execute(s, b);
  expect_alltoall(s, before, b);

  std::uniform_int_distribution<int> floats(0, 9);  // zeros among them
  std::vector<std::vector<std::int64_t>> matrix(static_cast<std::size_t>(n()));
  for (auto& row : matrix) {
    for (int j = 0; j < n(); ++j) row.push_back(std::int64_t{kFloat} * floats(gen_));
  }
  const Schedule v = make_alltoallv(matrix, kFloat);
  Buffers c = random_buffers(v, gen_);
  const Buffers before_v = c;
  execute(v, c);
  expect_alltoall(v, before_v, c);
}

INSTANTIATE_TEST_SUITE_P(RanksAndOddElementCounts, Executor,
                         ::testing::Combine(::testing::Values(1, 2, 3, 7, 8, 64),
                                            ::testing::Values(1, 7, 1001)),
                         [](const auto& p) {
                           return std::to_string(std::get<0>(p.param)) + "ranks_" +
                                  std::to_string(std::get<1>(p.param)) + "floats";
                         });

TEST(ExecutorDeterminism, SameScheduleSameBitsWhateverTheTiming) {
  // Real-valued floats: the sum depends on order, and the schedule fixes the order.
  std::mt19937 gen(2024);
  std::normal_distribution<float> value(0, 1);
  const Schedule s = make_ring_allreduce(16, 4 * 4099, 4, kFloat);
  Buffers b(16, std::vector<float>(4099));
  for (auto& v : b) {
    for (float& x : v) x = value(gen);
  }
  Buffers first = b;
  execute(s, first);
  for (int run = 0; run < 3; ++run) {
    Buffers again = b;
    execute(s, again);
    ASSERT_EQ(again, first) << "run " << run;
  }
}

TEST(ExecutorRefuses, WhatItCannotRun) {
  Buffers b(4, std::vector<float>(10));
  EXPECT_THROW(execute(make_ring_allreduce(4, 40), b), std::invalid_argument);  // 1-byte elements
  EXPECT_THROW(execute(make_ring_allreduce(4, 44, 1, kFloat), b),
               std::invalid_argument);  // 11 floats
  Buffers three(3, std::vector<float>(10));
  EXPECT_THROW(execute(make_ring_allreduce(4, 40, 1, kFloat), three), std::invalid_argument);
  Schedule broken = make_ring_allreduce(4, 40, 1, kFloat);
  broken.steps[1].erase(broken.steps[1].end() - 2);  // rank 2's last receive would wait forever
  try {
    execute(broken, b);
    ADD_FAILURE() << "a schedule that deadlocks was run";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("execute: the schedule fails its check: "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace myriad::kernels::collectives
