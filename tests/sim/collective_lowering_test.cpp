// The step engine's phased lowering of a collective (one flow per ring edge,
// the other steps' latency added analytically) against the schedule played
// step by step on SimGrid: within 1% for small groups, where both can run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <exception>
#include <functional>

#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/ring.hpp"
#include "sim/step/collective_lowering.hpp"
#include "step_engine_support.hpp"

namespace myriad::sim {
namespace {

using kernels::collectives::Schedule;
using testing::kSanitizerSafe;

// SimGrid runs one engine per process: each simulation in a child.
double in_child(const std::function<double()>& simulate) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double t = -1;
    try {
      t = simulate();
    } catch (const std::exception&) {
    }
    const auto written = write(fds[1], &t, sizeof t);
    _exit(written == sizeof t ? 0 : 1);
  }
  close(fds[1]);
  double t = -1;
  const auto got = read(fds[0], &t, sizeof t);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == sizeof t ? t : -1;
}

struct Case {
  const char* name;
  Schedule schedule;
  double alpha_beta_s;  // steps * latency + factor * bytes / bandwidth
};

constexpr LoweringLink kLink{25e9, 5e-6};  // 200 Gb/s, 5 us a hop

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const int n : {2, 3, 8}) {
    const double bytes = 64.0 * (1 << 20) * n;  // divisible into n * channels chunks
    const auto b = static_cast<std::int64_t>(bytes);
    c.push_back({"all-reduce", kernels::collectives::make_ring_allreduce(n, b, 1, 4),
                 2.0 * (n - 1) * kLink.latency_s + 2.0 * (n - 1) / n * bytes / kLink.link_Bps});
    c.push_back({"all-reduce, 2 channels", kernels::collectives::make_ring_allreduce(n, b, 2, 4),
                 2.0 * (n - 1) * kLink.latency_s + 2.0 * (n - 1) / n * bytes / kLink.link_Bps});
    c.push_back({"all-gather", kernels::collectives::make_ring_allgather(n, b, 1, 4),
                 (n - 1) * kLink.latency_s + (n - 1.0) / n * bytes / kLink.link_Bps});
    c.push_back({"reduce-scatter", kernels::collectives::make_ring_reduce_scatter(n, b, 1, 4),
                 (n - 1) * kLink.latency_s + (n - 1.0) / n * bytes / kLink.link_Bps});
  }
  return c;
}

TEST(CollectiveLowering, PhasedAgreesWithChunkedWithinOnePercent) {
  for (const Case& c : cases()) {
    const double chunked =
        in_child([&] { return simulate_chunked(c.schedule, kLink, kSanitizerSafe); });
    const double phased =
        in_child([&] { return simulate_phased(c.schedule, kLink, kSanitizerSafe); });
    const std::string what = std::string(c.name) + " over " + std::to_string(c.schedule.nranks());
    ASSERT_GT(chunked, 0) << what;
    ASSERT_GT(phased, 0) << what;
    EXPECT_NEAR(phased / chunked, 1, 0.01)
        << what << ": chunked " << chunked << " s, phased " << phased << " s";
    // Both are alpha-beta on an uncontended ring (CM02, no cross traffic).
    EXPECT_NEAR(chunked / c.alpha_beta_s, 1, 0.01) << what;
  }
}

TEST(CollectiveLowering, RefusesSchedulesThatLeaveTheRing) {
  const Schedule tree = kernels::collectives::make_tree_allreduce(4, 1 << 20, 1, 4);
  EXPECT_LT(in_child([&] { return simulate_chunked(tree, kLink, kSanitizerSafe); }), 0);
}

}  // namespace
}  // namespace myriad::sim
