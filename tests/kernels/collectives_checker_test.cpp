// Every generator's schedule performs its collective, for rank counts from 1
// to 1024 and odd byte counts, as the symbolic checker proves; and schedules
// broken by hand are rejected with the rank, the step and what went wrong.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/broadcast.hpp"
#include "kernels/collectives/checker.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/hierarchical.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/sendrecv.hpp"

namespace myriad::kernels::collectives {
namespace {

// The largest of 1, 2, 4, 8 that divides n: GPUs per node for a hierarchical run.
int ranks_per_node(int n) {
  int g = 8;
  while (n % g != 0) g /= 2;
  return g;
}

// MoE-like traffic: each rank sends to a few others, uneven byte counts, many empty pairs.
std::vector<std::vector<std::int64_t>> moe_matrix(int n, std::int64_t bytes, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> amount(0, bytes);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::vector<std::vector<std::int64_t>> m(
      static_cast<std::size_t>(n), std::vector<std::int64_t>(static_cast<std::size_t>(n), 0));
  for (auto& row : m) {
    for (int k = 0; k < 4; ++k) row[static_cast<std::size_t>(pick(gen))] = amount(gen);
  }
  return m;
}

void expect_passes(const Schedule& s) {
  const CheckResult result = check(s);
  EXPECT_TRUE(result.ok) << std::string(models::collective_key(s.spec.kind)) << " ("
                         << std::string(models::algorithm_name(s.spec.algorithm)) << "), "
                         << s.nranks() << " ranks, " << s.spec.bytes
                         << " bytes: " << result.message;
  EXPECT_TRUE(result.message.empty());
}

std::string name_case(const ::testing::TestParamInfo<std::tuple<int, std::int64_t>>& p) {
  return std::to_string(std::get<0>(p.param)) + "ranks_" + std::to_string(std::get<1>(p.param)) +
         "bytes";
}

class EveryGenerator : public ::testing::TestWithParam<std::tuple<int, std::int64_t>> {
 protected:
  [[nodiscard]] int n() const { return std::get<0>(GetParam()); }
  [[nodiscard]] std::int64_t bytes() const { return std::get<1>(GetParam()); }
  // 1024 ranks: the schedules are large (4M steps for a ring); keep to one channel.
  [[nodiscard]] int channels() const { return n() >= 1024 ? 1 : 3; }
};

TEST_P(EveryGenerator, RingAllreducePasses) {
  expect_passes(make_ring_allreduce(n(), bytes(), channels()));
}
TEST_P(EveryGenerator, RingReduceScatterPasses) {
  expect_passes(make_ring_reduce_scatter(n(), bytes(), channels()));
}
TEST_P(EveryGenerator, RingAllgatherPasses) {
  expect_passes(make_ring_allgather(n(), bytes(), channels()));
}
TEST_P(EveryGenerator, TreeAllreducePasses) {
  expect_passes(make_tree_allreduce(n(), bytes()));
  expect_passes(make_tree_allreduce(n(), bytes(), 4));
}
TEST_P(EveryGenerator, HierarchicalAllreducePasses) {
  expect_passes(make_hierarchical_allreduce(n(), ranks_per_node(n()), bytes()));
  if (n() >= 1024) return;  // the two extremes are plain rings: enough to test them smaller
  expect_passes(make_hierarchical_allreduce(n(), n(), bytes()));  // one node
  expect_passes(make_hierarchical_allreduce(n(), 1, bytes()));    // one rank per node
}
TEST_P(EveryGenerator, AlltoallPasses) { expect_passes(make_alltoall(n(), bytes())); }
TEST_P(EveryGenerator, AlltoallvPasses) {
  expect_passes(make_alltoallv(moe_matrix(n(), bytes(), static_cast<unsigned>(n()))));
}
TEST_P(EveryGenerator, BroadcastPasses) {
  expect_passes(make_broadcast(n(), n() / 2, bytes(), 4));
  expect_passes(make_broadcast(n(), n() - 1, bytes(), 1));
}
TEST_P(EveryGenerator, SendrecvPasses) {
  expect_passes(make_sendrecv(0, n() - 1, bytes()));
  expect_passes(make_sendrecv(n() - 1, 0, bytes()));
}

// 1024 ranks: a ring all-reduce is 4M steps; one odd byte count is enough at that
// scale (the tiny counts, with empty chunks, are covered at 64 ranks).
INSTANTIATE_TEST_SUITE_P(RanksAndOddBytes, EveryGenerator,
                         ::testing::Combine(::testing::Values(1, 2, 3, 7, 8, 64),
                                            ::testing::Values(std::int64_t{1}, std::int64_t{7},
                                                              std::int64_t{1000003})),
                         name_case);
INSTANTIATE_TEST_SUITE_P(ThousandRanks, EveryGenerator,
                         ::testing::Combine(::testing::Values(1024),
                                            ::testing::Values(std::int64_t{1000003})),
                         name_case);

TEST(Checker, PassesEmptyBuffers) {
  expect_passes(make_ring_allreduce(8, 0, 2));
  expect_passes(make_tree_allreduce(7, 0));
  expect_passes(make_alltoall(5, 0));
}

// ---- Schedules broken by hand ----

CheckResult expect_rejected(const Schedule& s, const std::string& says) {
  const CheckResult result = check(s);
  EXPECT_FALSE(result.ok) << "a broken schedule passed; expected: " << says;
  EXPECT_NE(result.message.find(says), std::string::npos)
      << "Expectation: a message containing \"" << says << "\"\nActual: " << result.message;
  return result;
}

std::vector<Step>& steps_of(Schedule& s, int rank) {
  return s.steps[static_cast<std::size_t>(rank)];
}

TEST(CheckerRejects, ADroppedRecv) {
  Schedule s = make_ring_allreduce(4, 4000, 1);
  // Rank 2's first receive (step 1) is gone: rank 1's first send (chunk 0) is
  // then taken by the receive meant for its second (chunk 3).
  steps_of(s, 2).erase(steps_of(s, 2).begin() + 1);
  const CheckResult r = expect_rejected(
      s,
      "rank 2, step 2 (recv_reduce chunk 3 (1000 bytes) from rank 1 on channel 0): does not "
      "match the send it receives: rank 1, step 0 (send chunk 0 (1000 bytes) to rank 2");
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.step, 2);
}

TEST(CheckerRejects, ADroppedLastRecvAsAnUnmatchedSend) {
  Schedule s = make_ring_allgather(4, 4000, 1);
  steps_of(s, 3).pop_back();
  const CheckResult r = expect_rejected(s,
                                        "never received: rank 3 finished without a matching recv "
                                        "on channel 0 (1 message(s) left there)");
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.step, static_cast<int>(s.rank_steps(2).size()) - 2);
}

