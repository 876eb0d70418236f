// The lowering of schedules to NCCL-style rounds of grouped sends and receives
// (group_plan.hpp), checked on the CPU: run as NCCL would run it (receives
// matched in posting order per pair of ranks, sends read before receives write)
// it must leave every rank's buffer exactly as the thread executor does. Inputs
// are random non-zero integers in floats, so sums are exact in any order.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/broadcast.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/group_plan.hpp"
#include "kernels/collectives/hierarchical.hpp"
#include "kernels/collectives/nccl_executor.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/sendrecv.hpp"
#include "kernels/collectives/thread_executor.hpp"

namespace myriad::kernels::collectives {
namespace {

using Buffers = std::vector<std::vector<float>>;
constexpr int kFloat = 4;

Buffers random_buffers(const Schedule& s, std::mt19937& gen) {
  std::uniform_int_distribution<int> value(-1000, 1000);
  Buffers b;
  for (int r = 0; r < s.nranks(); ++r) {
    std::vector<float> v(static_cast<std::size_t>(s.layout(r).bytes() / kFloat));
    for (float& x : v) x = static_cast<float>(value(gen) | 1);  // odd: never zero
    b.push_back(std::move(v));
  }
  return b;
}

std::vector<Schedule> every_schedule(int n, std::int64_t elems) {
  const std::int64_t bytes = kFloat * elems;
  std::vector<std::vector<std::int64_t>> matrix(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      matrix[static_cast<std::size_t>(i)].push_back(std::int64_t{kFloat} * ((i + 2 * j) % 5));
  }
  return {make_ring_allreduce(n, bytes, 1, kFloat),
          make_ring_allreduce(n, bytes, 3, kFloat),
          make_ring_reduce_scatter(n, bytes * n, 2, kFloat),
          make_ring_allgather(n, bytes * n, 2, kFloat),
          make_tree_allreduce(n, bytes, 2, kFloat),
          make_hierarchical_allreduce(n, n % 4 == 0 ? 4 : 1, bytes, kFloat),
          make_alltoall(n, bytes, kFloat),
          make_alltoallv(matrix, kFloat),
          make_broadcast(n, n / 2, bytes, 3, kFloat),
          make_sendrecv(n - 1, 0, bytes, kFloat)};
}

class GroupPlanRuns : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(GroupPlanRuns, SameBytesAsTheThreadExecutor) {
  const auto [n, elems] = GetParam();
  std::mt19937 gen(static_cast<unsigned>(n * 131 + elems));
  for (const Schedule& s : every_schedule(n, elems)) {
    SCOPED_TRACE(std::string(models::collective_key(s.spec.kind)) + " by " +
                 std::string(models::algorithm_name(s.spec.algorithm)));
    Buffers want = random_buffers(s, gen);
    Buffers got = want;
    execute(s, want);
    execute_plan(make_group_plan(s), got);
    for (std::size_t r = 0; r < got.size(); ++r) ASSERT_EQ(got[r], want[r]) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(RanksAndOddElementCounts, GroupPlanRuns,
                         ::testing::Combine(::testing::Values(1, 2, 3, 7, 8, 16),
                                            ::testing::Values(1, 7, 1001)));

TEST(GroupPlan, RingTakesOneSendAndOneReceivePerRankAndRound) {
  // Expectation: a ring all-reduce over n ranks is 2(n - 1) rounds, each rank
  // sending one chunk and receiving one, with no staging (NCCL's runRing).
  for (const int n : {2, 3, 8}) {
    const GroupPlan plan =
        make_group_plan(make_ring_allreduce(n, std::int64_t{4} * 1001, 1, kFloat));
    EXPECT_EQ(plan.rounds.size(), static_cast<std::size_t>(2 * (n - 1))) << n;
    for (const auto& round : plan.rounds) {
      for (const RankRound& rr : round) ASSERT_EQ(rr.group.size(), 2U);
    }
    for (const std::int64_t staged : plan.staging_bytes) EXPECT_EQ(staged, 0);
  }
}

TEST(GroupPlan, AllToAllIsOneGroup) {
  // Expectation: the pairwise exchanges touch disjoint blocks, so they all go in
  // one group (as nccl-tests' all-to-all), with the local block copied before it.
  const GroupPlan plan = make_group_plan(make_alltoall(7, std::int64_t{4} * 3, kFloat));
  ASSERT_EQ(plan.rounds.size(), 1U);
  for (const RankRound& rr : plan.rounds.front()) {
    EXPECT_EQ(rr.group.size(), 12U);
    EXPECT_EQ(rr.before.size(), 1U);
  }
}

TEST(GroupPlan, StagesSendsThatAReceiveWouldOverwrite) {
  // Expectation: two ranks each send their buffer and then add the other's into
  // it. Eager sends make this an all-reduce; NCCL's sends are not eager, and the
  // receive may not share a group with the send of the same bytes. So each send
  // is staged (copied aside) in a first round and posted from there in a second.
  CollectiveSpec spec;
  spec.nranks = 2;
  constexpr std::int64_t kBytes = 20;  // five floats
  spec.bytes = kBytes;
  spec.elem_bytes = kFloat;
  spec.algorithm = CollectiveAlgorithm::p2p;
  Schedule s{spec, {ChunkLayout::even(kBytes, 1, kFloat)}, {}};
  for (int r = 0; r < 2; ++r) {
    s.steps.push_back({Step{StepKind::send, 1 - r, 0, 0, 1, -1, kBytes},
                       Step{StepKind::recv_reduce, 1 - r, 0, 0, 1, -1, kBytes}});
  }
  const GroupPlan plan = make_group_plan(s);
  ASSERT_EQ(plan.rounds.size(), 2U);
  EXPECT_EQ(plan.staging_bytes, (std::vector<std::int64_t>{20, 20}));
  EXPECT_EQ(plan.rounds[0][0].before.size(), 1U);
  EXPECT_EQ(plan.rounds[1][0].group.front().src.region, Region::staging);
  Buffers got{{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}};
  Buffers want = got;
  execute(s, want);
  execute_plan(plan, got);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[0], (std::vector<float>{11, 22, 33, 44, 55}));
}

TEST(GroupPlan, RefusesUncheckedSchedules) {
  Schedule broken = make_ring_allreduce(4, 40, 1, kFloat);
  broken.steps[1].pop_back();
  EXPECT_THROW(make_group_plan(broken), std::invalid_argument);
}

#if !defined(MYRIAD_HAVE_NCCL)
TEST(NcclExecutor, SaysItIsNotBuilt) {
  EXPECT_FALSE(nccl_built());
  EXPECT_THROW(NcclRanks({0, 1}), std::runtime_error);
  EXPECT_THROW(time_schedule_nccl(make_ring_allreduce(2, 8, 1, kFloat), {0, 1}, 3),
               std::runtime_error);
}
#endif

}  // namespace
}  // namespace myriad::kernels::collectives
