#include "sim/step/step_in_child.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "models/scenario/interrupt.hpp"
#include "models/scenario/text_file.hpp"

namespace myriad::sim {
namespace {

// What the child writes back, whole, through a pipe.
struct Message {
  int ok = 0;
  double step_time_s = 0;
  double wait_s = 0;
  char error[1024] = {};
};

bool read_all(int fd, void* buffer, std::size_t size) {
  auto* at = static_cast<char*>(buffer);
  while (size > 0) {
    const ssize_t got = read(fd, at, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

ChildStep simulate_step_in_child(const models::scenario::Scenario& s, const DeviceProfile& profile,
                                 const StepOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) return {false, 0, 0, fmt::format("pipe: {}", std::strerror(errno))};
  const pid_t parent = getpid();
  // What this process has buffered for its streams goes out now, once: the
  // child gets a copy of the buffers, and SimGrid flushes them as it ends (the
  // header of `plan --rescore` came out once per re-scored layout).
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, 0, 0, fmt::format("fork: {}", std::strerror(errno))};
  }
  if (pid == 0) {
    models::scenario::end_with_parent(parent);
    close(fds[0]);
    Message m;
    try {
      const StepSimulation sim = simulate_step(s, profile, options);
      m.ok = 1;
      m.step_time_s = sim.step_time_s;
      for (const double w : sim.wait_s) m.wait_s = std::max(m.wait_s, w);
    } catch (const std::exception& e) {
      std::strncpy(m.error, e.what(), sizeof m.error - 1);
    }
    const std::string_view bytes(reinterpret_cast<const char*>(&m), sizeof m);
    _exit(models::scenario::write_all(fds[1], bytes) ? 0 : 1);
  }
  close(fds[1]);
  const models::scenario::ChildProcess child(pid);  // ended by an interruption of this process
  Message m;
  const bool got = read_all(fds[0], &m, sizeof m);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!got) {
    return {false, 0, 0,
            WIFSIGNALED(status)
                ? fmt::format("the step engine's process ended by signal {}", WTERMSIG(status))
                : std::string("the step engine's process ended without a result")};
  }
  return {m.ok != 0, m.step_time_s, m.wait_s, m.error};
}

}  // namespace myriad::sim
