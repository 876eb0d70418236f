#include "kernels/collectives/thread_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "kernels/collectives/checker.hpp"

namespace myriad::kernels::collectives {
namespace {

using Message = std::vector<float>;
using ChannelKey = std::tuple<int, int, int>;  // src, dst, channel

class Mailbox {
 public:
  void put(Message message) {
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(std::move(message));
    }
    ready_.notify_one();
  }

  // The oldest message, once there is one; nothing when the run is stopped first.
  std::optional<Message> take(const std::atomic<bool>& stopped) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty() || stopped.load(); });
    if (queue_.empty()) return std::nullopt;
    Message message = std::move(queue_.front());
    queue_.pop_front();
    return message;
  }

  // Wakes a waiting receiver (the lock orders this after its check of `stopped`).
  void wake() {
    const std::lock_guard lock(mutex_);
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
};

class Run {
 public:
  Run(const Schedule& schedule, std::vector<std::vector<float>>& buffers)
      : schedule_(schedule), buffers_(buffers) {
    // Every mailbox exists before the threads start; they only look them up.
    for (int r = 0; r < schedule.nranks(); ++r) {
      for (const Step& step : schedule.rank_steps(r)) {
        if (step.kind != StepKind::send) continue;
        mailboxes_.try_emplace({r, step.peer, step.channel}, std::make_unique<Mailbox>());
      }
    }
  }

  void run_rank(int rank) noexcept {
    try {
      perform_steps(rank);
    } catch (...) {
      stop(std::current_exception());
    }
  }

  void stop(std::exception_ptr error) {
    {
      const std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::move(error);
    }
    stopped_ = true;
    for (auto& [key, mailbox] : mailboxes_) mailbox->wake();
  }

  void rethrow_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void perform_steps(int rank);
  Mailbox& mailbox(int src, int dst, int channel) {
    const auto found = mailboxes_.find({src, dst, channel});
    if (found == mailboxes_.end()) {
      throw std::logic_error(fmt::format("execute: no sends from rank {} to rank {} on channel {}",
                                         src, dst, channel));
    }
    return *found->second;
  }

  const Schedule& schedule_;
  std::vector<std::vector<float>>& buffers_;
  std::map<ChannelKey, std::unique_ptr<Mailbox>> mailboxes_;
  std::atomic<bool> stopped_ = false;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

void Run::perform_steps(int rank) {
  std::vector<float>& buf = buffers_[static_cast<std::size_t>(rank)];
  const ChunkLayout& layout = schedule_.layout(rank);
  const auto elems = [](std::int64_t bytes) {
    return static_cast<std::ptrdiff_t>(bytes / static_cast<std::int64_t>(sizeof(float)));
  };
  for (const Step& step : schedule_.rank_steps(rank)) {
    if (stopped_) return;
    const auto first = buf.begin() + elems(layout.offset(step.chunk));
    const std::ptrdiff_t n = elems(step.bytes);
    switch (step.kind) {
      case StepKind::send:
        mailbox(rank, step.peer, step.channel).put(Message(first, first + n));
        break;
      case StepKind::copy:
        std::copy_n(buf.begin() + elems(layout.offset(step.src_chunk)), n, first);
        break;
      case StepKind::recv:
      case StepKind::recv_reduce: {
        const std::optional<Message> m = mailbox(step.peer, rank, step.channel).take(stopped_);
        if (!m) return;
        if (static_cast<std::ptrdiff_t>(m->size()) != n) {
          throw std::logic_error(fmt::format(
              "execute: rank {} received {} floats for a {}-float step", rank, m->size(), n));
        }
        if (step.kind == StepKind::recv) {
          std::copy(m->begin(), m->end(), first);
        } else {
          std::transform(m->begin(), m->end(), first, first,
                         [](float in, float own) { return own + in; });
        }
        break;
      }
    }
  }
}

void require_runnable(const Schedule& schedule, const std::vector<std::vector<float>>& buffers) {
  if (schedule.spec.elem_bytes != static_cast<int>(sizeof(float))) {
    throw std::invalid_argument(fmt::format(
        "execute: the schedule's elements are {} bytes; float buffers need {}-byte elements",
        schedule.spec.elem_bytes, sizeof(float)));
  }
  if (buffers.size() != static_cast<std::size_t>(schedule.nranks())) {
    throw std::invalid_argument(
        fmt::format("execute: {} buffers for {} ranks", buffers.size(), schedule.nranks()));
  }
  for (int r = 0; r < schedule.nranks(); ++r) {
    const std::int64_t need = schedule.layout(r).bytes() / static_cast<std::int64_t>(sizeof(float));
    const auto have = static_cast<std::int64_t>(buffers[static_cast<std::size_t>(r)].size());
    if (have != need) {
      throw std::invalid_argument(fmt::format(
          "execute: rank {}'s buffer holds {} floats; the schedule needs {}", r, have, need));
    }
  }
  if (const CheckResult checked = check(schedule); !checked.ok) {
    throw std::invalid_argument("execute: the schedule fails its check: " + checked.message);
  }
}

}  // namespace

void execute(const Schedule& schedule, std::vector<std::vector<float>>& buffers) {
  require_runnable(schedule, buffers);
  Run run(schedule, buffers);
  {
    std::vector<std::jthread> threads;
    threads.reserve(buffers.size());
    try {
      for (int r = 0; r < schedule.nranks(); ++r) {
        threads.emplace_back([&run, r] { run.run_rank(r); });
      }
    } catch (...) {
      run.stop(std::current_exception());  // the ranks already started must not wait forever
    }
  }  // joins every thread
  run.rethrow_error();
}

}  // namespace myriad::kernels::collectives