TEST(CheckerRejects, ADroppedSendAsADeadlock) {
  Schedule s = make_ring_allreduce(4, 4000, 1);
  // Rank 1's last send (its last step is a receive): rank 2 waits forever.
  steps_of(s, 1).erase(steps_of(s, 1).end() - 2);
  const CheckResult r =
      expect_rejected(s, "deadlock: waits for a message that never comes: rank 1 has finished");
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.step, static_cast<int>(s.rank_steps(2).size()) - 1);
}

TEST(CheckerRejects, AWrongPeer) {
  Schedule s = make_ring_allreduce(4, 4000, 1);
  steps_of(s, 0)[0].peer = 2;  // should send to rank 1, which takes rank 0's next send instead
  expect_rejected(
      s,
      "rank 1, step 1 (recv_reduce chunk 3 (1000 bytes) from rank 0 on channel 0): does not "
      "match the send it receives: rank 0, step 2 (send chunk 2 (1000 bytes) to rank 1");
  s = make_ring_allreduce(4, 4000, 1);
  steps_of(s, 1)[1].peer = 2;  // should receive from rank 0: ranks 1 and 2 wait for each other
  expect_rejected(
      s,
      "deadlock: ranks wait for each other in a cycle: rank 2 at step 3 (recv_reduce chunk 3 "
      "(1000 bytes) from rank 1 on channel 0) -> rank 1 at step 1 (recv_reduce chunk 3 (1000 "
      "bytes) from rank 2 on channel 0) -> rank 2");
}

TEST(CheckerRejects, ADoubleReduce) {
  Schedule s = make_ring_reduce_scatter(3, 3000, 1);
  // Rank 1 receives and reduces the same message twice: rank 0 sends its step twice.
  auto& r0 = steps_of(s, 0);
  r0.insert(r0.begin() + 1, r0[0]);
  auto& r1 = steps_of(s, 1);
  r1.insert(r1.begin() + 2, r1[1]);
  const CheckResult r = expect_rejected(s, "counts rank 0's contribution twice");
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.step, 2);
}

