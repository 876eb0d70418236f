#include "sim/program/evaluator.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

namespace myriad::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr std::array kStreams = {Stream::compute, Stream::dp, Stream::network};

class Evaluator {
 public:
  explicit Evaluator(const StepProgram& p) : p_(p) {
    const auto stages = static_cast<std::size_t>(p.pp);
    queue_.resize(stages);
    cursor_.assign(stages, {});
    busy_.assign(stages, {-1, -1, -1});
    free_at_.assign(stages, 0.0);
    run_.times.resize(stages);
    run_.timelines.resize(stages);
    remaining_.resize(stages);
    for (std::size_t s = 0; s < stages; ++s) {
      const auto& tasks = p.stages[s].tasks;
      run_.times[s].resize(tasks.size());
      remaining_[s].resize(tasks.size());
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        queue_[s][static_cast<std::size_t>(tasks[i].stream)].push_back(static_cast<int>(i));
        remaining_[s][i] = tasks[i].seconds;
      }
      total_ += tasks.size();
    }
  }

  ProgramRun run() {
    while (done_ < total_) {
      const double pending = start_ready();
      if (done_ == total_) break;
      const double next = std::min(pending, next_completion());
      if (!(next < kNever)) {
        throw std::logic_error("step program: tasks wait on each other forever (a cycle)");
      }
      advance(next);
      ++run_.events;
    }
    for (const auto& stage : run_.times) {
      for (const TaskTimes& t : stage) run_.step_time_s = std::max(run_.step_time_s, t.end_s);
    }
    run_.breakdown = p_.breakdown(run_.timelines, run_.step_time_s);
    return std::move(run_);
  }

 private:
  [[nodiscard]] const StepTask& task(int stage, int i) const {
    return p_.stages[static_cast<std::size_t>(stage)].tasks[static_cast<std::size_t>(i)];
  }
  TaskTimes& times(int stage, int i) {
    return run_.times[static_cast<std::size_t>(stage)][static_cast<std::size_t>(i)];
  }
  [[nodiscard]] double eps() const { return 1e-12 * std::max(1.0, now_); }

  // When the task's dependencies are met: kNever while one has not started (ended).
  double ready_at(const StepTask& t) {
    double at = 0;
    for (const Dependency& d : t.after) {
      const TaskTimes& x = times(d.stage, d.task);
      if (d.on_start) {
        if (x.start_s < 0) return kNever;
        at = std::max(at, x.start_s + d.lag_s);
      } else {
        if (x.end_s < 0) return kNever;
        at = std::max(at, x.end_s);
      }
    }
    return at;
  }

  // The compute rate of a stage's passes: less the share its collectives take.
  [[nodiscard]] double rate(std::size_t stage) const {
    const int beside = busy_[stage][static_cast<std::size_t>(Stream::dp)];
    if (beside >= 0 && task(static_cast<int>(stage), beside).takes_share) {
      return 1 - p_.overlap_share;
    }
    return 1;
  }

  // Starts every task whose stream is free and whose dependencies are met, in
  // stream order; returns the earliest time a waiting one's lag runs out.
  double start_ready() {
    double pending = kNever;
    for (bool started = true; started;) {
      started = false;
      for (int stage = 0; stage < p_.pp; ++stage) {
        const auto s = static_cast<std::size_t>(stage);
        for (const Stream stream : kStreams) {
          const auto k = static_cast<std::size_t>(stream);
          auto& cursor = cursor_[s][k];
          while (cursor < queue_[s][k].size()) {
            if (stream != Stream::network && busy_[s][k] >= 0) break;
            const int i = queue_[s][k][cursor];
            const double at = ready_at(task(stage, i));
            if (at > now_ + eps()) {
              pending = std::min(pending, at);
              break;
            }
            ++cursor;
            start(stage, i);
            started = true;
          }
        }
      }
    }
    return pending;
  }

  void start(int stage, int i) {
    const auto s = static_cast<std::size_t>(stage);
    const StepTask& t = task(stage, i);
    times(stage, i).start_s = now_;
    if (t.stream == Stream::compute) gap(stage, t);
    if (t.stream == Stream::network) {
      network_.push_back({stage, i});
    } else {
      busy_[s][static_cast<std::size_t>(t.stream)] = i;
    }
    if (t.seconds <= 0) finish(stage, i);
  }

  // The compute stream idle before a task: waiting for a pipeline message (its
  // sender and when it sent it), or for data-parallel traffic.
  void gap(int stage, const StepTask& t) {
    const auto s = static_cast<std::size_t>(stage);
    auto& spans = run_.timelines[s];
    if (t.kind == TaskKind::pass) {
      for (const Dependency& d : t.after) {
        if (d.stage == stage || task(d.stage, d.task).kind != TaskKind::send) continue;
        spans.push_back(
            {free_at_[s], now_, Activity::wait, d.stage, times(d.stage, d.task).start_s});
        return;
      }
    }
    if (now_ > free_at_[s] + eps()) {
      spans.push_back(
          {free_at_[s], now_, t.kind == TaskKind::join ? Activity::dp : Activity::wait});
    }
  }

  void finish(int stage, int i) {
    const auto s = static_cast<std::size_t>(stage);
    const StepTask& t = task(stage, i);
    TaskTimes& x = times(stage, i);
    x.end_s = now_;
    ++done_;
    if (t.stream == Stream::network) return;
    busy_[s][static_cast<std::size_t>(t.stream)] = -1;
    if (t.stream != Stream::compute) return;
    free_at_[s] = now_;
    if (t.kind == TaskKind::pass || x.end_s > x.start_s) {
      run_.timelines[s].push_back({x.start_s, x.end_s, t.activity});
    }
  }

  // When the next running task ends, at today's rates.
  double next_completion() {
    double next = kNever;
    for (std::size_t s = 0; s < busy_.size(); ++s) {
      for (const Stream stream : {Stream::compute, Stream::dp}) {
        const int i = busy_[s][static_cast<std::size_t>(stream)];
        if (i >= 0) next = std::min(next, end_of(static_cast<int>(s), i));
      }
    }
    for (const auto& [stage, i] : network_) next = std::min(next, end_of(stage, i));
    return next;
  }

  double end_of(int stage, int i) {
    const StepTask& t = task(stage, i);
    if (t.computes()) {
      return now_ + remaining_[static_cast<std::size_t>(stage)][static_cast<std::size_t>(i)] /
                        rate(static_cast<std::size_t>(stage));
    }
    return times(stage, i).start_s + t.seconds;
  }

  // Moves the clock to `next`: compute progresses at its rate; what ends, ends.
  void advance(double next) {
    std::vector<std::pair<int, int>> ending;
    for (std::size_t s = 0; s < busy_.size(); ++s) {
      for (const Stream stream : {Stream::compute, Stream::dp}) {
        const int i = busy_[s][static_cast<std::size_t>(stream)];
        if (i < 0) continue;
        const int stage = static_cast<int>(s);
        if (end_of(stage, i) <= next + 1e-12 * std::max(1.0, next)) ending.emplace_back(stage, i);
        if (task(stage, i).computes()) {
          remaining_[s][static_cast<std::size_t>(i)] -= rate(s) * (next - now_);
        }
      }
    }
    for (std::size_t k = 0; k < network_.size();) {
      const auto [stage, i] = network_[k];
      if (end_of(stage, i) <= next + 1e-12 * std::max(1.0, next)) {
        ending.emplace_back(stage, i);
        network_[k] = network_.back();
        network_.pop_back();
      } else {
        ++k;
      }
    }
    now_ = next;
    for (const auto& [stage, i] : ending) finish(stage, i);
  }

  const StepProgram& p_;
  // [stage][stream]: the stream's tasks in program order, the next to start, the running one
  std::vector<std::array<std::vector<int>, 3>> queue_;
  std::vector<std::array<std::size_t, 3>> cursor_;
  std::vector<std::array<int, 3>> busy_;
  std::vector<std::pair<int, int>> network_;    // let-go sends in flight
  std::vector<double> free_at_;                 // [stage]: when its compute stream went idle
  std::vector<std::vector<double>> remaining_;  // [stage][task]: compute left, at full rate
  std::size_t total_ = 0;
  std::size_t done_ = 0;
  double now_ = 0;
  ProgramRun run_;
};

}  // namespace

ProgramRun evaluate_program(const StepProgram& p) { return Evaluator(p).run(); }

}  // namespace myriad::sim
