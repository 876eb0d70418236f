// The campaign's thread pool: every job once, and nothing that goes wrong in a
// thread ends the process.
#include "sim/campaign/job_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <vector>

namespace myriad::sim::campaign {
namespace {

struct Count {
  int jobs = 0;
};

// Expectation: with threads to spare or none, each job runs exactly once.
TEST(JobPool, RunsEveryJobOnce) {
  for (const int threads : {1, 3, 64}) {
    std::vector<std::atomic<int>> runs(100);
    run_jobs(
        runs.size(), threads, [] { return Count{}; },
        [&](Count& c, std::size_t j) {
          ++c.jobs;
          ++runs[j];
        });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1) << threads << " threads";
  }
}

// Expectation: a job that throws in another thread (out of memory) is rethrown
// to the caller after every thread joined; before, std::terminate ended the
// process ("terminate called without an active exception").
TEST(JobPool, AFailedJobIsRethrownNotTerminated) {
  std::atomic<int> started{0};
  EXPECT_THROW(run_jobs(
                   200, 4, [] { return Count{}; },
                   [&](Count& /*c*/, std::size_t j) {
                     ++started;
                     if (j == 7) throw std::bad_alloc();
                     std::this_thread::sleep_for(std::chrono::milliseconds(1));
                   }),
               std::bad_alloc);
  // Jobs of 1 ms: all 200 would take 50 ms on 4 threads; the failure comes ~2 ms in.
  EXPECT_LT(started.load(), 200) << "the others should stop at their next job";
}

// Expectation: threads that cannot be started (system limits) leave their jobs
// to the threads that did, this one included: every job still runs once.
TEST(JobPool, ThreadsThatCannotStartLeaveTheirShare) {
  int allowed = 1;
  const ThreadStarter flaky = [&allowed](std::function<void()> f) {
    if (allowed-- <= 0) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    }
    return std::thread(std::move(f));
  };
  std::vector<std::atomic<int>> runs(50);
  run_jobs(
      runs.size(), 8, [] { return Count{}; }, [&](Count& /*c*/, std::size_t j) { ++runs[j]; },
      flaky);
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
}

}  // namespace
}  // namespace myriad::sim::campaign
