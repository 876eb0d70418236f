// Jobs 0..n-1 on a few threads, each thread with its own state, robust to what
// goes wrong: a job that throws stops the others at their next job and its
// exception is rethrown once every thread has joined (never std::terminate); a
// thread that cannot be started leaves its share to the threads that did start,
// this one included, so the result is the same, only later.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace myriad::sim::campaign {

// Starts a thread running `f` (std::thread by default; tests make it fail).
using ThreadStarter = std::function<std::thread(std::function<void()>)>;

inline std::thread start_thread(std::function<void()> f) { return std::thread(std::move(f)); }

// make_state() once per thread; job(state, j) for every j, each exactly once.
template <class MakeState, class Job>
void run_jobs(std::size_t jobs, int threads, MakeState make_state, Job job,
              const ThreadStarter& start = start_thread) {
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto worker = [&]() noexcept {
    try {
      auto state = make_state();
      for (std::size_t j = next++; j < jobs; j = next++) job(state, j);
    } catch (...) {
      next = jobs;
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  const int wanted = std::clamp(threads, 1, static_cast<int>(std::max<std::size_t>(jobs, 1)));
  std::vector<std::thread> pool;
  try {
    pool.reserve(static_cast<std::size_t>(wanted));
    for (int t = 1; t < wanted; ++t) pool.push_back(start(worker));
  } catch (const std::exception&) {
    // std::system_error (no more threads) or std::bad_alloc: go on with fewer.
  }
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace myriad::sim::campaign
