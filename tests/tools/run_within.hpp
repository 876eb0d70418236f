// Runs the command line in a child process whose address space may grow by a
// given amount at most (RLIMIT_AS, as `ulimit -v` bounds the command), with the
// terminate handler the `myriad` command installs: what a verb does when memory
// runs short, without risking the test process.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "models/scenario/interrupt.hpp"
#include "tests/tools/run_cli.hpp"

namespace myriad::cli::test_support {

struct ChildResult {
  bool signalled = false;  // ended by a signal (a crash): never acceptable
  int code = -1;
  std::string err;
};

// The address space this process maps now, in bytes.
inline std::size_t mapped_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

// False under the sanitizers, which reserve terabytes of shadow memory.
inline bool address_space_limits_work() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

inline ChildResult run_cli_within(const std::vector<std::string>& args, std::size_t extra) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const std::size_t limit = mapped_bytes() + extra;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);  // the terminate handler writes there
    models::scenario::install_terminate_handler();
    const rlimit bound{limit, limit};
    ::setrlimit(RLIMIT_AS, &bound);
    const Result r = run_cli(args);
    const std::string report = std::to_string(r.code) + "\n" + r.err;
    ::_exit(::write(fds[1], report.data(), report.size()) < 0 ? 99 : 0);
  }
  ::close(fds[1]);
  std::string report;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) report.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ChildResult child;
  child.signalled = !WIFEXITED(status);
  child.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const auto newline = report.find('\n');
  if (newline != std::string::npos && report.rfind("myriad: error: out of memory", 0) != 0) {
    child.code = std::stoi(report.substr(0, newline));
    child.err = report.substr(newline + 1);
  } else {
    child.err = report;  // the terminate handler's line, and the exit status it gave
  }
  return child;
}

}  // namespace myriad::cli::test_support
