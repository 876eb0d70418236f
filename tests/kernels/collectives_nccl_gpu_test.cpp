// The NCCL executor runs the same schedules as the thread executor and gets the
// same floats, and NCCL's own collective gets them too. With a GPU per rank the
// ranks talk through NCCL; with fewer GPUs every rank runs on GPU 0 and talks by
// device copies (NCCL refuses two ranks of a communicator on one device), and
// NCCL's collectives are compared only where NCCL ran. Inputs are random
// non-zero integers in floats: sums are exact in any order, so results must be
// equal, not close. Label `gpu`; skips cleanly without a device or NCCL.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <random>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/broadcast.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/hierarchical.hpp"
#include "kernels/collectives/nccl_executor.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/sendrecv.hpp"
#include "kernels/collectives/thread_executor.hpp"
#include "kernels/device/device_query.hpp"

namespace myriad::kernels::collectives {
namespace {

using kernels::DeviceReport;
using kernels::query_devices;

using Buffers = std::vector<std::vector<float>>;
constexpr int kFloat = 4;

Buffers random_buffers(const Schedule& s, std::mt19937& gen) {
  std::uniform_int_distribution<int> value(-1000, 1000);
  Buffers b;
  for (int r = 0; r < s.nranks(); ++r) {
    std::vector<float> v(static_cast<std::size_t>(s.layout(r).bytes() / kFloat));
    for (float& x : v) x = static_cast<float>(value(gen) | 1);
    b.push_back(std::move(v));
  }
  return b;
}

// The floats a collective defines on rank r: reduce-scatter only the rank's shard.
std::vector<float> defined_part(const Schedule& s, const Buffers& b, int r) {
  const auto& v = b[static_cast<std::size_t>(r)];
  if (s.spec.kind != CollectiveKind::reduce_scatter) return v;
  const int ch = s.spec.channels;
  const auto first = static_cast<std::ptrdiff_t>(s.layout(r).offset(r * ch) / kFloat);
  const auto last = static_cast<std::ptrdiff_t>(s.layout(r).offset((r + 1) * ch) / kFloat);
  return {v.begin() + first, v.begin() + last};
}

// Why this machine cannot run the executor, or empty.
std::string cannot_run() {
  if (!nccl_built()) return "built without CUDA/NCCL";
  const DeviceReport report = query_devices();
  return report.devices.empty() ? report.note : std::string();
}

// GPUs 0..n-1 when there are n of them (NCCL), else GPU 0 for every rank (device copies).
std::vector<int> devices_for(int n) {
  std::vector<int> devices(static_cast<std::size_t>(n), 0);
  if (static_cast<int>(query_devices().devices.size()) >= n) {
    std::iota(devices.begin(), devices.end(), 0);
  }
  return devices;
}

// NCCL has no all-to-all-v collective: the reference runs uniform all-to-alls only.
bool nccl_has_collective(const Schedule& s) {
  if (s.spec.kind != CollectiveKind::all_to_all) return true;
  for (int r = 0; r < s.nranks(); ++r) {
    for (int c = 0; c < s.layout(r).nchunks(); ++c) {
      if (s.layout(r).size(c) != s.layout(0).size(0)) return false;
    }
  }
  return true;
}

void expect_same_as_threads(NcclRanks& ranks, const Schedule& s, std::mt19937& gen) {
  SCOPED_TRACE(std::string(models::collective_key(s.spec.kind)) + " by " +
               std::string(models::algorithm_name(s.spec.algorithm)) + " on " +
               std::to_string(s.nranks()) + " ranks");
  const Buffers input = random_buffers(s, gen);
  Buffers want = input;
  execute(s, want);
  Buffers ours = input;
  ranks.execute(s, ours);
  for (int r = 0; r < s.nranks(); ++r) {
    ASSERT_EQ(defined_part(s, ours, r), defined_part(s, want, r)) << "schedule, rank " << r;
  }
  if (ranks.transport() != P2pTransport::nccl || !nccl_has_collective(s)) return;
  Buffers nccl = input;
  ranks.execute_reference(s, nccl);
  for (int r = 0; r < s.nranks(); ++r) {
    ASSERT_EQ(defined_part(s, nccl, r), defined_part(s, want, r)) << "NCCL, rank " << r;
  }
}

// All-to-all-v traffic, some pairs exchanging nothing: bytes i sends j.
std::vector<std::vector<std::int64_t>> uneven_matrix(int n, std::int64_t elems) {
  std::vector<std::vector<std::int64_t>> m(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      m[static_cast<std::size_t>(i)].push_back(kFloat * elems * ((i + j) % 3));
  }
  return m;
}

std::vector<Schedule> schedules(int n, std::int64_t elems) {
  const std::int64_t bytes = kFloat * elems;
  return {make_ring_allreduce(n, bytes, 1, kFloat), make_ring_allreduce(n, bytes, 2, kFloat),
          make_tree_allreduce(n, bytes, 1, kFloat),
          // Reduce-scatter and all-gather: whole buffers that split evenly, for NCCL.
          make_ring_reduce_scatter(n, bytes * n * 2, 2, kFloat),
          make_ring_allgather(n, bytes * n * 2, 2, kFloat), make_alltoall(n, bytes, kFloat),
          make_hierarchical_allreduce(n, n % 2 == 0 ? 2 : 1, bytes, kFloat),
          make_broadcast(n, n / 2, bytes, 3, kFloat), make_sendrecv(n - 1, 0, bytes, kFloat),
          make_alltoallv(uneven_matrix(n, elems), kFloat)};
}

class NcclExecutorRuns : public ::testing::TestWithParam<int> {};

TEST_P(NcclExecutorRuns, SameFloatsAsThreadsAndNccl) {
  const int n = GetParam();
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  NcclRanks ranks(devices_for(n));
  std::cout << n << " ranks over "
            << (ranks.transport() == P2pTransport::nccl ? "NCCL" : "device copies") << "\n";
  std::mt19937 gen(static_cast<unsigned>(n));
  for (const std::int64_t elems : {1, 1001, 65537}) {
    for (const Schedule& s : schedules(n, elems)) expect_same_as_threads(ranks, s, gen);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, NcclExecutorRuns, ::testing::Values(1, 2, 3, 4, 8));

TEST(NcclExecutor, TimesEveryIterationWithEvents) {
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<int> devices = devices_for(2);
  const Schedule s = make_ring_allreduce(2, std::int64_t{kFloat} << 20, 1, kFloat);
  const std::vector<double> ours = time_schedule_nccl(s, devices, 5);
  ASSERT_EQ(ours.size(), 5U);
  for (const double t : ours) EXPECT_GT(t, 0.0);
  std::cout << "4 MiB ring all-reduce over 2 ranks: " << ours.back() * 1e6 << " us\n";
  NcclRanks ranks(devices);
  if (ranks.transport() != P2pTransport::nccl) {
    EXPECT_THROW((void)ranks.time_reference(s, 3, 1), std::invalid_argument);
    return;
  }
  const std::vector<double> nccl = ranks.time_reference(s, 3, 1);
  ASSERT_EQ(nccl.size(), 3U);
  for (const double t : nccl) EXPECT_GT(t, 0.0);
  std::cout << "NCCL " << nccl_version() << " ncclAllReduce: " << nccl.back() * 1e6 << " us\n";
}

TEST(NcclExecutor, RefusesMixedDevices) {
  if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why;
  if (query_devices().devices.size() < 2) GTEST_SKIP() << "needs 2 GPUs";
  EXPECT_THROW(NcclRanks({0, 0, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::kernels::collectives
