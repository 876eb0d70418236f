#include "models/scenario/interrupt.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

namespace myriad::models::scenario {
namespace {

constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;

// A slot is free (0), being filled (1) or registered (2); the handler reads
// only registered ones.
std::array<std::atomic<int>, kSlots> file_state{};
std::array<std::array<char, kPathBytes>, kSlots> file_path{};
std::array<std::atomic<pid_t>, kSlots> child_pid{};
volatile sig_atomic_t handling = 0;

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free,
              "the signal handler reads these without locks");

void say(const char* text) {
  const std::size_t n = std::strlen(text);
  // Nothing to do if standard error is gone.
  [[maybe_unused]] const ssize_t ignored = ::write(STDERR_FILENO, text, n);
}

// Ends the children and removes the pending files; true when one was removed.
// Only async-signal-safe calls.
bool abandon() {
  for (auto& pid : child_pid) {
    const pid_t p = pid.load();
    if (p > 0) ::kill(p, SIGTERM);
  }
  bool removed = false;
  for (int i = 0; i < kSlots; ++i) {
    if (file_state[static_cast<std::size_t>(i)].load() == 2) {
      removed = ::unlink(file_path[static_cast<std::size_t>(i)].data()) == 0 || removed;
    }
  }
  return removed;
}

extern "C" void on_interrupt(int signal) {
  if (handling != 0) {  // a second signal: stop at once
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  handling = 1;
  const bool removed = abandon();
  say(signal == SIGINT    ? "\nmyriad: interrupted (SIGINT)"
      : signal == SIGTERM ? "\nmyriad: interrupted (SIGTERM)"
                          : "\nmyriad: interrupted (SIGHUP)");
  say(removed ? "; the outputs not finished were removed, earlier files are kept\n"
              : "; no output was half written\n");
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

}  // namespace

void install_interrupt_cleanup() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal ignored by whoever started us (nohup, a background job) stays ignored.
    if (::sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(signal, &action, nullptr);
  }
}

namespace {

[[noreturn]] void on_terminate() {
  bool memory = false;
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      memory = true;
    } catch (...) {
    }
  }
  abandon();
  say(memory ? "myriad: error: out of memory while working; a smaller job, fewer seeds or "
               "threads, or more memory\n"
             : "myriad: error: internal failure (std::terminate)\n");
  if (memory) ::_exit(1);
  std::abort();
}

}  // namespace

void install_terminate_handler() { std::set_terminate(on_terminate); }

PendingFile::PendingFile(const std::string& path) {
  if (path.empty() || path.size() >= kPathBytes) return;  // none, or too long to register
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    auto& state = file_state[static_cast<std::size_t>(i)];
    if (!state.compare_exchange_strong(expected, 1)) continue;
    auto& buffer = file_path[static_cast<std::size_t>(i)];
    std::memcpy(buffer.data(), path.c_str(), path.size() + 1);
    state.store(2);
    slot_ = i;
    return;
  }
}

PendingFile::~PendingFile() { release(); }

void PendingFile::release() {
  if (slot_ < 0) return;
  file_state[static_cast<std::size_t>(slot_)].store(0);
  slot_ = -1;
}

ChildProcess::ChildProcess(pid_t pid) {
  for (int i = 0; i < kSlots; ++i) {
    pid_t expected = 0;
    if (child_pid[static_cast<std::size_t>(i)].compare_exchange_strong(expected, pid)) {
      slot_ = i;
      return;
    }
  }
}

ChildProcess::~ChildProcess() { release(); }

void ChildProcess::release() {
  if (slot_ < 0) return;
  child_pid[static_cast<std::size_t>(slot_)].store(0);
  slot_ = -1;
}

void end_with_parent(pid_t parent) {
  // The child must not run the parent's cleanup: its files are the parent's.
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::raise(SIGTERM);
}

}  // namespace myriad::models::scenario
