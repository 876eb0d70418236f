// Clean interruption. On SIGINT, SIGTERM or SIGHUP the handler removes every
// file still being written (registered with PendingFile), ends every child
// process still running (registered with ChildProcess), says so on standard
// error, and ends the process by the same signal, so that the shell sees it
// interrupted (exit status 128 + the signal). Outputs are written to a
// temporary file and renamed into place (write_file_atomically), so what an
// interruption leaves is the previous file or the complete new one, never half
// of one. The registries are fixed tables the handler reads without locks or
// allocation (only async-signal-safe calls in it).
#pragma once

#include <sys/types.h>

#include <string>

namespace myriad::models::scenario {

// Installs the handler for SIGINT, SIGTERM and SIGHUP (once per process; the
// `myriad` command calls it first). A second signal while the first is handled
// ends the process at once.
void install_interrupt_cleanup();

// A file being written: removed by the handler until release().
class PendingFile {
 public:
  explicit PendingFile(const std::string& path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  // The file is complete (renamed into place) or removed: no longer the handler's.
  void release();

 private:
  int slot_ = -1;
};

// A child process: sent SIGTERM by the handler until release().
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  void release();

 private:
  int slot_ = -1;
};

// std::terminate after an allocation that failed where nothing could catch it
// (a destructor freeing a JSON tree allocates, and may not throw) says "out of
// memory" and exits 1, as the verbs' own handler does, after removing the
// outputs not finished and ending the children; any other exception reaching
// std::terminate is a bug and aborts. The `myriad` command installs it first.
void install_terminate_handler();

// In a child process just forked: ends it with SIGTERM when its parent ends
// (Linux's parent-death signal), and at once if the parent is already gone.
void end_with_parent(pid_t parent);

}  // namespace myriad::models::scenario