TEST(CheckerRejects, AReduceOfTheWrongChunk) {
  Schedule s = make_ring_allreduce(4, 4000, 1);
  steps_of(s, 1)[1].chunk = 2;  // receives into chunk 2 what rank 0 sent from chunk 3
  expect_rejected(s, "does not match the send it receives: rank 0, step 0 (send chunk 3");
}

TEST(CheckerRejects, AnIncompleteReduction) {
  Schedule s = make_ring_allreduce(4, 4000, 1);
  // The second reduce-scatter step of rank 2 overwrites instead of adding.
  steps_of(s, 2)[3].kind = StepKind::recv;
  expect_rejected(s,
                  "all_reduce (ring) does not hold: at the end, rank 0 chunk 3 should hold the "
                  "contributions of all 4 ranks, holds 3 of them {0, 1, 3} (rank 2 missing)");
}

TEST(CheckerRejects, ACycleOfWaits) {
  Schedule s = make_sendrecv(0, 1, 8);
  // Both ranks receive before they send.
  s.steps[0] = {Step{StepKind::recv, 1, 0, 0, 1, -1, 8}, Step{StepKind::send, 1, 0, 0, 1, -1, 8}};
  s.steps[1] = {Step{StepKind::recv, 0, 0, 0, 1, -1, 8}, Step{StepKind::send, 0, 0, 0, 1, -1, 8}};
  expect_rejected(s,
                  "deadlock: ranks wait for each other in a cycle: rank 0 at step 0 (recv chunk 0 "
                  "(8 bytes) from rank 1 on channel 0) -> rank 1 at step 0 (recv chunk 0 (8 bytes) "
                  "from rank 0 on channel 0) -> rank 0 (2 rank(s) blocked)");
}

TEST(CheckerRejects, SendingDataNotYetThere) {
  Schedule s = make_broadcast(4, 0, 400, 2);
  std::swap(steps_of(s, 1)[0], steps_of(s, 1)[1]);  // rank 1 forwards chunk 0 before receiving it
  expect_rejected(
      s,
      "rank 1, step 0 (send chunk 0 (200 bytes) to rank 2 on channel 0): sends chunk 0, "
      "which holds no data yet");
}

TEST(CheckerRejects, MalformedSteps) {
  Schedule s = make_ring_allreduce(4, 4000, 2);
  steps_of(s, 3)[0].peer = 9;
  expect_rejected(s,
                  "rank 3, step 0 (send chunk 4 (500 bytes) to rank 9 on channel 0): peer 9 is not "
                  "one of the 4 ranks");
  s = make_ring_allreduce(4, 4000, 2);
  steps_of(s, 3)[2].channel = 2;
  expect_rejected(s, "channel 2 is outside [0, 2)");
  s = make_ring_allreduce(4, 4000, 2);
  steps_of(s, 0)[0].bytes = 1000;
  expect_rejected(s, "says 1000 bytes, but its chunks hold 500");
  s = make_ring_allreduce(4, 4000, 2);
  steps_of(s, 0)[0].chunk = 8;
  expect_rejected(s, "chunks [8, 9) are not within the rank's 8 chunks");
  s = make_ring_allreduce(4, 4000, 2);
  steps_of(s, 0)[0].peer = 0;
  expect_rejected(s, "names its own rank as its peer");
  s = make_ring_allreduce(4, 4000, 2);
  s.steps.pop_back();
  expect_rejected(s, "schedule: 3 step lists for 4 ranks");
}

TEST(CheckerRejects, AllToAllBlocksInTheWrongPlace) {
  Schedule s = make_alltoall(3, 12);
  // Rank 1 receives rank 0's block into the slot for rank 2's block, and the other way round.
  for (Step& step : steps_of(s, 1)) {
    if (step.kind == StepKind::recv) step.chunk = step.chunk == 3 ? 5 : 3;
  }
  expect_rejected(
      s,
      "all_to_all (pairwise) does not hold: at the end, rank 1 chunk 3 should hold rank "
      "0's data alone, holds the contributions of {2}");
}

TEST(CheckerRejects, AnAllgatherThatNeverSendsAShard) {
  Schedule s = make_ring_allgather(3, 300, 1);
  // Rank 0 sends its own shard twice instead of forwarding rank 2's.
  steps_of(s, 0)[2].chunk = 0;
  steps_of(s, 1)[3].chunk = 0;
  expect_rejected(s, "all_gather (ring) does not hold: at the end, rank 1 chunk 2 holds no data");
}

}  // namespace
}  // namespace myriad::kernels::collectives
